"""PDF table layouts that came out wrong: a label's wrapped end read as a value ("2021)",
"$(10)"), a total printed without a label, column headers of different heights (bottom-aligned)
doubled, a period header set a little higher than its neighbour heading both, running heads
taken as titles, page footers read as rows, figures of an infographic given "column N" headers.
Each PDF is generated cell by cell, the way filings print tables."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import Placed, text_width, write_positioned_pdf
from test_pdf_tables import LEFT, centred, row, rows_of

from deepresearch.providers.documents.extract import extract_path
from deepresearch.text.tables import parse_row

R2 = [480.0, 570.0]


def _pages(tmp_path: Path, *pages: list[Placed]) -> list[str]:
    return list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", list(pages))).pages)


def _right(rights: list[float], y: float, texts: list[str]) -> list[Placed]:
    return [(r - text_width(t), y, t) for r, t in zip(rights, texts, strict=True) if t]


def _balance_sheet(y: float = 760) -> list[Placed]:
    page: list[Placed] = [(LEFT, y, "Consolidated Balance Sheets"), (LEFT, y - 14, "(In millions)")]
    page += _right(R2, y - 14, ["Oct 1, 2022", "Dec 25, 2021"])
    page += row(y - 30, "Cash and cash equivalents", ["$ 4,529", "$ 4,827"], R2)
    page += row(y - 42, "Debt", ["37,240", "33,510"], R2)
    return page


def test_a_wrapped_label_ending_in_a_parenthesised_year_stays_a_label(tmp_path: Path) -> None:
    page = _balance_sheet()
    page.append((LEFT, 706, "Common stock, 4,127 issued (4,070 issued as of December 25,"))
    page += row(696, "2021)", ["30,912", "28,006"], R2)
    page += row(684, "Retained earnings", ["71,024", "68,265"], R2)
    rows = rows_of(_pages(tmp_path, page)[0])
    assert rows["Retained earnings"] == (
        "Consolidated Balance Sheets (in millions): Retained earnings: "
        "Oct 1, 2022 = 71,024; Dec 25, 2021 = 68,265"
    )
    label = "Common stock, 4,127 issued (4,070 issued as of December 25, 2021)"
    assert rows[label].endswith(f"{label}: Oct 1, 2022 = 30,912; Dec 25, 2021 = 28,006")
    assert not any("column " in line for line in rows.values())


def test_an_amount_at_the_label_margin_is_the_wrapped_end_of_the_label(tmp_path: Path) -> None:
    page = _balance_sheet()
    page.append((LEFT, 706, "Reclassification adjustment for losses, net of tax of $0 and"))
    page += row(696, "$(10)", ["6", "33"], R2)
    page += row(684, "Comprehensive income", ["(4,833)", "3,686"], R2)
    rows = rows_of(_pages(tmp_path, page)[0])
    label = "Reclassification adjustment for losses, net of tax of $0 and $(10)"
    assert rows[label].endswith(f"{label}: Oct 1, 2022 = 6; Dec 25, 2021 = 33")
    assert rows["Comprehensive income"].endswith("Oct 1, 2022 = (4,833); Dec 25, 2021 = 3,686")


_REPURCHASE_RIGHTS = [300.0, 380.0, 470.0, 570.0]


def _repurchases() -> list[Placed]:
    """Headers of 3 and 6 lines, bottom-aligned, "Period" over the labels on the last line."""
    r = _REPURCHASE_RIGHTS
    page: list[Placed] = [(LEFT, 770, "Following are our monthly share repurchases:")]
    tall = ["Total Number", "of Shares", "Purchased as", "Part of Publicly", "Announced Plans"]
    for depth, words in enumerate(
        zip(
            tall,
            [
                "Approximate",
                "Dollar Value of",
                "Shares That May",
                "Yet Be Purchased",
                "Under the Plans",
            ],
            strict=True,
        )
    ):
        page += _right(r[2:], 756 - 10 * depth, list(words))
    page += _right(r[:2], 726, ["Total Number", "Average"])
    page += _right(r[:2], 716, ["of Shares", "Price Paid"])
    page.append((LEFT, 706, "Period"))
    page += _right(r, 706, ["Purchased", "Per Share", "or Programs", "or Programs"])
    page += row(690, "July 2022", ["9,204,200", "$ 260.53", "9,204,200", "$ 38,311"], r)
    page += row(678, "August 2022", ["5,570,365", "283.04", "5,570,365", "36,735"], r)
    page += _right(r, 662, ["14,774,565", "", "14,774,565", ""])
    return page


def test_headers_of_different_heights_are_each_their_columns_own(tmp_path: Path) -> None:
    rows = rows_of(_pages(tmp_path, _repurchases())[0])
    assert rows["July 2022"].endswith(
        "July 2022: Total Number of Shares Purchased = 9,204,200; "
        "Average Price Paid Per Share = 260.53; "
        "Total Number of Shares Purchased as Part of Publicly Announced Plans or Programs "
        "= 9,204,200; Approximate Dollar Value of Shares That May Yet Be Purchased Under the "
        "Plans or Programs = 38,311"
    )


def test_a_total_printed_without_a_label_is_the_total(tmp_path: Path) -> None:
    rows = rows_of(_pages(tmp_path, _repurchases())[0])
    assert "(row)" not in rows
    assert rows["Total"].endswith(
        "Total: Total Number of Shares Purchased = 14,774,565; "
        "Total Number of Shares Purchased as Part of Publicly Announced Plans or Programs "
        "= 14,774,565"
    )


def test_a_value_row_without_a_label_that_adds_up_nothing_stays_unlabelled(
    tmp_path: Path,
) -> None:
    page = _repurchases()[:-2]  # the total line goes; a line of other figures takes its place
    page += _right(_REPURCHASE_RIGHTS, 662, ["1,000", "", "2,000", ""])
    assert "Total" not in rows_of(_pages(tmp_path, page)[0])


def test_a_period_header_set_higher_than_its_neighbour_heads_only_its_columns(
    tmp_path: Path,
) -> None:
    r = [330.0, 400.0, 480.0, 550.0]
    page: list[Placed] = [(LEFT, 780, "The calculation of diluted shares (in millions):")]
    for middle, period, y in (((r[2] + r[3]) / 2, "Nine", 765), ((r[0] + r[1]) / 2, "Three", 761)):
        page.append(centred(middle - 15, y, f"{period} Months Ended"))  # "Nine" 4 points higher
        page.append(centred(middle - 15, y - 10, "September 30,"))
    page += _right(r, 739, ["2021", "2022", "2021", "2022"])
    page += row(725, "Basic shares", ["10,132", "10,191", "10,103", "10,178"], r)
    page += row(713, "Diluted shares", ["10,309", "10,331", "10,287", "10,178"], r)
    assert rows_of(_pages(tmp_path, page)[0])["Basic shares"].endswith(
        "Basic shares: Three Months Ended September 30, 2021 = 10,132; "
        "Three Months Ended September 30, 2022 = 10,191; "
        "Nine Months Ended September 30, 2021 = 10,103; "
        "Nine Months Ended September 30, 2022 = 10,178"
    )


def _with_running_lines(n: int, body: list[Placed]) -> list[Placed]:
    return [
        (LEFT, 780, "Table of Contents"),
        *body,
        (LEFT, 40, f"Example Corp. | Q3 2023 Form 10-Q | {n}"),
    ]


def test_running_heads_and_feet_are_no_title_and_no_row(tmp_path: Path) -> None:
    prose: list[Placed] = [(LEFT, 740, "Revenue grew in every segment during the quarter.")]
    table: list[Placed] = _right(R2, 760, ["2023", "2022"])
    table += row(746, "Cloud", ["1,200", "1,000"], R2)
    table += row(734, "Devices", ["300", "(45)"], R2)
    pages = _pages(
        tmp_path,
        _with_running_lines(1, prose),
        _with_running_lines(2, prose),
        _with_running_lines(3, table),
    )
    parsed = [p for p in map(parse_row, pages[2].split("\n")) if p]
    assert [(p.title, p.label) for p in parsed] == [("", "Cloud"), ("", "Devices")]
    # a foot printed on every page, the first included, is running matter: out of the text
    # (``artefacts.drop_running_matter``); the head stays, it names the document
    assert not any("Form 10-Q" in line for line in pages[2].split("\n"))
    assert "Table of Contents" in pages[2].split("\n")


def test_a_page_footer_far_below_a_table_is_no_row_of_it(tmp_path: Path) -> None:
    page = _balance_sheet()
    page += row(706, "Retained earnings", ["71,024", "68,265"], R2)
    page.append((LEFT, 660, "See accompanying notes."))
    page += row(620, "Financial Statements   Balance Sheets", ["5"], R2[1:])
    rows = rows_of(_pages(tmp_path, page)[0])
    assert list(rows) == ["Cash and cash equivalents", "Debt", "Retained earnings"]


def test_figures_with_no_header_at_all_stay_as_printed(tmp_path: Path) -> None:
    r = [200.0, 330.0, 460.0]
    page: list[Placed] = [(LEFT, 770, "A Quarter in Review")]
    page += _right(r, 740, ["15.3", "0.59", "1.5"])
    page += _right(r, 720, ["18.4", "53.1%", "(1.8)"])
    page += _right(r, 700, ["12", "7", "9"])
    text = _pages(tmp_path, page)[0]
    assert rows_of(text) == {}
    assert "18.4 53.1% (1.8)" in text.split("\n")


def test_a_wrapped_section_label_and_an_unaudited_line_under_the_caption(
    tmp_path: Path,
) -> None:
    page: list[Placed] = [
        (LEFT, 780, "CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME"),
        (LEFT, 768, "(in millions)"),
        (LEFT, 756, "(unaudited)"),
    ]
    page += _right(R2, 740, ["2022", "2023"])
    page += row(726, "Net income", ["(3,844)", "3,172"], R2)
    page.append((LEFT, 714, "Net change in unrealized gains on available-for-sale debt"))
    page.append((LEFT, 704, "securities:"))
    page += row(692, "Unrealized gains", ["(662)", "95"], R2, LEFT + 10)
    rows = rows_of(_pages(tmp_path, page)[0])
    assert rows[
        "Net change in unrealized gains on available-for-sale debt securities - Unrealized gains"
    ] == (
        "Consolidated statements of comprehensive income (in millions): Net change in "
        "unrealized gains on available-for-sale debt securities - Unrealized gains: "
        "2022 = (662); 2023 = 95"
    )


def test_a_unit_line_at_the_left_between_header_lines_keeps_the_headers_above(
    tmp_path: Path,
) -> None:
    page: list[Placed] = [(LEFT, 780, "Results of Operations")]
    page.append(centred((R2[0] + R2[1]) / 2 - 20, 762, "Three Months Ended"))
    page += _right(R2, 750, ["Q2 2023", "Q2 2022"])
    page.append((LEFT, 744, "(In millions)"))  # set between two header lines
    page += _right(R2, 738, ["Amount", "Amount"])
    page += row(724, "Net revenue", ["$ 12,949", "$ 15,321"], R2)
    page += row(712, "Cost of sales", ["8,311", "9,734"], R2)
    assert rows_of(_pages(tmp_path, page)[0])["Net revenue"] == (
        "Results of Operations (in millions): Net revenue: "
        "Three Months Ended Q2 2023 Amount = 12,949; Three Months Ended Q2 2022 Amount = 15,321"
    )
