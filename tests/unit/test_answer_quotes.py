"""What the Answer quotes is whole, and said once: no sentence torn at a page's top or foot,
no sentence of another period or sub-question's section repeated."""

from __future__ import annotations

from test_answer_shapes import _verified_answer

from deepresearch.llm_messages import DraftFinding
from deepresearch.providers.llm.answer_quotes import quotable
from deepresearch.text.boilerplate import chart_text, note_to_entry, points_elsewhere
from deepresearch.text.question import analyze


def test_an_answer_quote_starts_at_a_whole_sentence() -> None:
    """A finding whose first words end a sentence begun on the page before ("cost of revenue
    and operating expenses, respectively, which ...") is quoted from its first whole sentence;
    "iPad net sales ..." is a whole sentence."""
    torn = (
        "cost of revenue and operating expenses, respectively, which resulted in an increase. "
        "Operating expenses increased 12% driven by compensation costs of $745 million."
    )
    ipad = "iPad net sales decreased during the quarter due to lower net sales of iPad Air."
    answer, failed = _verified_answer(
        "What drove the change in Initech's operating expenses?",
        [(torn, "doc:q3.pdf#page=27"), (ipad, "doc:q3.pdf#page=20")],
    )
    assert failed == []
    assert "Operating expenses increased 12%" in answer and "respectively" not in answer, answer
    assert not any(p[0].islower() and not p.startswith("iPad") for p in answer.split("\n\n"))


def test_a_quote_opening_with_the_end_of_a_date_starts_at_its_next_sentence() -> None:
    """ "2022, the Company expects 63% ..." is the end of "As of September 24, 2022, ..." begun
    on the page before: the reader is not told as of when; "2,000 employees left" is whole."""
    from deepresearch.providers.llm.answer_quotes import whole_sentences

    torn = (
        "2022, the Company expects 63% of total deferred revenue to be realized in less than a "
        "year. The Company had total deferred revenue of $12.2 billion."
    )
    assert whole_sentences(torn) == "The Company had total deferred revenue of $12.2 billion."
    whole = "2,000 employees left the Company in the quarter. Attrition was 4%."
    assert whole_sentences(whole) == whole
    # a bracket closed that the page never opened: the sentence began on the page before
    torn = (
        "Wash.) in January 2023, and the Attorney General's lawsuit in March 2023. In March "
        "2022, the court dismissed the lawsuit in its entirety."
    )
    assert (
        whole_sentences(torn) == "In March 2022, the court dismissed the lawsuit in its entirety."
    )
    for whole in (
        "1) Revenue grew 5% in the quarter. Costs fell.",
        "(1) Includes product sales of $3 billion. Costs fell.",
        "Net sales (in millions) rose 5%. Costs fell.",
    ):
        assert whole_sentences(whole) == whole, whole


def test_an_answer_quote_ends_at_a_whole_sentence() -> None:
    """A finding torn at the page's foot ("We funded the acquisitions of") is quoted up to its
    last whole sentence, and a lead-in to a list ("Key changes were:") is no sentence either."""
    torn = (
        "We made cash payments related to acquisition activity of $885 million in Q3 2023. "
        "We funded the acquisitions of"
    )
    answer, failed = _verified_answer(
        "Did Initech report any significant acquisitions?", [(torn, "doc:q3.pdf#page=22")]
    )
    assert failed == []
    assert "$885 million in Q3 2023." in answer and "acquisitions of" not in answer, answer


def test_a_sentence_said_again_in_another_section_is_quoted_once_but_another_periods_is_news() -> (
    None
):
    q3 = (
        "The increase in fulfillment costs in Q3 2022 is primarily due to increased investments "
        "in our fulfillment network and variable costs of inventory levels."
    )
    nine = (
        "The increase in fulfillment costs for the nine months ended September 30, 2022 is "
        "primarily due to increased investments in our fulfillment network and variable costs "
        "of inventory levels."
    )
    rate_q3 = "Our effective tax rate was 19% for the three months ended September 30, 2022."
    rate_q4 = "Our effective tax rate was 18% for the three months ended September 30, 2023."
    answer, _ = _verified_answer(
        "What drove Initech's fulfillment costs and inventory levels?",
        [(q3, "doc:q3.pdf#page=20"), (nine, "doc:q3.pdf#page=21")],
    )
    assert answer.count("The increase in fulfillment costs") == 1, answer
    answer, _ = _verified_answer(
        "What effective tax rate has Initech reported in these quarters?",
        [(rate_q3, "doc:q3.pdf#page=12"), (rate_q4, "doc:q4.pdf#page=12")],
    )
    assert "19%" in answer and "18%" in answer, answer


def test_a_finding_that_opens_with_a_sentence_already_quoted_is_not_quoted_again() -> None:
    """Deep mode's sections each hold the paragraph of another period: "The increase in
    fulfillment costs for the nine months ..." opens as the quarter's sentence did, then states
    an amount of its own. Its opening is said already: it is not quoted, and its place goes to
    the next finding (its amount stays among the findings)."""
    q3 = (
        "The increase in fulfillment costs in Q3 2022 is primarily due to increased investments "
        "in our fulfillment network and variable costs corresponding with inventory levels."
    )
    nine = (
        "The increase in fulfillment costs for the nine months ended September 30, 2022 is "
        "primarily due to increased investments in our fulfillment network and variable costs "
        "corresponding with inventory levels. Changes in foreign exchange rates reduced "
        "fulfillment costs by $810 million for Q3 2022."
    )
    allowance = "The inventory valuation allowance was $2.3 billion as of September 30, 2022."
    ranked = [(True, DraftFinding(text=t, sources=(1,))) for t in (q3, nine, allowance)]
    fit = quotable(ranked, analyze("What drove Initech's fulfillment costs and inventory levels?"))
    assert list(fit) == [q3, allowance]


def test_a_composed_figure_is_quoted_with_the_best_prose_of_its_filing_beyond_the_top_three() -> (
    None
):
    """Rows outrank the commercial-paper sentence; the Answer's figure line still comes with
    it: prose is chosen among every finding fit to quote, not only the three best."""
    from deepresearch.text.tables import TableRow, format_row

    def line(label: str, now: str, before: str) -> str:
        cells = (
            ("Three Months Ended December 31, 2022", now),
            ("Three Months Ended December 25, 2021", before),
        )
        return format_row(TableRow("Other income/(expense), net", "in millions", label, cells))

    url = "doc:q1.pdf#page=14"
    found = [
        (line("Interest expense", "(1,003)", "(694)"), url),
        (line("Interest and dividend income", "868", "650"), url),
        (line("Interest and other income/(expense), net", "(393)", "(247)"), url),
        (line("Other income/(expense) - interest", "(10)", "(3)"), url),
        (
            "The Company issues unsecured short-term promissory notes pursuant to a commercial "
            "paper program. As of December 31, 2022, the Company had $1.7 billion of Commercial "
            "Paper outstanding.",
            url,
        ),
    ]
    answer, failed = _verified_answer(
        "What changes in debt structure or interest expenses did Initech disclose in the Q1 2023 10-Q?",
        found,
    )
    assert failed == []
    assert "(1,003)" in answer and "$1.7 billion of Commercial Paper" in answer, answer


def test_an_answer_never_quotes_a_cross_reference() -> None:
    """ "For additional information, see Item 8 of Part II ..." tells a reader where to look, not
    what is there: the Answer quotes the paragraph's news without it, and a finding that only
    points elsewhere not at all (the evidence keeps both: the paragraph can hold figures)."""
    pointer = (
        "For additional information, see Item 8 of Part II, “Financial Statements — Note 1 — "
        "Accounting Policies” of our 2022 Annual Report on Form 10-K."
    )
    lawsuits = (
        "Refer to Note 14 of the Notes to Financial Statements for information regarding legal "
        "proceedings. In May 2023, Hooli filed a complaint alleging that our search products "
        "infringe four patents and seeking damages."
    )
    answer, failed = _verified_answer(
        "What legal proceedings or accounting policies did Initech disclose?",
        [(pointer, "doc:q2.pdf#page=9"), (lawsuits, "doc:q2.pdf#page=31")],
    )
    assert failed == []
    assert "Hooli filed a complaint" in answer, answer
    assert "see Item 8" not in answer and "Refer to Note 14" not in answer, answer


def test_a_sentence_that_points_elsewhere_with_a_figure_or_late_is_no_cross_reference() -> None:
    assert points_elsewhere("Refer to Part I, Item 1A of this Form 10-Q for a discussion.")
    assert points_elsewhere(
        "These risks, as well as other risks that could cause our actual results to differ, are"
        " described in greater detail in Item 1A of Part II, “Risk Factors.”"
    )
    assert points_elsewhere(
        "Note 1, “Summary of Significant Accounting Policies” of the Notes in Part I, Item 1 of"
        " this Form 10-Q describe the significant accounting policies and methods used."
    )
    assert points_elsewhere(
        "Information relating to market risk is set forth below and in Item 2 of Part I."
    )
    assert not points_elsewhere(  # it tells something first
        'Our two operating segments are "Compute" and "Graphics," as described in Note 15.'
    )
    assert not points_elsewhere("Revenue grew 5% to $1.2 billion (see Note 4).")
    assert not points_elsewhere(
        "The decrease in gross margin was driven by lower average selling prices across every"
        " product line and by higher costs of components, as we describe in Note 6."
    )


def test_an_explanation_quotes_the_stated_effect_over_a_footnote_defining_it() -> None:
    """ "What is the impact of foreign exchange rates on Initech's financial performance?": the
    sentence that states the effect's amount answers; the footnote that defines the effect
    (repeating "foreign exchange rates" twice) only talks of it."""
    footnote = (
        "(1) Represents the change in reported amounts resulting from changes in foreign "
        "exchange rates from those in effect in the comparable prior year period, as if foreign "
        "exchange rates had not changed."
    )
    effect = "Changes in foreign exchange rates reduced net sales by $2.4 billion for Q1 2023."
    answer, failed = _verified_answer(
        "What is the impact of foreign exchange rates on Initech's financial performance?",
        [(footnote, "doc:q1.pdf#page=25"), (effect, "doc:q1.pdf#page=24")],
    )
    assert failed == []
    assert answer.split("\n\n")[0].startswith("Changes in foreign exchange rates reduced"), answer


def test_a_charts_text_is_never_quoted() -> None:
    """A chart's labels read as prose ("Operations $B Capital Expenditures $B Dividends $B $5.9
    $(1.8)") hold figures no reader can place: the Answer quotes the sentence before them, not
    them; a table's caption with its unit line is prose and stays quotable."""
    assert chart_text("Cash from (used for) Operations $B Capital Expenditures $B $5.9 $(1.8).")
    assert chart_text("(In Millions) $ 6,018 Q3 2023 Gross Margin (467) Lower product margin")
    assert not chart_text("The following table shows our debt as of June 25, 2022 (in millions):")
    assert not chart_text("Total net sales decreased 5% or $6.8 billion during the quarter.")
    debt = (
        "Substantially all of our investments in debt instruments were in investment-grade "
        "securities. Cash from (used for) Operations $B Capital Expenditures $B Dividends $B "
        "$5.9 $(1.8)."
    )
    chart = "(In Millions) $ 6,018 Q3 2023 Gross Margin (467) Lower product margin (304) Other"
    answer, failed = _verified_answer(
        "How did Initech manage its debt instruments?",
        [(debt, "doc:q1.pdf#page=30"), (chart, "doc:q1.pdf#page=31")],
    )
    assert failed == []
    assert "investment-grade securities" in answer and "$B" not in answer, answer
    assert "6,018" not in answer, answer


def test_a_tables_footnote_defining_an_entry_is_never_quoted() -> None:
    """ "(1) Represents the change in reported amounts resulting from changes in foreign exchange
    rates" defines a column the Answer's reader does not see; a footnote stating a fact ("(1) On
    April 28, 2022, the Board authorized ...") is quotable."""
    note = (
        "(1) Represents the change in reported amounts resulting from changes in foreign exchange "
        "rates from those in effect in the comparable prior year period for operating results."
    )
    assert note_to_entry(note)
    assert not note_to_entry("(1) On April 28, 2022, the Board authorized $90 billion more.")
    effect = (
        "Net sales decreased 3% or $2.4 billion due to the weakness in foreign currencies "
        "relative to the U.S. dollar."
    )
    answer, failed = _verified_answer(
        "What is the impact of foreign exchange rates on Initech's financial performance?",
        [(note, "doc:q3.pdf#page=8"), (effect, "doc:q3.pdf#page=7")],
    )
    assert failed == []
    assert "$2.4 billion" in answer and "Represents" not in answer, answer


def test_standing_language_every_filing_repeats_gives_way_to_what_the_filing_reports() -> None:
    """ "The Company is involved from time to time in claims ..." opens the legal note of each
    quarter's filing in the same words: it is no news of either. The suit the filing names is,
    though its sentence shares fewer words with the question."""
    standing = (
        "The Company is involved from time to time in claims, proceedings, and litigation, "
        "including legal proceedings described in prior reports, and the outcomes of legal "
        "proceedings could be material."
    )
    suit = "In May 2023, Dialect, LLC filed a complaint against Initech seeking damages."
    answer, failed = _verified_answer(
        "What legal proceedings and litigation claims did Initech disclose?",
        [
            (standing, "doc:q1.pdf#page=12"),
            (standing.replace("prior reports", "our prior reports"), "doc:q2.pdf#page=14"),
            (suit, "doc:q2.pdf#page=14"),
        ],
    )
    assert failed == []
    assert answer.startswith("In May 2023, Dialect"), answer
