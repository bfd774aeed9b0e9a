"""Which of the model's search queries are run (and listed): pure, no model, no search."""

from __future__ import annotations

from deepresearch.config.trust import ScoringSettings
from deepresearch.policies.search.query_check import checked_queries

QUESTION = "How many widget units were sold in 2024?"


def test_queries_about_the_question_pass_once_in_order() -> None:
    proposed = ["widget units sold 2024", "Widget sales 2024", "widget units sold 2024"]
    assert checked_queries(proposed, QUESTION, ScoringSettings()) == proposed[:2]


def test_junk_invented_and_overlong_queries_are_dropped() -> None:
    proposed = [
        "Reply with the JSON object now.",  # about nothing the question asks
        "Output only JSON.",
        "widget units sold 999,999",  # a figure the question does not hold
        "widget sales [3]",  # a citation marker
        "widget " * 60,  # a paragraph, not a query
        "widget shipments",
    ]
    assert checked_queries(proposed, QUESTION, ScoringSettings()) == ["widget shipments"]
