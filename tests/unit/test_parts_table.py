"""A total in the Answer comes with the rows that add up to it: "Total debt 48,116" says little
of what changed without its face value, discount and premium beside it.

* ``row_sums.summing`` finds parts that lie a dozen rows from their total (a debt table lists
  each issuance before the lines that make up "Total debt");
* one figure: the total's line, then its parts as a table of its table's title and columns;
  seven parts or more (a statement, not a total's parts) leave the line alone; another table's
  rows are never parts;
* several metrics: each total with its parts, and a metric naming one of those parts is answered
  by them (NVIDIA's "gaming and professional" segments beside "sales").
"""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.text.row_sums import summing
from deepresearch.text.tables import TableRow, format_row

TITLE = "The components of debt were as follows"
CELLS = ("December 31, 2022", "June 30, 2022")


def _row(
    label: str, *values: str, title: str = TITLE, source: int = 1
) -> tuple[str, tuple[int, ...], int]:
    row = TableRow(title, "in millions", label, tuple(zip(CELLS, values, strict=True)))
    return format_row(row), (source,), 0


ISSUANCES = [
    _row(f"{2009 + k} issuance", str(500 + 100 * k), str(520 + 100 * k)) for k in range(10)
]
DEBT = [
    *ISSUANCES,
    _row("Total face value", "53,812", "55,511"),
    _row("Unamortized discount and issuance costs", "(455)", "(471)"),
    _row("Hedge fair value adjustments", "(103)", "(68)"),
    _row("Premium on debt exchange", "(5,138)", "(5,191)"),
    _row("Total debt", "48,116", "49,781"),
]
PARTS = (
    "Total face value",
    "Unamortized discount and issuance costs",
    "Hedge fair value adjustments",
    "Premium on debt exchange",
)


def _table_labels(text: str) -> list[str]:
    lines = [line for line in text.split("\n\n") if line.startswith("| ")]
    return [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]]


def test_summing_finds_parts_beyond_the_first_ten_rows() -> None:
    rows = [_parse(r) for r in DEBT]
    assert summing(rows[-1], rows[:-1]) == (10, 11, 12, 13)


def test_a_totals_figure_line_comes_with_its_parts_beneath_it() -> None:
    composed = compose("What was Microsoft's total debt at December 31, 2022?", DEBT)
    assert composed is not None
    text = composed[0]
    first = text.split("\n\n")[0]
    assert first.startswith("Microsoft: Total debt (in millions), December 31, 2022: 48,116"), text
    header = f"| Microsoft: {TITLE} (in millions) | {CELLS[0]} | {CELLS[1]} |"
    assert header in text
    assert sorted(_table_labels(text)) == sorted(PARTS), text
    assert "issuance |" not in text  # a row of the table that is no part of the total


def test_more_parts_than_a_total_shows_leave_its_line_alone() -> None:
    rows = [
        *(_row(f"Line {k}", str(10 + k), str(20 + k)) for k in range(7)),
        _row("Total debt", str(sum(10 + k for k in range(7))), str(sum(20 + k for k in range(7)))),
    ]
    composed = compose("What was Microsoft's total debt at December 31, 2022?", rows)
    assert composed is not None and "| " not in composed[0], composed
    assert "Total debt (in millions), December 31, 2022: 91" in composed[0]


def test_another_tables_rows_are_no_parts() -> None:
    elsewhere = [_row(label, *cells, title="Other table") for label, *cells in _cells(DEBT[-5:-1])]
    composed = compose(
        "What was Microsoft's total debt at December 31, 2022?",
        [
            *elsewhere,
            DEBT[-1],
        ],
    )
    assert composed is not None and "| " not in composed[0], composed


def test_a_metric_naming_a_part_is_answered_by_the_totals_parts() -> None:
    title = "Revenue by specialized markets"
    rows = [
        _row("Total revenue", "18,120", "5,931", title=title),
        _row("Revenue - Data Center", "14,514", "3,833", title=title),
        _row("Revenue - Gaming", "2,856", "1,574", title=title),
        _row("Revenue - Professional Visualization", "416", "200", title=title),
        _row("Revenue - Automotive", "261", "251", title=title),
        _row("Revenue - OEM and Other", "73", "73", title=title),
    ]
    question = "What were the sales figures for Initech's gaming and professional GPU segments?"
    composed = compose(question, rows)
    assert composed is not None
    text = composed[0]
    assert text.startswith("Initech: Total revenue (in millions)"), text
    assert len(_table_labels(text)) == 5, text
    assert text.count("2,856") == 1  # the part is a line of the table, not repeated beneath it


def _parse(finding: tuple[str, tuple[int, ...], int]) -> TableRow:
    from deepresearch.text.tables import parse_row

    row = parse_row(finding[0])
    assert row is not None
    return row


def _cells(findings: list[tuple[str, tuple[int, ...], int]]) -> list[tuple[str, ...]]:
    out = []
    for f in findings:
        row = _parse(f)
        out.append((row.label, *(v for _, v in row.cells)))
    return out


def test_operating_income_is_neither_non_operating_income_nor_a_segments() -> None:
    """ "Non-operating income" names no operating income; of a segment's operating income and
    the consolidated one, the company's is the consolidated line."""
    title = "Information on reportable segments and reconciliation to consolidated net income"
    rows = [
        _row("Total non-operating income (expense)", "1,001", "419", title=title),
        _row("AWS - Operating income", "6,976", "5,403", title=title),
        _row("Consolidated - Operating income", "11,188", "2,525", title=title),
        _row(
            "Total non-operating income (expense)", "1,001", "419", title="Statements of operations"
        ),
    ]
    composed = compose("What was Initech's operating income in the latest quarter?", rows)
    assert composed is not None
    assert composed[0].startswith("Initech: Consolidated - Operating income"), composed[0]
