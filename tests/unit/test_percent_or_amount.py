"""A metric a filer states both as a percent and as an amount ("gross margin": 74.0 % in a
summary, 13,400 of gross profit in the statement) is answered with both, unless the question
asks for the rate: a reader asking neither reads both."""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.domains.filings.rows import unit_text
from deepresearch.text.tables import TableRow, format_row

CELLS = ("Three Months Ended October 29, 2023", "Three Months Ended October 30, 2022")


def _row(title: str, label: str, unit: str, *values: str) -> str:
    return format_row(TableRow(title, unit, label, tuple(zip(CELLS, values, strict=True))))


FINDINGS = [
    (_row("Third Quarter Summary", "Gross margin", "$ in millions", "74.0 %", "53.6 %"), (1,), 0),
    (_row("Statements of income", "Gross profit", "in millions", "13,400", "3,177"), (2,), 0),
]


def test_a_figure_stated_as_a_percent_is_answered_with_its_amount_too() -> None:
    composed = compose("What was Initech's gross margin in the most recent 10-Q?", FINDINGS)
    assert composed is not None
    lines = composed[0].split("\n\n")
    assert len(lines) == 2 and "74.0 %" in lines[0] and "13,400" in lines[1], lines
    assert composed[1] == (1, 2)


def test_a_rate_asked_for_is_answered_with_the_percent_alone() -> None:
    composed = compose(
        "What was Initech's gross margin percentage in the latest quarter?", FINDINGS
    )
    assert composed is not None and "74.0 %" in composed[0] and "13,400" not in composed[0]


def test_a_figure_line_states_its_unit_without_the_exceptions_made_for_other_rows() -> None:
    """A statement's unit line ("in millions, except number of shares, which are reflected in
    thousands, and per share amounts") excepts other rows: total net sales is in millions; a
    share count keeps the whole unit, whose exception is about it."""
    unit = "in millions, except number of shares, which are reflected in thousands, and per share amounts"
    cells = (("Three Months Ended July 1, 2023", "81,797"),)
    sales = format_row(TableRow("Statements of operations", unit, "Total net sales", cells))
    composed = compose(
        "What was Initech's total net sales in the latest quarter?", [(sales, (1,), 0)]
    )
    assert composed is not None
    assert composed[0].startswith("Initech: Total net sales (in millions), Three Months"), composed
    shares = format_row(
        TableRow(
            "Statements of operations", unit, "Shares used in computing earnings per share", cells
        )
    )
    composed = compose(
        "How many shares were used in computing Initech's earnings per share?", [(shares, (1,), 0)]
    )
    assert composed is not None and f"({unit})" in composed[0], composed
    # a column of share counts is in thousands too, whatever its row's label ("Total")
    bought = (("Total Number of Shares Purchased", "102,673"),)
    assert unit_text(TableRow("Share repurchase activity", unit, "Total", bought)) == f" ({unit})"


def test_a_row_of_percents_is_stated_without_the_scale_of_its_tables_amounts() -> None:
    composed = compose(
        "What was Initech's gross margin percentage in the latest quarter?", FINDINGS
    )
    assert composed is not None
    assert composed[0].startswith("Initech: Gross margin, Three Months"), composed[0]
