"""A follow-up question's subject: borrowed from the earlier question when it points back, kept
when it names its own. Grammar only: the names below are invented and appear in no word list."""

from __future__ import annotations

import pytest

from deepresearch.policies.follow_up.subject import (
    in_context,
    read,
    subject_phrase,
    thread_question,
)
from deepresearch.providers.llm.rules import search_queries

EARLIER = "What was Apple's total net sales for the quarter ended July 1, 2023?"
INVENTED = "What was Zorvex Dynamics's research spending in fiscal 2022?"


def test_the_issue_example_is_searched_with_who_what_and_when() -> None:
    follow = "How did that compare with the same quarter a year earlier?"
    question = in_context(follow, EARLIER)
    assert question.startswith(follow)  # the user's words first
    assert "Apple's total net sales" in question and "quarter ended July 1, 2023" in question
    query = search_queries(question, 3)[0]
    assert "Apple" in query and "net sales" in query and "July 1, 2023" in query
    assert "Apple" not in search_queries(follow, 3)[0]  # what the search got before


@pytest.mark.parametrize("earlier", [EARLIER, INVENTED])
@pytest.mark.parametrize(
    "follow",
    [
        "How did that compare with the year before?",
        "Why did it change?",
        "And the prior year?",
        "Same for the next quarter?",
        "What drove this?",
    ],
)
def test_a_question_that_points_back_borrows_the_subject(earlier: str, follow: str) -> None:
    question = in_context(follow, earlier)
    assert question.startswith(follow) and question != follow
    assert subject_phrase(earlier).split("'s")[0] in question


@pytest.mark.parametrize(
    "follow",
    [
        "Which plant makes gadgets?",
        "What was Microsoft's revenue in Q2 2023?",
        "Which companies reported revenue that grew in 2023?",  # "that" starts a clause here
        "How many employees did Quillon Labs have at the end of 2021?",
    ],
)
def test_a_question_that_stands_alone_is_left_as_it_is(follow: str) -> None:
    assert not read(follow).points_back
    assert in_context(follow, EARLIER) == follow


def test_own_names_and_periods_replace_the_earlier_ones() -> None:
    other = in_context("What about Quillon Labs?", INVENTED)
    assert other == "What about Quillon Labs? (about research spending in fiscal 2022)"
    year = in_context("And in 2020?", INVENTED)
    assert year == "And in 2020? (about Zorvex Dynamics's research spending)"
    # A personal pronoun points at who (and when): the metric asked is its own.
    its = in_context("What were its operating expenses?", INVENTED)
    assert its == "What were its operating expenses? (about Zorvex Dynamics, fiscal 2022)"
    assert in_context("What were its operating expenses in 2020?", INVENTED).endswith(
        "(about Zorvex Dynamics)"
    )


def test_a_sentence_initial_common_word_is_not_taken_for_a_name() -> None:
    assert read("Revenue in the prior year?").names == ()
    assert read("Zorvex's margin then?").names == ("Zorvex's",)
    assert read("AAPL margin then?").names == ("AAPL",)


def test_the_thread_keeps_its_first_subject() -> None:
    resolved = thread_question([INVENTED, "How did that change the year after?", "And then?"])
    assert resolved.startswith("And then?")
    assert "Zorvex Dynamics's research spending in fiscal 2022" in resolved
    assert thread_question([INVENTED]) == INVENTED
    assert thread_question([]) == ""
    assert in_context("How did that change?", "") == "How did that change?"
