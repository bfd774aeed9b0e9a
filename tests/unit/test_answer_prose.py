"""The Answer around a composed figure: which quoted sentences follow it, which of two rows naming
the item states the asked quarter, a trend told in sentences, and what a model writer is handed."""

from __future__ import annotations

from test_answer_shapes import PROSE, Q3, _task

from deepresearch.domains.filings.compose import compose
from deepresearch.providers.llm.evidence import evidence_units
from deepresearch.providers.llm.extractive import answer_write
from deepresearch.text.tables import TableRow, format_row


def test_prose_that_states_a_figure_leads_a_non_explanation_answer() -> None:
    a, b = "doc:a.pdf#page=2", "doc:b.pdf#page=9"
    talk = "The report covers share repurchases and dividends."  # more question words, no figure
    figure = "We repurchased 46.2 million shares for $6.0 billion in share repurchases."
    other = "Dividends declared were unchanged from the prior year."
    task = _task(
        "Did Initech report any share repurchases in its 10-Q, and what was their total amount?",
        [(talk, a), (figure, b), (other, a)],
    )
    assert answer_write(task).answer.startswith(figure)


def test_a_rate_told_as_a_percentage_is_quoted_for_the_rate_asked() -> None:
    """A filer can state its effective tax rate as "income tax as a percentage of income before
    income tax": the filer's word for a rate counts in the Answer's ranking, so that sentence
    is quoted, not only talk of the rate that states other figures."""
    url = "doc:q3.pdf#page=31"
    income = format_row(
        TableRow(
            "Statements of income",
            "in millions",
            "Income before income tax",
            (("Three Months Ended October 29, 2023", "10,522"), ("October 30, 2022", "613")),
        )
    )
    lower = (
        "Our effective tax rates for the first nine months of fiscal years 2024 and 2023 were "
        "lower than the U.S. federal statutory rate of 21% due to tax benefits from the research "
        "tax credit. Our effective tax rate for the first nine months of fiscal year 2024 was "
        "additionally benefited by an audit resolution."
    )
    benefit = (
        "This benefit consists of a reduction in unrecognized tax benefits of $236 million and "
        "related accrued interest of $17 million. The effective tax rate increased due to a "
        "decreased impact of tax benefits relative to the increase in income before income tax."
    )
    percentage = (
        "Income tax as a percentage of income before income tax was an expense of 12.2% and 11.3% "
        "for the third quarter and first nine months of fiscal year 2024, respectively. We "
        "recognized a net benefit of $145 million related to the audit resolution."
    )
    cash = (
        "Except for approximately $1.38 billion of cash held outside the U.S. for which we have "
        "not accrued any related foreign or state taxes, all of our cash is available for use "
        "in the U.S. without incurring additional U.S. federal income taxes."
    )
    task = _task(
        "What effective tax rate was reported by Initech in the latest quarter, and how does it"
        " relate to the company's historical tax rates?",
        [(income, url), (lower, url), (benefit, url), (percentage, url), (cash, url)],
    )
    assert "12.2%" in answer_write(task).answer


def test_prose_after_a_composed_line_speaks_of_what_was_asked() -> None:
    """Prose of the row's filing that shares only the question's framing ("changes") and not
    its metric does not follow the figure; prose about the metric does."""
    debt = format_row(TableRow("Debt", "in millions", "Total debt", (("Dec 31, 2022", "48,116"),)))
    other = "Changes in foreign exchange rates changed the value of foreign funds by $13.3 billion."
    same = "Changes in debt include $1.2 billion of notes issued in the quarter."
    question = "What changes in Initech's debt did its 10-Q disclose?"
    for prose, follows in ((other, False), (same, True)):
        task = _task(question, [(debt, "doc:q.pdf#page=4"), (prose, "doc:q.pdf#page=9")])
        paragraphs = answer_write(task).answer.split("\n\n")
        assert paragraphs[0].startswith("Initech: Total debt")
        assert (prose in paragraphs) is follows, paragraphs


def test_prose_after_a_composed_line_comes_only_from_the_cited_rows_filing() -> None:
    same = "Total net sales for the quarter ended July 1, 2023 reflected lower iPhone sales."
    other = "Total net sales for the quarter ended July 1, 2023 rose on strong cloud demand."
    task = _task(
        "What was Initech's total net sales for the quarter ended July 1, 2023?",
        [(Q3, "doc:q3.pdf#page=4"), (other, "doc:globex.pdf#page=2"), (same, "doc:q3.pdf#page=9")],
    )
    paragraphs = answer_write(task).answer.split("\n\n")
    assert paragraphs[0].startswith("Initech: Total net sales")
    assert same in paragraphs and other not in paragraphs


def test_the_asked_quarters_balance_beats_an_older_row_of_the_same_item() -> None:
    """ "Inventories" of a divested business a year before, against the total the quarter ended
    with: the row whose column falls in the asked quarter answers, "Total" costs it nothing."""
    older = format_row(
        TableRow(
            "Carrying amounts of assets sold",
            "in millions",
            "Inventories",
            (("Dec 29, 2021", "941"),),
        )
    )
    total = format_row(
        TableRow(
            "Inventories",
            "in millions",
            "Total inventories",
            (("Oct 1, 2022", "12,831"), ("Dec 25, 2021", "10,776")),
        )
    )
    composed = compose(
        "What were Initech's inventories in Q3 2022?", [(older, (1,), 0), (total, (2,), 0)]
    )
    assert composed is not None and "12,831" in composed[0] and "941" not in composed[0]


def test_a_row_under_a_heading_that_names_the_metric_is_not_that_metric() -> None:
    """ "Cash flows from operating activities - Net income" is net income: the heading qualifies
    the row, it does not name it. "Operating cash flow" is the filing's "Net cash provided by
    operating activities" (``SYNONYMS``: cash flows are reported as activities)."""
    cells = (("Nine Months Ended October 30, 2022", "2,954"),)
    net_income = format_row(
        TableRow(
            "Statements of cash flows",
            "in millions",
            "Cash flows from operating activities - Net income",
            cells,
        )
    )
    provided = format_row(
        TableRow(
            "Statements of cash flows",
            "in millions",
            "Net cash provided by operating activities",
            (("Nine Months Ended October 30, 2022", "3,393"),),
        )
    )
    composed = compose(
        "What was Initech's operating cash flow in Q3 2022?",
        [(net_income, (1,), 0), (provided, (1,), 0)],
    )
    assert composed is not None and "3,393" in composed[0] and "2,954" not in composed[0]


def test_prose_of_the_cited_rows_filing_follows_the_figure_though_it_names_no_period() -> None:
    fx = "Weakness in foreign currencies had an unfavorable impact on total net sales of 2.4 billion."
    task = _task(
        "What was Initech's total net sales in Q3 2023, and how did currencies affect it?",
        [(Q3, "doc:q3.pdf#page=4"), (fx, "doc:q3.pdf#page=17")],
    )
    paragraphs = answer_write(task).answer.split("\n\n")
    assert paragraphs[0].startswith("Initech: Total net sales") and fx in paragraphs


def test_a_sentence_stating_the_rate_makes_the_answer_beside_sentences_about_its_change() -> None:
    """No row to compose: a quoted sentence that states the figure makes the Answer, though the
    sentences about why the rate changed repeat more of the question's words."""
    query = (
        "What effective tax rate has Initech reported and how does it differ from period to period?"
    )
    talk = [
        "The increase in our effective tax rate was primarily due to a tax benefit.",
        "The decrease in our effective tax rate was primarily due to tax law changes, as reported.",
    ]
    rate = "Our effective tax rate was 18% and 19% for the three months ended September 30, 2023."
    found = [
        *((t, f"doc:q.pdf#page={i}") for i, t in enumerate(talk, 2)),
        (rate, "doc:q.pdf#page=9"),
    ]
    assert rate in answer_write(_task(query, found)).answer


def test_a_trend_told_in_sentences_gives_each_filings_figure() -> None:
    """No row to tabulate: each filing's sentence stating the rate makes the Answer, not the
    three sentences of one filing that repeat the question's words most."""
    query = "What effective tax rate has Initech reported in these quarters and how does it differ?"
    talk = [
        "The increase in our effective tax rate over the prior year was due to a tax benefit.",
        "The decrease in our effective tax rate differs from the prior year due to tax law.",
        "Our effective tax rate differs from the statutory rate in these quarters.",
    ]
    rates = [
        (
            "Our effective tax rate was 18% and 19% for the three months ended September 30, 2023.",
            "q3",
        ),
        ("Our effective tax rate was 19% and 17% for the three months ended March 31, 2023.", "q1"),
        ("Our effective tax rate was 21% and 15% for the three months ended June 30, 2023.", "q2"),
    ]
    found = [*((t, "doc:q3.pdf#page=9") for t in talk)]
    found += [(t, f"doc:{d}.pdf#page=20") for t, d in rates]
    answer = answer_write(_task(query, found)).answer
    assert all(t in answer for t, _ in rates), answer


def test_a_model_writer_is_told_the_shape_and_how_to_read_a_row() -> None:
    from deepresearch.prompts import render_task

    task = _task("How have Initech's total net sales changed over time?", [(Q3, "doc:q3.pdf")])
    system, user = render_task(task, {"type": "object"})
    assert "Markdown table with one line per period, in time order" in system
    assert "is a table row" in system and Q3 in user
    figure = _task("What was Initech's total net sales in Q3 2023?", [(Q3, "doc:q3.pdf")])
    assert "one figure" in render_task(figure, {"type": "object"})[0]


def test_a_model_writer_is_handed_the_composed_draft_inside_the_untrusted_block() -> None:
    from deepresearch.prompts import render_task

    task = _task(
        "What was Initech's total net sales for the quarter ended July 1, 2023?",
        [(PROSE, "doc:q3.pdf"), (Q3, "doc:q3.pdf")],
    )
    user = render_task(task, {"type": "object"})[1]
    draft = user.split("Draft from table rows:", 1)[1]
    line = "Initech: Total net sales (in millions), Three Months Ended July 1, 2023: 81,797 [1]."
    assert line in draft and draft.strip().startswith("<<<SOURCE")
    none = render_task(_task("Why did Initech's sales fall?", [(PROSE, "doc:q3.pdf")]), {})[1]
    assert "(none: no table row fits the question)" in none


def test_a_share_is_answered_with_the_part_and_the_whole() -> None:
    def row(label: str, value: str) -> str:
        cells = (
            ("Three Months Ended July 1, 2023", value),
            ("Three Months Ended June 25, 2022", "1"),
        )
        return format_row(TableRow("Statements of operations", "in millions", label, cells))

    findings = [
        (row("Net sales - Products", "60,584"), (1,), 0),
        (row("Gross margin percentage - Services", "70.5 %"), (1,), 0),
        (row("Net sales - Services", "21,213"), (1,), 0),
        (row("Total net sales", "81,797"), (1,), 0),
    ]
    composed = compose(
        "What percentage of Initech's total revenue did the Services segment contribute in Q3 2023?",
        findings,
        titles={1: "2023 Q3 Initech.pdf"},
    )
    assert composed is not None
    part, whole = composed[0].split("\n\n")
    assert "Net sales - Services" in part and "21,213" in part
    assert "Total net sales" in whole and "81,797" in whole


def test_a_figure_restated_by_another_table_of_its_filing_beats_a_notes_part() -> None:
    """The statements' "Research and development 1,875" is restated in the discussion of
    operating expenses; the stock-compensation note's "Research and development 524" is not."""
    cells = "Three Months Ended April 30, 2023 = {}; Three Months Ended May 1, 2022 = {}"
    note = "Stock-based compensation expense was as follows (in millions)"
    findings = [
        (f"{note}: Research and development: {cells.format('524', '384')}", (1,), 0),
        (
            "Statements of income (in millions): Operating expenses - Research and development: "
            + cells.format("1,875", "1,618"),
            (2,),
            0,
        ),
        (
            "Operating Expenses ($ in millions): Research and development expenses: "
            + cells.format("1,875", "1,618"),
            (3,),
            0,
        ),
    ]
    titles = dict.fromkeys((1, 2, 3), "2023 Q1 Initech.pdf")
    composed = compose(
        "How much did Initech spend on research and development in Q1 2023?",
        findings,
        titles=titles,
    )
    assert composed is not None and "1,875" in composed[0] and "524" not in composed[0]


def test_two_things_compared_over_the_quarters_get_a_trend_table_each() -> None:
    """ "How has revenue from Windows or Surface devices varied quarter to quarter?" names two
    things of one company over time: a period -> value table for each, not one line each."""
    title = "Revenue by product (in millions)"

    def row(label: str, date: str, value: str, n: int) -> tuple[str, tuple[int, ...], int]:
        return (f"{title}: {label}: Three Months Ended {date} = {value}", (n,), 0)

    findings = [
        row("Windows", "September 30, 2022", "5,313", 1),
        row("Windows", "September 30, 2023", "5,567", 2),
        row("Devices", "September 30, 2022", "1,448", 1),
        row("Devices", "September 30, 2023", "1,125", 2),
    ]
    composed = compose(
        "How has Initech's revenue from Windows or Surface devices varied quarter to quarter?",
        findings,
    )
    assert composed is not None
    headers = [p for p in composed[0].split("\n\n") if "| Initech: " in p]
    assert len(headers) == 2 and "Windows" in headers[0] and "Devices" in headers[1]
    assert all(v in composed[0] for v in ("5,313", "5,567", "1,448", "1,125"))


def test_an_investees_results_are_no_figure_of_the_filer() -> None:
    """A filing restates an investee's results ("summarized financial information of Rivian"):
    its "Revenues" row is not the filer's revenue."""
    cells = "Three Months Ended September 30, 2022 = {}"
    rivian = (
        "Summarized financial information of Rivian as disclosed in its filings (in millions): "
        f"Revenues: {cells.format('536')}"
    )
    own = f"Consolidated statements of operations (in millions): Total net sales: {cells}"
    question = "What was Initech's revenue in Q3 2022?"
    assert compose(question, [(rivian, (1,), 0)]) is None
    composed = compose(question, [(rivian, (1,), 0), (own.format("127,101"), (2,), 0)])
    assert composed is not None and "127,101" in composed[0] and "536" not in composed[0]


def test_a_table_of_the_filers_own_named_categories_is_its_own() -> None:
    """ "Products and Services gross margin ...": "Services" is capitalized everywhere in the
    filing, as an investee's name is, but the table's own rows are named by it: a category of
    the filer's, whose gross margin percentage answers the question."""
    title = "Products and Services gross margin and gross margin percentage were as follows"
    cells = "Three Months Ended July 1, 2023 = {}; Three Months Ended June 25, 2022 = {}"
    rows = [
        f"{title} (dollars in millions): Gross margin - Services: {cells.format('14,965', '14,015')}",
        f"{title} (dollars in millions): Total gross margin percentage: "
        f"{cells.format('44.5 %', '43.3 %')}",
    ]
    prose = "Services net sales grew, and Services gross margin grew with them."
    question = "What was Initech's gross margin percentage in Q3 2023?"
    units = evidence_units(question, [(1, "doc:a.pdf#page=2", "\n".join([*rows, prose]))])
    assert any("44.5 %" in u.text for u in units)
    composed = compose(question, [(rows[0], (1,), 0), (rows[1], (1,), 1)])
    assert composed is not None and "44.5 %" in composed[0]


def test_a_rate_is_answered_by_a_percent_never_by_an_amount_sharing_a_word() -> None:
    """ "Effective tax rate" shares "tax" with "Income before income taxes"; its answer is a
    percent, so that row composes nothing and the quoted sentence answers."""
    amount = format_row(
        TableRow(
            "Income statements",
            "in millions",
            "Income before income taxes",
            (("Three Months Ended Sep 30, 2023", "27,284"),),
        )
    )
    question = "What effective tax rate did Initech report for the quarter?"
    assert compose(question, [(amount, (1,), 0)]) is None
    rate = format_row(
        TableRow(
            "Tax rates", "", "Effective tax rate", (("Three Months Ended Sep 30, 2023", "18%"),)
        )
    )
    composed = compose(question, [(amount, (1,), 0), (rate, (2,), 0)])
    assert composed is not None and "18%" in composed[0] and "27,284" not in composed[0]
    # a percent in a name is no rate, and another rate ("interest rates") is not the tax rate
    notes = [
        format_row(TableRow("Notes and their interest rates", "in millions", label, cells))
        for label, cells in (
            ("2.85% Notes Due 2030", (("Carrying Value", "1,500"),)),
            ("Weighted average", (("Effective Interest Rate", "3.1%"),)),
        )
    ]
    assert compose(question, [(n, (3,), 0) for n in notes]) is None
    # nor is an amount quoted as prose when no row states the rate: a trend's per-filing
    # figures are rates too
    from test_answer_shapes import _verified_answer

    def income(date: str, value: str) -> str:
        cells = ((f"Three Months Ended {date}", value),)
        return format_row(
            TableRow("Income statements", "in millions", "Income before income tax", cells)
        )

    said = "Our effective tax rate was lower than the statutory rate of 21% due to tax benefits."
    answer, _ = _verified_answer(
        "What effective tax rate did Initech report in the latest quarter, and how does it relate "
        "to its historical tax rates?",
        [
            (income("Sep 30, 2023", "27,284"), "doc:q3.pdf#page=3"),
            (income("Jun 30, 2023", "25,001"), "doc:q2.pdf#page=3"),
            (said, "doc:q3.pdf#page=9"),
        ],
    )
    assert "21%" in answer and "27,284" not in answer and "25,001" not in answer, answer


def test_each_metric_a_question_names_gets_its_figure_line() -> None:
    """ "Changes in debt and interest expenses": the debt's row and the interest expense's, not
    the best one row for both words."""
    rows = [
        format_row(TableRow("Debt", "in millions", label, (("December 31, 2022", value),)))
        for label, value in (("Long-term debt", "44,119"), ("Interest expense", "(490)"))
    ]
    composed = compose(
        "What details were provided about changes in Initech's debt and interest expenses?",
        [(r, (n,), 0) for n, r in enumerate(rows, 1)],
    )
    assert composed is not None, composed
    assert "44,119" in composed[0] and "(490)" in composed[0] and composed[1] == (1, 2)


def test_quoted_table_rows_each_stand_on_their_own_with_their_source() -> None:
    """Rows a composed line cannot use (their columns are no periods) are quoted one by one, each
    with its source: run together they read as one list of figures of no one filing."""

    def row(quarter: str, shares: str, left: str) -> str:
        return format_row(
            TableRow(
                f"Share repurchase activity during the three months ended {quarter} was as follows",
                "in millions, except number of shares, which are reflected in thousands",
                "Total",
                (("Total Number of Shares Purchased", shares), ("Dollar Value Left", left)),
            )
        )

    first, second = (
        row("July 1, 2023", "102,673", "94,569"),
        row("April 1, 2023", "129,312", "22,570"),
    )
    task = _task(
        "Has Initech engaged in any significant share repurchase activities in the quarters?",
        [(first, "doc:q3.pdf#page=24"), (second, "doc:q2.pdf#page=23")],
    )
    answer = answer_write(task).answer
    paragraphs = answer.split("\n\n")
    assert len(paragraphs) == 2, answer
    assert all(p.endswith(("[1].", "[2].")) for p in paragraphs), paragraphs
    assert {p[-4:] for p in paragraphs} == {"[1].", "[2]."}


def test_an_explanations_prose_speaks_of_what_it_explains() -> None:
    """ "What legal proceedings or potential liabilities ...": the figure answers the legal
    proceedings, and so does the prose after it; "accrued liabilities include deferred
    compensation" shares a word with the second thing asked and says nothing of either."""
    charges = format_row(
        TableRow(
            "Restructuring and other charges",
            "in millions",
            "Litigation charges and other",
            (("Three Months Ended Sep 30, 2023", "757"),),
        )
    )
    accrued = "Other accrued liabilities include deferred compensation of $2.6 billion."
    lawsuit = "A lawsuit filed by Hooli asserts that our processors infringe two patents."
    question = (
        "What legal proceedings or potential liabilities have been disclosed in Initech's 10-Qs, "
        "and how might they impact the company?"
    )
    task = _task(
        question,
        [
            (charges, "doc:q.pdf#page=14"),
            (accrued, "doc:q.pdf#page=12"),
            (lawsuit, "doc:q.pdf#page=30"),
        ],
    )
    paragraphs = answer_write(task).answer.split("\n\n")
    assert paragraphs[0].startswith("Initech: Litigation charges and other"), paragraphs
    assert lawsuit in paragraphs and accrued not in paragraphs, paragraphs


def test_a_composed_figure_is_followed_by_as_many_quotes_as_an_answer_without_one() -> None:
    """Three sentences of the figure's filing about the asked item follow the figure, as an
    Answer of quotes alone holds three: "Total revenue of $11.7 billion was down ..." is the
    third that says why."""
    prose = [
        "Total net sales decreased 1% on weaker iPhone sales in the quarter.",
        "Total net sales of Services grew 8% to a new quarterly record.",
        "Total net sales in Greater China decreased 2% on foreign currency weakness.",
    ]
    task = _task(
        "What was Initech's total net sales for the quarter ended July 1, 2023?",
        [
            (Q3, "doc:q3.pdf#page=4"),
            *((p, f"doc:q3.pdf#page={9 + k}") for k, p in enumerate(prose)),
        ],
    )
    paragraphs = answer_write(task).answer.split("\n\n")
    assert paragraphs[0].startswith("Initech: Total net sales"), paragraphs
    assert len(paragraphs) == 4 and all(p in paragraphs for p in prose), paragraphs


def test_a_latest_quarter_question_quotes_the_newest_filing_first() -> None:
    """ "In the most recent 10-Q": of two filings' explanations of the same line, the one of the
    filing whose dates are newest leads, though the older one came first."""
    old = (
        "Income tax as a percentage of income before income tax was a benefit of 10.9% for the "
        "quarter ended October 30, 2022, due to tax benefits from stock-based compensation.",
        "doc:2022q3.pdf#page=30",
    )
    new = (
        "Our provision for income taxes was an expense of 12.2% of income for the quarter ended "
        "October 29, 2023, due to higher profits.",
        "doc:2023q3.pdf#page=31",
    )
    query = "How did Initech explain its income tax in the most recent 10-Q?"
    answer = answer_write(_task(query, [old, new])).answer
    assert answer.startswith("Our provision for income taxes was an expense of 12.2%"), answer
    older = answer_write(_task(query.replace(" the most recent", " its"), [old, new])).answer
    assert older.startswith("Income tax as a percentage"), older  # not asked for the newest
