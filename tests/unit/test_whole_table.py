"""A part compared with its whole ("revenue from its data-centric businesses relative to total
revenue") is answered by the whole's row with the rows of its table that add up to it: the
question's group is not a row, and a reader sees each part beside the total."""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.text.tables import TableRow, format_row

TITLE = "Net revenue and operating income (loss) for each period were as follows"
CELLS = ("Three Months Ended Sep 30, 2023", "Three Months Ended Oct 1, 2022")
QUESTION = (
    "How significant was the revenue from Initech's data-centric businesses in Q3 2023 relative "
    "to total revenue?"
)


def _row(label: str, *values: str, title: str = TITLE) -> tuple[str, tuple[int, ...], int]:
    row = TableRow(title, "in millions", label, tuple(zip(CELLS, values, strict=True)))
    return format_row(row), (1,), 0


SEGMENTS = [
    _row("Total net revenue", "14,158", "15,338"),
    _row("Data Center and AI", "3,814", "4,255"),
    _row("Operating income (loss) - Data Center and AI", "71", "(22)"),
    _row("Client Computing", "7,867", "8,128"),
    _row("Network and Edge", "1,450", "2,133"),
    _row("Foundry Services", "1,027", "822"),
]


def test_a_part_relative_to_a_total_is_answered_by_the_totals_parts() -> None:
    composed = compose(QUESTION, SEGMENTS)
    assert composed is not None
    lines = [line for line in composed[0].split("\n\n") if line.startswith("| ")]
    assert lines[0].startswith(f"| Initech: {TITLE} (in millions) | {CELLS[0]} | {CELLS[1]} |")
    labels = [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]]
    assert labels[-1] == "Total net revenue", labels
    expected = ["Data Center and AI", "Client Computing", "Network and Edge", "Foundry Services"]
    assert sorted(labels[:-1]) == sorted(expected), labels
    assert "Operating income" not in composed[0]  # a row of the table that is no part of it


def test_without_parts_that_add_up_the_comparison_is_its_figure_lines() -> None:
    partial = [r for r in SEGMENTS if "Foundry" not in r[0]]  # the rest no longer add up
    composed = compose(QUESTION, partial)
    assert composed is not None and "| " not in composed[0]
    assert "14,158" in composed[0] and "3,814" in composed[0]
