"""PDF table layouts that lost headers, labels or titles: a long label wrapped inside the body,
a heading printed under a table, one period header over two date columns, a table continued on
the next page, "$ —" blank cells, a title sentence wrapped under a heading, a headerless single
column. Each PDF is generated, cell by cell, the way filings print tables."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import Placed, text_width, write_positioned_pdf
from test_pdf_tables import LEFT, centred, row, rows_of

from deepresearch.providers.documents.extract import extract_path
from deepresearch.text.tables import parse_row

R2 = [480.0, 570.0]


def _pdf(tmp_path: Path, *pages: list[Placed]) -> list[str]:
    return list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", list(pages))).pages)


def _dated_head(y: float, dates: list[str], rights: list[float]) -> list[Placed]:
    return [(r - text_width(d), y, d) for r, d in zip(rights, dates, strict=True)]


def test_a_long_wrapped_label_keeps_the_rows_below_it_in_the_table(tmp_path: Path) -> None:
    page: list[Placed] = [centred(306, 760, "CONSOLIDATED BALANCE SHEETS")]
    page.append(centred(306, 748, "(in millions)"))
    page += _dated_head(730, ["December 31, 2022", "March 31, 2023"], R2)
    page += row(712, "Retained earnings", ["$ 85,915", "$ 82,915"], R2)
    # 15 words: prose by length, but it ends left of the value columns and leaves "(" open
    long_label = (
        "Common stock (par value $0.01, 100 shares authorized, 10 and 11 shares issued, 9 and"
    )
    page.append((LEFT, 700, long_label))
    page += row(690, "10 shares outstanding)", ["106", "107"], R2)
    page += row(676, "Treasury stock, at cost", ["(1,837)", "(7,837)"], R2)
    page += row(664, "Total stockholders' equity", ["138,245", "137,489"], R2)
    rows = rows_of(_pdf(tmp_path, page)[0])
    head = "Consolidated balance sheets (in millions): "
    assert rows["Treasury stock, at cost"] == (
        f"{head}Treasury stock, at cost: December 31, 2022 = (1,837); March 31, 2023 = (7,837)"
    )
    assert f"{long_label} 10 shares outstanding)" in rows
    assert not any("column " in line for line in rows.values())


def test_a_heading_under_the_table_is_not_part_of_the_last_label(tmp_path: Path) -> None:
    page: list[Placed] = [(LEFT, 760, "Net sales by category were as follows (in millions):")]
    page += _dated_head(744, ["2023", "2022"], R2)
    page += row(730, "iPad", ["5,791", "7,224"], R2, LEFT + 10)
    page += row(718, "Total net sales", ["81,797", "82,959"], R2, LEFT + 10)
    page.append((LEFT, 690, "iPhone"))  # a heading that starts in lower case, 28 points below
    page.append((LEFT, 676, "iPhone net sales decreased during the quarter."))
    text = _pdf(tmp_path, page)[0]
    assert "Total net sales" in rows_of(text)
    assert "iPhone" in text.split("\n")


def test_one_period_header_over_the_second_date_column_heads_both(tmp_path: Path) -> None:
    r = [400.0, 515.0, 590.0]  # the header sits over the second column's territory only
    page: list[Placed] = [
        (LEFT, 770, "The following table shows net sales (dollars in millions):"),
        (r[1] - text_width("Three Months Ended"), 756, "Three Months Ended"),
    ]
    page += _dated_head(746, ["December 31,", "December 25,"], r[:2])
    page += _dated_head(736, ["2022", "2021", "Change"], r)
    page += row(720, "Services", ["20,766", "19,516", "6 %"], r, LEFT + 10)
    page += row(708, "Total net sales", ["$ 117,154", "$ 123,945", "(5)%"], r, LEFT + 10)
    assert rows_of(_pdf(tmp_path, page)[0])["Total net sales"] == (
        "The following table shows net sales (dollars in millions): Total net sales: "
        "Three Months Ended December 31, 2022 = 117,154; "
        "Three Months Ended December 25, 2021 = 123,945; Change = (5)%"
    )


def test_a_table_continued_on_the_next_page_keeps_headers_title_and_unit(tmp_path: Path) -> None:
    first: list[Placed] = [centred(306, 760, "CONSOLIDATED BALANCE SHEETS")]
    first.append(centred(306, 748, "(in millions)"))
    first += _dated_head(730, ["June 30, 2023", "June 30, 2022"], R2)
    first += row(712, "Cash", ["$ 1,200", "$ 1,000"], R2)
    first += row(700, "Inventories", ["300", "250"], R2)
    second: list[Placed] = row(760, "Long-term debt", ["48,744", "58,919"], R2)
    second += row(748, "Retained earnings", ["85,915", "82,915"], R2)
    rows = rows_of(_pdf(tmp_path, first, second)[1])
    assert rows["Long-term debt"] == (
        "Consolidated balance sheets (in millions): Long-term debt: "
        "June 30, 2023 = 48,744; June 30, 2022 = 58,919"
    )


def test_dollar_dash_cells_are_blank_values_not_headers(tmp_path: Path) -> None:
    r = [300.0, 380.0, 460.0]
    page: list[Placed] = [(LEFT, 760, "Cash and marketable securities (in millions):")]
    page += _dated_head(744, ["Cost", "Gains", "Fair Value"], r)
    page += row(730, "Cash", ["$ 12,852", "$ —", "$ 12,852"], r, dollar=50)
    page += row(718, "Mutual funds", ["252", "—", "220"], r)
    rows = rows_of(_pdf(tmp_path, page)[0])
    assert rows["Cash"].endswith("Cash: Cost = 12,852; Gains = —; Fair Value = 12,852")
    assert rows["Mutual funds"].endswith("Cost = 252; Gains = —; Fair Value = 220")


def test_the_title_is_the_whole_sentence_not_its_last_line_or_the_heading(
    tmp_path: Path,
) -> None:
    page: list[Placed] = [
        centred(306, 780, "NOTE 16 — ACCUMULATED OTHER COMPREHENSIVE INCOME"),
        (
            LEFT,
            766,
            "Amounts were reclassified during the year. The following table presents, for the",
        ),
        (LEFT, 756, "periods indicated, certain items of our statements of income expressed as a"),
        (LEFT, 746, "percentage of revenue."),
    ]
    page += _dated_head(730, ["2023", "2022"], R2)
    page += row(716, "Cost of revenue", ["30.1%", "35.4%"], R2)
    page += row(704, "Gross profit", ["69.9%", "64.6%"], R2)
    (parsed,) = [p for p in map(parse_row, _pdf(tmp_path, page)[0].split("\n")) if p][:1]
    assert parsed.title == (
        "The following table presents, for the periods indicated, certain items of our "
        "statements of income expressed as a percentage of revenue."
    )


def test_a_headerless_column_and_a_stub_line_over_the_labels(tmp_path: Path) -> None:
    page: list[Placed] = [
        (LEFT, 770, "Future amortization expense as of September 30, 2022 was as follows:"),
        (LEFT, 756, "(In millions)"),
        (LEFT, 740, "Year Ending June 30,"),
    ]
    page += row(728, "2024", ["$ 2,408"], R2[1:])
    page += row(716, "2025", ["1,666"], R2[1:])
    page += row(704, "Total", ["$ 4,074"], R2[1:], LEFT + 10)
    rows = rows_of(_pdf(tmp_path, page)[0])
    assert rows["Year Ending June 30, - 2025"] == (
        "Future amortization expense as of September 30, 2022 was as follows (in millions): "
        "Year Ending June 30, - 2025: September 30, 2022 = 1,666"
    )


def test_a_date_over_stacked_tables_dates_each_column_and_the_caption_carries(
    tmp_path: Path,
) -> None:
    r = [300.0, 380.0, 460.0]
    page: list[Placed] = [
        (LEFT, 780, "Cash and securities by category were as follows (in millions):")
    ]
    for y, date in ((764, "June 25, 2022"), (700, "September 25, 2021")):
        page.append(centred(r[2] - 15, y, date))  # the date sits over the last column only
        page += _dated_head(y - 12, ["Cost", "Gains", "Fair Value"], r)
        page += row(y - 26, "Cash", ["$ 12,852", "$ —", "$ 12,852"], r, dollar=50)
        page += row(y - 38, "Mutual funds", ["252", "—", "220"], r)
    lines = [p for p in map(parse_row, _pdf(tmp_path, page)[0].split("\n")) if p]
    assert [(p.title, p.unit) for p in lines] == [
        ("Cash and securities by category were as follows", "in millions")
    ] * 4
    assert lines[2].cells == (
        ("September 25, 2021 Cost", "12,852"),
        ("September 25, 2021 Gains", "—"),
        ("September 25, 2021 Fair Value", "12,852"),
    )


def test_a_header_line_with_a_unit_stub_and_a_text_column_header_is_a_header(
    tmp_path: Path,
) -> None:
    r = [330.0, 400.0, 470.0]
    page: list[Placed] = [(LEFT, 780, "Investments were as follows:")]
    page += _dated_head(762, ["Adjusted", "Unrealized", "Unrealized"], r)
    page += [(LEFT, 752, "(In millions)"), (200.0, 752, "Level")]
    page += _dated_head(752, ["Cost", "Gains", "Losses"], r)
    page += [(200.0, 736, "Level 2"), *row(736, "Commercial paper", ["$ 2,500", "$ 0", "$ 0"], r)]
    page += [
        (200.0, 724, "Level 1"),
        *row(724, "Treasury securities", ["79,696", "29", "(2,178)"], r),
    ]
    rows = rows_of(_pdf(tmp_path, page)[0])
    assert rows["Treasury securities Level 1"].startswith(
        "Investments were as follows (in millions): Treasury securities Level 1: "
    )
    assert rows["Treasury securities Level 1"].endswith(
        "Unrealized Gains = 29; Unrealized Losses = (2,178)"
    )
