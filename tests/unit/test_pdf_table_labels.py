"""Rows, labels, titles and units of PDF tables, on layouts that came out wrong: a label
wrapped over three lines, a total of every section, terms in years, a caption overleaf or with
an indented first line, units that differ between columns, a row on jittering baselines, a
chart's figures. Each PDF is generated cell by cell, the way filings print tables."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import Placed, text_width, write_positioned_pdf
from test_pdf_table_columns import page_rows, right_texts
from test_pdf_tables import LEFT, row, rows_of

from deepresearch.providers.documents.extract import extract_path


def test_a_label_wrapped_over_three_lines_is_one_label(tmp_path: Path) -> None:
    """... and a ratio row under it ("% of net revenue") is labelled with what it is the ratio
    of: alone, "% of net revenue: 12.7 %" tells a reader nothing."""
    r = [400.0, 480.0]
    page: list[Placed] = [(LEFT, 780, "Operating Expenses")]
    page += [(r[0] - text_width("2023"), 766, "2023"), (r[1] - text_width("2022"), 766, "2022")]
    page += [(LEFT, 752, "Research and"), (LEFT, 742, "development")]
    page += row(732, "expenses", ["$ 2,294", "$ 1,945"], r)
    page += row(720, "% of net revenue", ["12.7 %", "32.8 %"], r)
    page += [(LEFT, 708, "Sales, general and"), (LEFT, 698, "administrative")]
    page += row(688, "expenses", ["689", "631"], r)
    rows = page_rows(tmp_path, page)
    ratio = "Research and development expenses - % of net revenue"
    assert list(rows) == [
        "Research and development expenses",
        ratio,
        "Sales, general and administrative expenses",
    ]
    assert rows[ratio] == f"Operating Expenses: {ratio}: 2023 = 12.7 %; 2022 = 32.8 %"


def test_a_charts_figures_under_its_captions_stay_as_printed(tmp_path: Path) -> None:
    """Two bar charts side by side: captions over them, bar values set at the bars' heights
    (some alone on their line, some sharing a line with the other chart's): no table, and
    no figure becomes a column header."""
    page: list[Placed] = [(LEFT, 780, "Client Computing")]
    page += [(120, 760, "Revenue $B"), (380, 760, "Operating Income $B")]
    for x, y, value in (
        (100, 740, "$9.3"),
        (100, 728, "$0.7"),
        (100, 714, "$2.6"),
        (230, 714, "$5.8"),
        (230, 702, "$0.5"),
        (370, 702, "$2.7"),
        (230, 690, "$1.9"),
        (100, 678, "$6.0"),
        (230, 666, "$3.4"),
        (500, 666, "$0.5"),
    ):
        page.append((x, y, value))
    page += [
        (95, 646, "Q1 2022"),
        (225, 646, "Q1 2023"),
        (365, 646, "Q1 2022"),
        (495, 646, "Q1 2023"),
    ]
    text = extract_path(write_positioned_pdf(tmp_path / "t.pdf", [page])).pages[0]
    assert rows_of(text) == {}
    assert "Revenue $B Operating Income $B" in text.split("\n")


def test_a_total_of_every_section_above_closes_the_last_section(tmp_path: Path) -> None:
    """Periods as section lines, one row each, then "Total" (indented like the rows) adding
    up the rows of every section: the table's total, not the last section's; a column no row
    above fills (the dollars left at the end) does not keep it from adding up."""
    r = [300.0, 380.0, 480.0]
    page: list[Placed] = [(LEFT, 780, "Share repurchase activity was as follows:")]
    page += [(r[i] - text_width(t), 766, t) for i, t in enumerate(["Shares", "Price", "Remaining"])]
    lines = [("April 2023:", "38,121", "165.46"), ("May 2023:", "21,876", "174.91")]
    lines.append(("June 2023:", "42,676", "184.34"))
    y = 752.0
    for period, shares, price in lines:
        page.append((LEFT, y, period))
        page += row(y - 12, "Open market purchases", [shares, price], r[:2], LEFT + 10)
        y -= 26
    page += row(y, "Total", ["102,673", "", "$ 94,569"], r, LEFT + 10)
    rows = page_rows(tmp_path, page)
    assert rows["Total"].endswith("Total: Shares = 102,673; Remaining = 94,569")
    assert rows["June 2023 - Open market purchases"].endswith("Shares = 42,676; Price = 184.34")


def test_terms_in_years_are_values(tmp_path: Path) -> None:
    """ "8 years" is a figure: its rows are the table's rows, not headers of the rows below."""
    r = [489.0, 572.0]
    page: list[Placed] = [(LEFT, 780, "Supplemental balance sheet information related to leases:")]
    page += right_texts(r, 766, ["March 31, 2023", "June 30, 2022"])
    page += row(752, "Operating lease liabilities", ["$ 13,879", "$ 13,148"], r)
    page.append((LEFT, 738, "Weighted Average Remaining Lease Term"))
    page += row(726, "Operating leases", ["8 years", "8 years"], r, LEFT + 12)
    page += row(714, "Finance leases", ["11 years", "12 years"], r, LEFT + 12)
    page.append((LEFT, 700, "Weighted Average Discount Rate"))
    page += row(688, "Operating leases", ["2.7%", "2.1%"], r, LEFT + 12)
    rows = page_rows(tmp_path, page)
    assert rows["Weighted Average Remaining Lease Term - Finance leases"].endswith(
        "Finance leases: March 31, 2023 = 11 years; June 30, 2022 = 12 years"
    )
    assert rows["Weighted Average Discount Rate - Operating leases"].endswith(
        "Operating leases: March 31, 2023 = 2.7%; June 30, 2022 = 2.1%"
    )


def test_a_caption_ending_the_page_before_names_the_table_overleaf(tmp_path: Path) -> None:
    r = [400.0, 480.0]
    first: list[Placed] = [(LEFT, 780, "Our debt maturities are as follows (in millions):")]
    first += right_texts(r, 766, ["2023", "2022"])
    first += row(752, "Due in one year", ["1,250", "1,000"], r)
    first += row(740, "Due in five years", ["8,500", "9,000"], r)
    first.append((LEFT, 700, "Our share repurchases during the quarter were as follows:"))
    second: list[Placed] = right_texts(r, 780, ["Shares", "Average Price"])
    second += row(766, "August 2023", ["2.2", "444.16"], r)
    second += row(754, "September 2023", ["2.6", "456.81"], r)
    pages = list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", [first, second])).pages)
    assert rows_of(pages[1])["August 2023"] == (
        "Our share repurchases during the quarter were as follows: August 2023: "
        "Shares = 2.2; Average Price = 444.16"
    )
    # a page of prose between them: the caption names nothing pages later
    prose: list[Placed] = [(LEFT, 780, "We repurchased shares under the program approved in 2022.")]
    path = write_positioned_pdf(tmp_path / "t3.pdf", [first, prose, second])
    later = rows_of(list(extract_path(path).pages)[2])["August 2023"]
    assert not later.startswith("Our share repurchases")


def test_units_that_differ_between_columns_are_their_columns_own(tmp_path: Path) -> None:
    r = [380.0, 470.0, 575.0]
    page: list[Placed] = [(LEFT, 780, "A summary of RSU activity is as follows:")]
    page += right_texts(r, 766, ["Number of RSUs", "Fair Value", "Aggregate Fair Value"])
    page += right_texts([r[0], r[2]], 756, ["(in thousands)", "(in millions)"])
    page += row(742, "Balance as of July 1, 2023", ["184,716", "135.08", "35,829"], r)
    page += row(730, "Balance as of July 2, 2022", ["201,501", "109.48", "30,120"], r)
    assert page_rows(tmp_path, page)["Balance as of July 1, 2023"] == (
        "A summary of RSU activity is as follows: Balance as of July 1, 2023: "
        "Number of RSUs (in thousands) = 184,716; Fair Value = 135.08; "
        "Aggregate Fair Value (in millions) = 35,829"
    )


def test_the_wrapped_end_of_the_introducing_sentence_is_no_section(tmp_path: Path) -> None:
    r = [570.0]
    page: list[Placed] = [
        (
            LEFT,
            780,
            "Future payments under unconditional purchase obligations as of July 1, 2023, are",
        ),
        (LEFT, 770, "as follows (in millions):"),
    ]
    page += row(756, "2024", ["$ 3,417"], r)
    page += row(744, "2025", ["1,990"], r)
    page += row(732, "Total", ["$ 5,407"], r, LEFT + 12)
    assert page_rows(tmp_path, page)["2025"] == (
        "Future payments under unconditional purchase obligations as of July 1, 2023, are as "
        "follows (in millions): 2025: July 1, 2023 = 1,990"
    )


def test_a_caption_sentence_whose_first_line_is_indented_is_the_title(tmp_path: Path) -> None:
    r = [480.0, 570.0]
    page: list[Placed] = [
        (
            LEFT + 22,
            780,
            "The following summarizes our principal contractual commitments, excluding open",
        ),
        (LEFT, 770, "orders for purchases, as of September 30, 2023 (in millions):"),
    ]
    page += right_texts(r, 756, ["2024", "Total"])
    page += row(742, "Operating lease liabilities", ["$ 9,977", "$ 88,814"], r)
    page += row(730, "Finance lease liabilities", ["2,178", "14,574"], r)
    assert page_rows(tmp_path, page)["Finance lease liabilities"] == (
        "The following summarizes our principal contractual commitments, excluding open orders "
        "for purchases, as of September 30, 2023 (in millions): Finance lease liabilities: "
        "2024 = 2,178; Total = 14,574"
    )


def test_a_row_set_on_jittering_baselines_is_one_row(tmp_path: Path) -> None:
    """Words of one row a point or two apart in height (a generated PDF's baselines), a label
    printed a little above its figures: still one row each."""
    r = [420.0, 500.0]
    page: list[Placed] = [(LEFT, 780, "Gains on equity investments were as follows:")]
    page += right_texts(r, 766, ["2023", "2022"])
    page += row(752, "Impairment charges", ["(53)", "(45)"], r)
    page += [(LEFT, 738, "Sale of investments"), (LEFT + 90, 737, "and other")]
    page += right_texts(r[:1], 736.0, ["122"]) + right_texts(r[1:], 735.0, ["71"])
    page.append((LEFT, 723.5, "Non-GAAP gross margin percentage"))
    page += right_texts(r, 720.4, ["45.9 %", "58.3 %"])
    page += row(706, "Total gains", ["(191)", "(151)"], r)
    rows = page_rows(tmp_path, page)
    assert list(rows) == [
        "Impairment charges",
        "Sale of investments and other",
        "Non-GAAP gross margin percentage",
        "Total gains",
    ]
    assert rows["Sale of investments and other"].endswith("2023 = 122; 2022 = 71")
    assert rows["Non-GAAP gross margin percentage"].endswith("2023 = 45.9 %; 2022 = 58.3 %")


def test_a_unit_line_ending_the_introducing_sentence_keeps_the_sentence(tmp_path: Path) -> None:
    """The sentence wraps onto the unit line ("... were as follows" / "(dollars in
    millions):"), or its parenthesis opens on the line above ("... (net" / "income in
    millions and shares in thousands):")."""
    r = [480.0, 570.0]
    sentence = (
        "Gross margin for the three months ended July 1, 2023 and June 25, 2022 was as follows"
    )
    for lines, unit in (
        ([sentence, "(dollars in millions):"], "dollars in millions"),
        (
            [f"{sentence} (net", "income in millions and shares in thousands):"],
            "net income in millions and shares in thousands",
        ),
    ):
        page: list[Placed] = [(LEFT, 780, lines[0]), (LEFT, 770, lines[1])]
        page += right_texts(r, 756, ["2023", "2022"])
        page += row(742, "Products", ["$ 21,448", "$ 21,870"], r)
        page += row(730, "Services", ["14,965", "14,015"], r)
        assert page_rows(tmp_path, page)["Services"] == (
            f"{sentence} ({unit}): Services: 2023 = 14,965; 2022 = 14,015"
        )


def test_labels_wrapped_onto_figures_lines_and_unlabelled_section_totals(tmp_path: Path) -> None:
    """A label whose last line holds no words, only the figures; a label wrapped after a
    comma onto "$0, $(8), and $0"; an unlabelled total of a section's rows."""
    r = [480.0, 570.0]
    page: list[Placed] = [(LEFT, 780, "Changes in other comprehensive income were as follows:")]
    page += right_texts(r, 766, ["2023", "2022"])
    page.append((LEFT, 752, "Derivatives"))
    page += row(740, "Balance, beginning of period", ["(6)", "(17)"], r, LEFT + 10)
    page.append((LEFT + 10, 728, "Net change related to derivatives, net of tax of $(9),"))
    page += row(718, "$0, $(8), and $0", ["(32)", "0"], r, LEFT + 10)
    page += right_texts(r, 704, ["(38)", "(17)"])
    page.append((LEFT, 690, "Equity awards excluded from diluted net income per"))
    page.append((LEFT, 680, "share because their effect would have been"))
    page += right_texts(r, 670, ["10", "33"])
    rows = page_rows(tmp_path, page)
    assert list(rows) == [
        "Derivatives - Balance, beginning of period",
        "Derivatives - Net change related to derivatives, net of tax of $(9), $0, $(8), and $0",
        "Derivatives - Total",
        "Equity awards excluded from diluted net income per share because their effect would "
        "have been",
    ]


def _fair_values(y: float, caption: str | None) -> list[Placed]:
    """A fair value table: "Pricing / Category" over the "Level 1" words, "Fair Value at" over
    the two dates."""
    r = [480.0, 570.0]
    page: list[Placed] = [(LEFT, y + 30, caption)] if caption else []
    page += [(250, y + 14, "Pricing"), (480, y + 20, "Fair Value at")]
    page += [(250, y + 5, "Category"), *right_texts(r, y + 5, ["April 30, 2023", "Jan 29, 2023"])]
    page += row(y - 10, "Money market funds", ["$ 1,502", "$ 1,777"], r)
    page.append((250, y - 10, "Level 1"))
    page += row(y - 22, "Corporate debt securities", ["6,716", "4,797"], r)
    page.append((250, y - 22, "Level 2"))
    return page


def test_a_header_line_over_the_inner_text_column_alone_is_a_header(tmp_path: Path) -> None:
    rows = page_rows(tmp_path, _fair_values(740, "Our fair values were as follows:"))
    assert rows["Corporate debt securities Level 2"] == (
        "Our fair values were as follows: Corporate debt securities Level 2: "
        "Fair Value at April 30, 2023 = 6,716; Fair Value at Jan 29, 2023 = 4,797"
    )


def test_a_table_overleaf_takes_a_title_only_from_a_table_with_its_columns(
    tmp_path: Path,
) -> None:
    """Overleaf, an uncaptioned table under the same columns as a table of the page before
    continues it; one under other columns is no part of it (its title would be a wrong
    caption)."""
    r = [400.0, 480.0, 560.0]
    first: list[Placed] = [(LEFT, 780, "Our debt maturities are as follows (in millions):")]
    first += right_texts(r, 766, ["2024", "2025", "Total"])
    first += row(752, "Notes", ["1,250", "1,000", "2,250"], r)
    first += row(740, "Leases", ["500", "400", "900"], r)
    second = right_texts(r, 780, ["2026", "2027", "Total"])
    second += row(766, "Notes", ["2,000", "1,000", "3,000"], r)
    second += row(754, "Leases", ["300", "200", "500"], r)
    pdf = write_positioned_pdf(tmp_path / "t.pdf", [first, second, _fair_values(740, None)])
    pages = list(extract_path(pdf).pages)
    assert rows_of(pages[1])["Notes"].startswith(
        "Our debt maturities are as follows (in millions): Notes:"
    )
    assert rows_of(pages[2])["Corporate debt securities Level 2"].startswith(
        "Corporate debt securities Level 2: Fair Value at"
    )
