"""A breakdown ("the revenue breakdown across its service offerings") is answered by a whole table.

* the question analysis tells a breakdown from a single figure;
* the findings hand on every row of the table whose title names the figure, though its rows
  name only the parts ("Online stores") and prose repeating the question's words outscores them;
* the Answer is a table of the parts, one cited cell each, and the citation verifier keeps it.
"""

from __future__ import annotations

from test_answer_shapes import _verified_answer

from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.text.question import analyze
from deepresearch.text.tables import TableRow, format_row

QUESTION = "In Q3 2023, what was the revenue breakdown across Contoso's various service offerings?"
TITLE = "Net sales by groups of similar products and services"
PARTS = [
    ("Online stores", "57,267"),
    ("Physical stores", "4,959"),
    ("Third-party seller services", "34,342"),
    ("Advertising services", "12,060"),
    ("Cloud", "23,059"),
]
PROSE = (
    "Our revenue from service offerings depends on new service offerings, and a breakdown of "
    "revenue by service offerings may vary as our service offerings change."
)


def _part(label: str, value: str) -> str:
    return format_row(
        TableRow(TITLE, "in millions", label, (("Three Months Ended September 30, 2023", value),))
    )


def test_a_breakdown_is_told_from_a_single_figure() -> None:
    assert analyze(QUESTION).breakdown
    assert analyze("How does the revenue distribution among its product lines compare?").breakdown
    assert analyze("What were Contoso's net sales by segment in Q3 2023?").breakdown
    assert not analyze("What was Contoso's total revenue in Q3 2023?").breakdown


def test_the_findings_hand_on_every_row_of_the_titled_table() -> None:
    statement = format_row(
        TableRow(
            "Statements of operations",
            "in millions",
            "Net service sales",
            (("Three Months Ended September 30, 2023", "79,912"),),
        )
    )
    page = "\n".join([PROSE, statement, "Notes to the statements.", *(_part(*p) for p in PARTS)])
    sources = (SourceText(n=1, url="doc:q3.pdf#page=20", title="q3.pdf", location="p", text=page),)
    draft = answer_findings(FindingsTask(question=QUESTION, sources=sources, max_findings=4))
    texts = [f.text for f in draft.findings]
    assert all(any(value in t for t in texts) for _, value in PARTS), texts


def test_the_answer_is_a_table_of_the_parts_that_the_verifier_keeps() -> None:
    found = [(_part(*p), "doc:q3.pdf#page=20") for p in PARTS]
    answer, failed = _verified_answer(QUESTION, [(PROSE, "doc:q3.pdf#page=21"), *found])
    assert failed == []
    table = answer.split("\n\n")[0].splitlines()
    assert table[0] == f"| Contoso: {TITLE} (in millions) | Three Months Ended September 30, 2023 |"
    assert table[2].startswith("| Online stores | 57,267 [") and len(table) == 2 + len(PARTS)


def _inventory(label: str, now: str, before: str) -> str:
    cells = (("Oct 1, 2022", now), ("Dec 25, 2021", before))
    return format_row(TableRow("Inventories", "in millions", label, cells))


def test_a_question_naming_a_table_gets_the_table_with_the_prior_period_beside() -> None:
    """ "inventory levels" names the Inventories table, of which "Total inventories" is one
    line: the Answer shows every line with the balance a reader compares it with."""
    found = [
        (_inventory("Raw materials", "1,635", "1,441"), "doc:q3.pdf#page=12"),
        (_inventory("Work in process", "7,030", "6,656"), "doc:q3.pdf#page=12"),
        (_inventory("Total inventories", "12,831", "10,776"), "doc:q3.pdf#page=12"),
    ]
    query = "What insights could be gleaned from Initech's Q3 2022 inventory levels?"
    answer, failed = _verified_answer(query, found)
    assert failed == []
    table = answer.split("\n\n")[0].splitlines()
    assert table[0] == "| Initech: Inventories (in millions) | Oct 1, 2022 | Dec 25, 2021 |"
    assert table[4].startswith("| Total inventories | 12,831 | 10,776 [")


def test_a_question_naming_a_row_gets_the_row() -> None:
    def line(label: str, value: str) -> str:
        cells = (("Three Months Ended July 1, 2023", value),)
        return format_row(TableRow("Statements of operations", "in millions", label, cells))

    found = [
        (line("Products", "60,584"), "doc:q3.pdf#page=4"),
        (line("Services", "21,213"), "doc:q3.pdf#page=4"),
        (line("Total net sales", "81,797"), "doc:q3.pdf#page=4"),
    ]
    answer, _ = _verified_answer("What was Initech's total net sales in Q3 2023?", found)
    assert answer.startswith("Initech: Total net sales (in millions)"), answer


def test_rows_the_question_names_beat_a_table_of_other_parts_whose_title_it_names() -> None:
    """ "the gaming and professional GPU segments" names two rows of the revenue-by-market
    table; the "Revenue by Reportable Segments" table's title names "segments" too, but its
    rows are other segments, so it is not the answer."""

    def line(title: str, label: str, value: str) -> str:
        cells = (("Three Months Ended October 29, 2023", value),)
        return format_row(TableRow(title, "in millions", label, cells))

    segments = "Revenue by Reportable Segments"
    found = [
        (line(segments, "Graphics", "3,475"), "doc:q3.pdf#page=30"),
        (line(segments, "Compute & Networking", "14,645"), "doc:q3.pdf#page=30"),
        (line(segments, "Total", "18,120"), "doc:q3.pdf#page=30"),
        (line("Revenue by market", "Gaming", "2,856"), "doc:q3.pdf#page=24"),
        (line("Revenue by market", "Professional Visualization", "416"), "doc:q3.pdf#page=24"),
    ]
    query = "In the latest quarter, what were the sales figures for Initech's gaming and professional GPU segments?"
    answer, failed = _verified_answer(query, found)
    assert failed == []
    assert "2,856" in answer and "416" in answer and "3,475" not in answer, answer


SEGMENTS = "Information on reportable segments and reconciliation to consolidated net income"
EXPENSES = "Information about operating expenses"
SEGMENT_QUESTION = (
    "In Contoso's latest 10-Q, how does the revenue distribution across its business segments "
    "like retail, Cloud, and others compare to the costs incurred in these segments?"
)


def _cells(value: str) -> tuple[tuple[str, str], ...]:
    return (("Three Months Ended September 30, 2023", value), ("Nine Months Ended", value))


def _segment_rows() -> list[str]:
    rows = [
        (segment, item, f"{n}{k},{n}00")
        for n, segment in enumerate(("North America", "International", "Cloud"), start=1)
        for k, item in enumerate(("Net sales", "Operating expenses"))
    ]
    return [
        format_row(TableRow(SEGMENTS, "in millions", f"{s} - {i}", _cells(v))) for s, i, v in rows
    ]


def _expense_rows() -> list[str]:
    items = ("Cost of sales", "Fulfillment", "Sales and marketing", "Total operating expenses")
    return [
        format_row(TableRow(EXPENSES, "in millions", item, _cells(f"{9 - k}1,000")))
        for k, item in enumerate(items)
    ]


def test_a_breakdown_is_divided_by_what_the_question_divides_it_by() -> None:
    """ "Across its business segments ... compared to the costs": the segments table, though a
    table of costs shares as many of the question's words and its rows score higher; the
    segments other than the one named ("North America") are handed on and answered."""
    q = analyze(SEGMENT_QUESTION)
    assert q.breakdown and q.shape == "comparison"
    text = "\n".join([*_expense_rows(), "Segment information follows.", *_segment_rows()])
    sources = (SourceText(n=1, url="doc:q3.pdf#page=19", title="q3.pdf", location="p", text=text),)
    draft = answer_findings(
        FindingsTask(question=SEGMENT_QUESTION, sources=sources, max_findings=4)
    )
    texts = "\n".join(f.text for f in draft.findings)
    assert "North America - Net sales" in texts and "International - Operating expenses" in texts
    found = [(row, "doc:q3.pdf#page=19") for row in [*_expense_rows(), *_segment_rows()]]
    answer, failed = _verified_answer(SEGMENT_QUESTION, found)
    assert failed == []
    table = answer.split("\n\n")[0].splitlines()
    assert table[0].startswith(f"| Contoso: {SEGMENTS}"), table
    assert any(line.startswith("| North America - Net sales | 10,100") for line in table), table


SEGMENTS = "Information on reportable segments and reconciliation to consolidated net income"


def _segment(
    label: str, now: str, value: str, before: str, prior: str, source: int
) -> tuple[str, tuple[int, ...], int]:
    cells = ((f"Three Months Ended {now}", value), (f"Three Months Ended {before}", prior))
    return format_row(TableRow(SEGMENTS, "in millions", label, cells)), (source,), 0


def test_a_breakdown_is_the_asked_quarters_table_and_its_rows_of_the_asked_metric() -> None:
    """ "Q2 2023": the table of the quarter ended June 30, though the one of March 31 (filed in
    the second quarter) has more rows; "their operating income": its operating income rows,
    not the net sales and operating expenses printed in the same table."""
    from deepresearch.domains.filings.compose import compose

    march = [
        _segment(label, "March 31, 2023", v, "March 31, 2022", p, 1)
        for label, v, p in (
            ("North America - Net sales", "76,881", "69,244"),
            ("North America - Operating income", "898", "(1,568)"),
            ("AWS - Net sales", "21,354", "18,441"),
            ("AWS - Operating income", "5,123", "6,518"),
            ("Consolidated - Operating income", "4,774", "3,669"),
        )
    ]
    june = [
        _segment(label, "June 30, 2023", v, "June 30, 2022", p, 2)
        for label, v, p in (
            ("North America - Net sales", "82,546", "74,430"),
            ("North America - Operating income", "3,211", "(627)"),
            ("AWS - Operating income", "5,365", "5,715"),
            ("Consolidated - Operating income", "7,681", "3,317"),
        )
    ]
    question = "List Contoso's reportable segments and their Q2 2023 operating income."
    composed = compose(question, [*march, *june])
    assert composed is not None
    text = composed[0]
    assert "| Three Months Ended June 30, 2023 | Three Months Ended June 30, 2022 |" in text, text
    assert "Net sales" not in text and "5,365" in text and "7,681" in text, text


def test_a_table_naming_two_asked_metrics_lists_the_rows_of_both() -> None:
    """ "Revenue and operating income": the segment table whose title names both lists each
    metric's rows; it listed the revenue rows alone, and operating income went unanswered."""
    from deepresearch.domains.filings.compose import compose

    title = "Segment revenue and operating income were as follows"
    cells = ("Three Months Ended September 30, 2023", "Three Months Ended September 30, 2022")
    rows = [
        (
            format_row(
                TableRow(title, "in millions", label, tuple(zip(cells, (v, p), strict=True)))
            ),
            (1,),
            0,
        )
        for label, v, p in (
            ("Revenue - Productivity", "18,592", "16,465"),
            ("Revenue - Cloud", "24,259", "20,325"),
            ("Revenue - Total", "56,517", "50,122"),
            ("Operating income - Productivity", "9,970", "8,323"),
            ("Operating income - Cloud", "11,751", "8,978"),
            ("Operating income - Total", "26,895", "21,518"),
        )
    ]
    question = "What were Contoso's revenue and operating income in the quarter?"
    composed = compose(question, rows)
    assert composed is not None
    assert "56,517" in composed[0] and "26,895" in composed[0], composed[0]
