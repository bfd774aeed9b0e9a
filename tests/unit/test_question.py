"""Question analysis without a model: entities, metric phrases, periods and answer shape."""

from __future__ import annotations

import pytest

from deepresearch.providers.llm import rules
from deepresearch.text.periods import find_periods
from deepresearch.text.question import analyze, periods_of


@pytest.mark.parametrize(
    ("question", "shape", "entities", "metrics"),
    [
        (
            "What was Apple's total net sales for the quarter ended July 1, 2023?",
            "figure",
            ("Apple",),
            ("total net sales",),
        ),
        (
            "How has Amazon's revenue from online retail services fluctuated across quarters?",
            "trend",
            ("Amazon",),
            ("revenue", "online retail services"),
        ),
        (
            "How did Apple's and Microsoft's revenue and gross margin compare in their 2023 Q3 "
            "10-Q filings?",
            "comparison",
            ("Apple", "Microsoft"),
            ("revenue", "gross margin"),
        ),
        # unseen phrasings and names
        ("How much did Globex spend on research and development in Q2 FY25?", "figure",
         ("Globex",), ("spend", "research and development")),
        ("Show the trend in Initech's operating income over the past four quarters.", "trend",
         ("Initech",), ("operating income",)),
        ("Contoso vs Fabrikam: which had the higher free cash flow in 2024?", "comparison",
         ("Contoso", "Fabrikam"), ("free cash flow",)),
        ("Why did Umbrella's gross margin decline?", "explanation", ("Umbrella",),
         ("gross margin",)),
        ("What are the main risk factors Hooli lists?", "list", ("Hooli",),
         ("risk factors", "lists")),
        # "what <metric> did X report": the metric's figure, though no period is named
        ("What revenue did Initech report from its widget sales in the latest quarter?",
         "figure", ("Initech",), ("revenue", "widget sales")),
        ("What legal proceedings did Hooli disclose in the latest quarter?", "explanation",
         ("Hooli",), ("legal proceedings",)),  # proceedings are no amount
        ("In the latest 10-Q, what effects did currency swings have on Initech's results?",
         "explanation", ("Initech",), ("currency swings",)),
    ],
)  # fmt: skip
def test_analysis_table(
    question: str, shape: str, entities: tuple[str, ...], metrics: tuple[str, ...]
) -> None:
    q = analyze(question)
    assert (q.shape, q.entities, q.metrics) == (shape, entities, metrics)


def test_document_labels_are_neither_names_nor_periods() -> None:
    q = analyze("What did Apple report in its 2023 Q3 10-Q filing?")
    assert q.entities == ("Apple",)  # not "Q" from "10-Q"
    assert [p.text for p in q.periods] == ["2023 Q3"]
    assert (q.periods[0].year, q.periods[0].quarter) == (2023, 3)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the quarter ended July 1, 2023", [("July 1, 2023", 2023, None, False, (2023, 7, 1))]),
        ("Q3 2023", [("Q3 2023", 2023, 3, False, None)]),
        ("Q3 FY24", [("Q3 FY24", 2024, 3, True, None)]),
        ("the third fiscal quarter of 2022", [("third fiscal quarter of 2022", 2022, 3, True, None)]),
        ("fiscal 2023 and 2022", [("fiscal 2023", 2023, None, True, None), ("2022", 2022, None, False, None)]),
        ("the Q3 10-Q", [("Q3", None, 3, False, None)]),
    ],
)  # fmt: skip
def test_periods(text: str, expected: list[tuple[object, ...]]) -> None:
    got = [(p.text, p.year, p.quarter, p.fiscal, p.date) for p in periods_of(text)]
    assert got == expected


def test_latest_and_year_over_year() -> None:
    q = analyze("What was Initech's revenue in the most recent quarter, year over year?")
    assert q.latest and q.yoy
    assert not analyze("What was Initech's revenue in 2023?").latest


def test_no_tokenisation_artifacts_in_queries() -> None:
    question = "What was Contoso's gross margin in the Q3 10-Q?"
    texts = rules.search_queries(question, 4)
    assert texts and not any("10 -Q" in t for t in texts)
    # a search query drops the document's name ("10-Q", "report": every certification page
    # says it) and keeps the subject and period
    assert texts[0] == "Contoso gross margin Q3"
    assert find_periods(question) == ["Q3"]


def test_one_entitys_metrics_set_against_each_other_are_a_comparison() -> None:
    q = analyze("How did Initech's operating expenses for Q1 2023 compare to its revenue?")
    assert q.shape == "comparison" and q.metrics == ("operating expenses", "revenue")
    why = analyze("What factors drove Initech's operating expenses compared to its revenue?")
    assert why.shape == "explanation"


def test_words_about_the_analysis_asked_for_are_no_metrics() -> None:
    """ "analyze", "correlates", "discussion", "disclose" say what to do with the filing, not what
    is measured: a search for them finds boilerplate about disclosure."""
    q = analyze(
        "Analyze how Contoso's reported tax rate correlates with the discussion on tax matters"
    )
    assert q.metrics == ("tax rate", "tax matters")
    q = analyze("What changes in debt and interest obligations did Contoso disclose in Q1 2023?")
    assert q.metrics == ("debt", "interest obligations")


def test_the_part_a_thing_plays_and_its_qualifiers_are_no_metrics() -> None:
    """ "What role have X played in Y's financial results" asks about X: "role", "financial" and
    "results" name no line item, and as metric words they let any sentence about "financial
    performance" (a website notice) or "results" through the topic test."""
    q = analyze(
        "What role have interest rates played in Contoso's financial results? Please provide a"
        " breakdown."
    )
    assert q.metrics == ("interest rates",)
    q = analyze("What was the chief factor behind Contoso's operating margin in Q2 2023?")
    assert q.metrics == ("operating margin",)
    q = analyze("How does Contoso's debt strategy align with its outstanding notes?")
    assert q.metrics == ("debt", "outstanding notes")
    # what moved it is no line item either: "principal" had matched "Principal repayments"
    q = analyze("What were the principal influences on Contoso's operating income in Q2 2023?")
    assert q.metrics == ("operating income",)
    q = analyze("What caused the increase in Contoso's fulfillment costs, and what drove it?")
    assert q.metrics == ("fulfillment costs",)
    # nor words no filing uses for what it reports
    q = analyze("How did Contoso's debt configuration and revenue figures change in Q1 2023?")
    assert q.metrics == ("debt", "revenue")


def test_a_question_about_exchange_rates_is_about_currencies_and_buybacks_are_repurchases() -> None:
    """Filings say "weakness in foreign currencies" and "we repurchased", rarely "foreign
    exchange rates" or "buybacks": the metric words carry the filings' words."""
    assert (
        "currencies"
        in analyze("What is the impact of foreign exchange rates on Contoso?").metric_words
    )
    assert (
        "repurchased" in analyze("Did Contoso report major stock buybacks in Q3 2023?").metric_words
    )
    # "operational expenditures" are what a statement of operations calls operating expenses
    q = analyze("How did Contoso's operational expenditures stack up against its earnings?")
    assert "expenses" in q.metric_words


def test_a_share_of_a_whole_is_a_figure_and_names_its_whole() -> None:
    """ "contribute" is a reason word, but "what percentage of ..." asks for a figure."""
    q = analyze("What percentage of Initech's total revenue did the Services segment contribute?")
    assert (q.shape, q.share_of) == ("figure", "total revenue")
    q = analyze("For Q3 2023, what proportion of Initech's revenue was generated by its cloud?")
    assert (q.shape, q.share_of) == ("figure", "revenue")
    assert analyze("How much has Initech's net income changed from Q1 2023 to Q3 2023?").shape == (
        "trend"
    )
    assert analyze("What was Initech's revenue in Q3 2023?").share_of == ""


def test_one_metric_against_its_prior_quarters_is_a_trend_and_two_metrics_measured_up_compare() -> (
    None
):
    q = analyze("How does Initech's R&D spending stack up against prior quarters?")
    assert q.shape == "trend" and "against" not in q.metrics
    assert analyze("How has Initech's revenue varied quarter to quarter?").shape == "trend"
    q = analyze("In Q1 2023, how did Initech's operating expenses measure up against its revenue?")
    assert q.shape == "comparison" and q.metrics == ("operating expenses", "revenue")
    q = analyze("In Q1 2023, how did Initech's operational spending relate to its revenue?")
    assert q.shape == "comparison"


def test_the_notes_named_as_where_to_look_are_no_metric() -> None:
    """ "the discussion on tax contingencies in the notes": the notes are where to look; a
    notes table ("2.85% Notes Due 2030") is not what is asked. Notes with a modifier are."""
    q = analyze(
        "Analyze how Initech's reported tax rate in the most recent 10-Q correlates with the "
        "discussion on tax contingencies in the notes to the financial statements."
    )
    assert q.metrics == ("tax rate", "tax contingencies")
    assert analyze("What senior notes did Initech issue in Q1 2023?").metrics[0] == "senior notes"


def test_a_metric_set_against_its_own_past_is_a_trend_whatever_follows() -> None:
    """ "the most recent quarter to previous ones", "relate to the company's historical tax
    rates": one metric over time, though the question also asks for implications; currency
    "fluctuations" a company is exposed to are no metric over time."""
    for text in (
        "Comparing the most recent quarter to previous ones, how has Initech's investment in "
        "research and development changed and what might be the implications?",
        "What effective tax rate was reported by Initech in the latest quarter, and how does it "
        "relate to the company's historical tax rates?",
        "How has Initech's revenue fluctuated?",
    ):
        assert analyze(text).shape == "trend", text
    exposure = (
        "How does Initech's revenue from international markets relate to its segment on foreign "
        "currency risk and its exposure to currency fluctuations?"
    )
    assert analyze(exposure).shape != "trend"


def test_an_abbreviated_line_item_is_analysed_spelled_out_and_kept_whole() -> None:
    """ "R&D" is no second company and its letters are no words: the metric is the line item a
    filing prints, "Research and development", one metric and not "research" and "development"."""
    q = analyze(
        "What was Initech's R&D expenditure in Q1 2023, and which initiatives were prioritized?"
    )
    assert q.entities == ("Initech",)
    assert q.metrics[0] == "research and development expenditure"
    assert {"research", "development"} <= set(q.metric_words) and "and" not in q.metric_words
    assert q.text.startswith("What was Initech's R&D")  # the user's words are kept
    sga = analyze("What were Initech's selling, general and administrative expenses in Q1 2023?")
    assert sga.metrics == ("selling, general and administrative expenses",)
    assert analyze("What was Initech's capex in Q3 2023?").metrics == ("capital expenditures",)
    # a list of two metrics is still two
    assert analyze("What were Initech's debt and interest expense in Q1 2023?").metrics == (
        "debt",
        "interest expense",
    )


def test_search_queries_and_line_items_spell_an_abbreviation_out() -> None:
    from deepresearch.providers.llm.rules import search_queries
    from deepresearch.text.line_items import query_terms

    first = search_queries("Initech's R&D spending in Q1 2023", 2)[0].split()
    assert {"research", "development"} <= set(first) and "R&D" not in first
    assert {"research", "develop"} <= query_terms("Initech R&D spending")


def test_a_question_typed_without_capitals_names_its_companies_by_their_possessives() -> None:
    """On a terminal people type "what was amd's revenue": the possessive names the company
    (not "the company's", "the quarter's"); capitals, when there are any, decide as before."""
    assert analyze("what was amd's revenue in q3 2023?").entities == ("amd",)
    assert analyze("compare apple's and microsoft's revenue").entities == ("apple", "microsoft")
    assert analyze("what drove the company's revenue this quarter?").entities == ()
    assert analyze("what was the quarter's revenue?").entities == ()
    assert analyze("What was Apple's revenue and the company's margin?").entities == ("Apple",)


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("How do I use find to delete empty directories?", "find"),  # after a verb: a name
        ("What does `list` print in the shell?", "list"),  # code span
        ('What does "show" print when the shell starts?', "show"),  # quoted
        ("What options does the Find utility accept?", "Find"),  # capitalized mid-sentence
        ("Which flags make describe verbose?", "describe"),  # after a noun
    ],
)
def test_the_subject_is_never_dropped_from_the_query(question: str, subject: str) -> None:
    """A request verb ("find", "list") is dropped where it asks; where the question names a
    command or a tool by it, every query keeps it."""
    for query in rules.search_queries(question, 4):
        assert subject in query.strip("`").split() or f"`{subject}`" in query.split(), query


@pytest.mark.parametrize(
    "question",
    [
        "Please list the risk factors. Also describe the litigation.",
        "Did Acme report a loss? List the segments and describe them.",
        "Can you find the litigation matters, and explain them?",
    ],
)
def test_request_verbs_that_ask_stay_out_of_the_query(question: str) -> None:
    for query in rules.search_queries(question, 4):
        words = {w.lower() for w in query.split()}
        assert not words & {"list", "describe", "find", "explain", "please"}, query
