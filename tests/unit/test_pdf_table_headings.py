"""Headings over a table's header block, and period headers spanning year columns: a statement
printed under running heads and a centred heading ("PART I" / "Item 1" / "INCOME STATEMENTS")
keeps them out of its column headers and takes the nearest heading as its title; a period
header right-aligned over the second of its two year columns ("Three Months Ended" /
"December 31," over "2022 2021") heads both, and the next period's columns get their own.
Each PDF is generated cell by cell, the way filings print tables."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from pdf_layout import Placed, text_width, write_positioned_pdf
from test_pdf_tables import LEFT, centred, row, rows_of

from deepresearch.providers.documents.extract import extract_path

PAGE_MIDDLE = 306.0
R4 = [292.0, 382.0, 472.0, 562.0]  # the table spans the page's margins: 50 .. 562
DOLLAR = 82.0  # "$" this far left of its column's right edge: a header fits inside its column
UNIT = "(In millions, except per share amounts) (Unaudited)"
REVENUE = ["52,747", "51,728", "102,869", "97,045"]
OTHER = ["(60)", "268", "(6)", "(1,385)"]


# Helvetica letters (1/1000 em): ``text_width`` counts ~556 for every letter; headings in
# capitals and headers set flush right need the printed widths to be centred or aligned
_WIDTHS = (
    "667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778 722 667 611 722 667 944 "
    "667 667 611 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 556 556 333 500 278 "
    "556 500 722 500 500 500"
)
_LETTERS = dict(
    zip(string.ascii_uppercase + string.ascii_lowercase, map(int, _WIDTHS.split()), strict=True)
)


def _width(text: str) -> float:
    return sum(_LETTERS[ch] * 9 / 1000 if ch in _LETTERS else text_width(ch) for ch in text)


def _heading(y: float, text: str) -> Placed:
    """A heading centred on the page."""
    return (PAGE_MIDDLE - _width(text) / 2, y, text)


def _pages(tmp_path: Path, *pages: list[Placed]) -> list[str]:
    return list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", list(pages))).pages)


def _right(rights: list[float], y: float, texts: list[str]) -> list[Placed]:
    return [(r - text_width(t), y, t) for r, t in zip(rights, texts, strict=True) if t]


def _contents() -> list[Placed]:
    """A contents page: its "INDEX" table of page numbers is the last table before the
    statement, so a statement whose caption is missed would inherit its title."""
    page: list[Placed] = [_heading(760, "INDEX")]
    for n, (item, number) in enumerate(
        [("Income Statements", "2"), ("Balance Sheets", "3"), ("Cash Flows Statements", "4")]
    ):
        page += row(740 - 12 * n, item, [number], R4[-1:])
    return page


def _statement(heading: str, centred_spans: bool, heading_y: float = 720) -> list[Placed]:
    """Running heads and headings centred on the page, the unit at the left margin beside the
    second line of "Three/Six Months Ended" / "December 31," (each over two year columns),
    then the year line and the rows."""
    page: list[Placed] = [
        _heading(780, "PART I"),
        _heading(772, "Item 1"),
        _heading(748, "PART I. FINANCIAL INFORMATION"),
        _heading(734, "ITEM 1. FINANCIAL STATEMENTS"),
        _heading(heading_y, heading),
        (LEFT, 692, UNIT),
    ]
    for lines, y in (
        (["Three Months Ended", "Six Months Ended"], 700),
        (["December 31,"] * 2, 692),
    ):
        for text, (left, right) in zip(lines, [(R4[0], R4[1]), (R4[2], R4[3])], strict=True):
            if centred_spans:  # centred over the pair of columns
                page.append(((left - DOLLAR + right - _width(text)) / 2, y, text))
            else:  # right-aligned with the pair's second column
                page.append((right - _width(text), y, text))
    page += _right(R4, 678, ["2022", "2021", "2022", "2021"])
    page.append((LEFT, 666, "Revenue:"))
    page += row(
        654, "Product", ["$ 16,517", "$ 20,779", "$ 32,258", "$ 37,410"], R4, LEFT + 10, DOLLAR
    )
    page += row(642, "Total revenue", REVENUE, R4, LEFT + 20)
    page += row(
        628, "Net income", ["$ 16,425", "$ 18,765", "$ 33,981", "$ 39,270"], R4, dollar=DOLLAR
    )
    page.append((LEFT, 616, "Other income (expense), net"))
    for right, value in zip(R4, OTHER, strict=True):  # a negative's ")" hangs past the edge
        page.append((right + 4 * value.startswith("(") - text_width(value), 616, value))
    return page


PERIODS = [
    "Three Months Ended December 31, 2022",
    "Three Months Ended December 31, 2021",
    "Six Months Ended December 31, 2022",
    "Six Months Ended December 31, 2021",
]


def _cells(values: list[str]) -> str:
    return "; ".join(f"{p} = {v}" for p, v in zip(PERIODS, values, strict=True))


@pytest.mark.parametrize("centred_spans", [False, True], ids=["right-aligned", "centred"])
@pytest.mark.parametrize("heading_y", [720, 710], ids=["set-apart", "next-line"])
def test_headings_over_a_statement_are_its_title_and_no_column_header(
    tmp_path: Path, centred_spans: bool, heading_y: float
) -> None:
    """Set apart by a blank line or printed on the line over the headers, the heading spans no
    pair of columns (it is centred on the whole table): it is the title."""
    statement = _statement("INCOME STATEMENTS", centred_spans, heading_y)
    pages = _pages(tmp_path, _contents(), statement)
    rows = rows_of(pages[1])
    assert rows["Total revenue"] == (
        "Income statements (in millions, except per share amounts): "
        f"Total revenue: {_cells(REVENUE)}"
    )
    assert rows["Net income"].endswith(
        f"Net income: {_cells(['16,425', '18,765', '33,981', '39,270'])}"
    )
    assert rows["Other income (expense), net"].endswith(
        f"Other income (expense), net: {_cells(OTHER)}"
    )
    # the headings stay lines of their own, as printed
    assert {"PART I", "ITEM 1. FINANCIAL STATEMENTS", "INCOME STATEMENTS"} <= set(
        pages[1].split("\n")
    )


def test_a_centred_heading_over_the_first_columns_is_the_title(tmp_path: Path) -> None:
    """A long heading reaches over the first two value columns (centred on the page, it starts
    over the labels): it spans no column group, it is the caption."""
    heading = "SUMMARY RESULTS OF OPERATIONS AND OTHER KEY FIGURES"
    left = _heading(0, heading)[0]
    assert left < R4[0] - DOLLAR < R4[1] < 2 * PAGE_MIDDLE - left  # over labels and two columns
    rows = rows_of(_pages(tmp_path, _statement(heading, False))[0])
    assert rows["Net income"] == (
        "Summary results of operations and other key figures (in millions, except per share "
        f"amounts): Net income: {_cells(['16,425', '18,765', '33,981', '39,270'])}"
    )


def test_a_header_centred_over_all_value_columns_stays_a_header(tmp_path: Path) -> None:
    """A header spanning every value column starts over them, not over the labels: a header."""
    page: list[Placed] = [(LEFT, 740, "Segment revenue was as follows:")]
    page.append(centred((R4[0] - 40 + R4[3]) / 2, 724, "Payments Due by Period"))
    page += _right(R4, 712, ["2024", "2025", "2026", "2027"])
    page += row(698, "Leases", ["1,200", "1,100", "900", "4,000"], R4)
    page += row(686, "Debt", ["300", "400", "500", "9,000"], R4)
    assert rows_of(_pages(tmp_path, page)[0])["Leases"] == (
        "Segment revenue was as follows: Leases: Payments Due by Period 2024 = 1,200; "
        "Payments Due by Period 2025 = 1,100; Payments Due by Period 2026 = 900; "
        "Payments Due by Period 2027 = 4,000"
    )


def test_a_group_header_centred_over_the_header_words_under_it_stays_a_header(
    tmp_path: Path,
) -> None:
    """ "Common Stock" centred over "Shares  Amount" on the next line (and, by chance, on the
    whole table) heads those two columns: it is no heading."""
    r = [296.0, 341.0, 450.0, 562.0]
    shares, amount = (r[0] - 6 - _width("Shares"), r[1] - 5)  # headers set left of the values
    page: list[Placed] = [(LEFT, 740, "Statements of Shareholders' Equity")]
    page.append(((shares + amount - _width("Common Stock")) / 2, 722, "Common Stock"))
    page += [(shares, 712, "Shares"), (amount - _width("Amount"), 712, "Amount")]
    page += _right(r[2:], 712, ["Paid-in Capital", "Total"])
    page += row(698, "Balances, January 29, 2023", ["2,466", "2", "11,971", "22,101"], r)
    page += row(686, "Net income", ["—", "—", "—", "2,043"], r)
    assert rows_of(_pages(tmp_path, page)[0])["Net income"] == (
        "Statements of Shareholders' Equity: Net income: Common Stock Shares = —; "
        "Common Stock Amount = —; Paid-in Capital = —; Total = 2,043"
    )
