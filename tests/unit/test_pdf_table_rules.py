"""Rules of the PDF table reader that no filing-shaped layout exercised alone: a label set a
little above its figures, a header over an inner text column most rows fill, a lettered list
item that is no wrapped label, a footnote mark set small on the baseline, a period that reaches
its outer columns once the dates under it have, a caption wrapped over lines at a page's foot
and a table overleaf set a few points off its predecessor's columns. Geometry is generated: word
boxes where a rule is about points, PDFs (cell by cell) where it is about a page."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import Placed, write_positioned_pdf
from test_pdf_table_columns import page_rows, right_texts
from test_pdf_tables import LEFT, row, rows_of

from deepresearch.providers.documents.extract import extract_path
from deepresearch.text.header_columns import column_headers
from deepresearch.text.table_layout import find_tables
from deepresearch.text.visual_rows import Frag, VisualRow, Word, visual_rows


def _word(text: str, x0: float, x1: float, y0: float, height: float = 7.0) -> Word:
    return Word(text, x0, x1, y0, y0 + height, 0)


def test_a_label_set_a_little_above_its_figures_is_their_row() -> None:
    """Figures printed 5 points under their label (more than the row band, less than a
    line's height) are its row (``labels_set_apart``), though the label starts in lower
    case ("iPad"): no wrapped end of the label above."""
    words = [
        _word("2023", 300, 320, 740),
        _word("2022", 380, 400, 740),
        _word("Mac", 50, 70, 725),
        _word("7,382", 295, 320, 725),
        _word("7,650", 375, 400, 725),
        _word("iPad", 50, 70, 710),
        _word("5,791", 295, 320, 705),
        _word("7,224", 375, 400, 705),
        _word("Total", 50, 75, 690),
        _word("13,173", 290, 320, 690),
        _word("14,874", 370, 400, 690),
    ]
    (table,) = find_tables(words)
    cells = {r.label: r.cells for _, r in table.rows}
    assert list(cells) == ["Mac", "iPad", "Total"]
    assert cells["iPad"] == (("2023", "5,791"), ("2022", "7,224"))


def test_a_header_over_the_inner_text_column_on_most_rows_is_a_header(tmp_path: Path) -> None:
    """ "Pricing / Category" over the inner words of two rows in three (the third's "Various"
    set right of it): still the inner column's header, not the caption."""
    r = [480.0, 570.0]
    page: list[Placed] = [(LEFT, 770, "Our fair values were as follows:")]
    page += [(250, 754, "Pricing"), (480, 760, "Fair Value at")]
    page += [(250, 745, "Category"), *right_texts(r, 745, ["April 30, 2023", "Jan 29, 2023"])]
    for y, label, inner, x, values in (
        (730, "Money market funds", "Level 1", 250.0, ["$ 1,502", "$ 1,777"]),
        (718, "Corporate debt securities", "Level 2", 250.0, ["6,716", "4,797"]),
        (706, "Interest rate swaps", "Various", 300.0, ["12", "15"]),
    ):
        page += [*row(y, label, values, r), (x, y, inner)]
    rows = page_rows(tmp_path, page)
    assert rows["Interest rate swaps Various"] == (
        "Our fair values were as follows: Interest rate swaps Various: "
        "Fair Value at April 30, 2023 = 12; Fair Value at Jan 29, 2023 = 15"
    )


def test_a_lettered_list_item_opens_a_section_not_the_label_above(tmp_path: Path) -> None:
    """ "b) Liabilities" starts in lower case but opens an item of a lettered list: it is no
    wrapped end of the row above (``_ENUMERATOR``)."""
    r = [400.0, 480.0]
    page: list[Placed] = [(LEFT, 780, "Selected balances were as follows:")]
    page += right_texts(r, 766, ["2023", "2022"])
    page.append((LEFT, 752, "a) Assets"))
    page += row(740, "Cash", ["100", "200"], r, LEFT + 8)
    page += row(728, "Receivables", ["50", "60"], r, LEFT + 8)
    page.append((LEFT, 716, "b) Liabilities"))
    page += row(704, "Payables", ["30", "40"], r, LEFT + 8)
    assert list(page_rows(tmp_path, page)) == [
        "a) Assets - Cash",
        "a) Assets - Receivables",
        "b) Liabilities - Payables",
    ]


def test_a_small_mark_on_the_baseline_does_not_pull_the_row_down() -> None:
    """A footnote mark set small and low in its row moves no band: the line 6 points under
    the row stays a row of its own."""
    rows = visual_rows(
        [
            _word("Revenue", 50, 90, 100, 10),
            _word("(1)", 92, 100, 99, 4),
            _word("Cost", 50, 70, 94, 10),
        ]
    )
    assert [r.text for r in rows] == ["Revenue (1)", "Cost"]


def test_a_rows_band_is_the_mean_of_its_full_height_words() -> None:
    """The band follows the mean centre of the row's full-height words; a small mark among
    them counts in neither the sum nor the count."""
    rows = visual_rows(
        [
            _word("Net", 50, 65, 100, 10),  # centre 105
            _word("*", 67, 70, 102, 4),  # centre 104, small: no part of the mean
            _word("sales", 80, 105, 98, 10),  # centre 103: the mean is 104
            _word("1,234", 300, 325, 94.6, 10),  # centre 99.6: 4.4 under the mean
        ]
    )
    assert [r.text for r in rows] == ["Net * sales 1,234"]


def _head(*frags: tuple[str, float, float]) -> VisualRow:
    return VisualRow([Frag([_word(t, x0, x1, 700)]) for t, x0, x1 in frags], kind="head")


def test_a_period_reaches_its_outer_columns_once_the_dates_under_it_have() -> None:
    """ "Year Ended" centred over four columns, reaching the middle two; each date centred
    over its pair, reaching its inner column only: the dates widen to their pairs first, then
    the period to all four (``_widen`` repeats while it widens)."""
    columns = [(60.0, 80.0), (120.0, 200.0), (220.0, 300.0), (340.0, 360.0)]
    slots = [(40.0, 100.0), (100.0, 210.0), (210.0, 320.0), (320.0, 390.0)]
    heads = [
        _head(("Year Ended", 170, 250)),
        _head(("June 30, 2023", 110, 150), ("June 30, 2022", 270, 310)),
        _head(("Rate", 60, 80), ("Amount", 160, 200), ("Amount", 260, 300), ("Rate", 340, 360)),
    ]
    headers, _ = column_headers(heads, slots, columns, (50.0, []))
    assert [" ".join(h) for h in headers] == [
        "Year Ended June 30, 2023 Rate",
        "Year Ended June 30, 2023 Amount",
        "Year Ended June 30, 2022 Amount",
        "Year Ended June 30, 2022 Rate",
    ]


def test_a_caption_wrapped_over_lines_at_the_foot_names_the_table_overleaf(
    tmp_path: Path,
) -> None:
    """The sentence introducing the table overleaf wraps over two lines: its title is the
    whole sentence, not its last line."""
    r = [400.0, 480.0]
    first: list[Placed] = [(LEFT, 780, "We lease offices and data centers under leases.")]
    first.append((LEFT, 700, "The following table summarizes the components of our"))
    first.append((LEFT, 690, "lease costs (in millions):"))
    second: list[Placed] = right_texts(r, 780, ["2023", "2022"])
    second += row(766, "Operating lease cost", ["310", "290"], r)
    second += row(754, "Finance lease cost", ["45", "40"], r)
    pages = list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", [first, second])).pages)
    assert rows_of(pages[1])["Finance lease cost"] == (
        "The following table summarizes the components of our lease costs (in millions): "
        "Finance lease cost: 2023 = 45; 2022 = 40"
    )


def _two_pages(tmp_path: Path, shift: float, headed: bool) -> str:
    """A captioned table, then overleaf a table under its columns moved ``shift`` points
    right, with its own headers or none: the second page's text."""
    r = [400.0, 480.0, 560.0]
    first: list[Placed] = [(LEFT, 780, "Our debt maturities are as follows (in millions):")]
    first += right_texts(r, 766, ["2024", "2025", "Total"])
    first += row(752, "Notes", ["1,250", "1,000", "2,250"], r)
    first += row(740, "Leases", ["500", "400", "900"], r)
    moved = [x + shift for x in r]
    second = right_texts(moved, 780, ["2026", "2027", "Total"]) if headed else []
    second += row(766, "Bonds", ["2,000", "1,000", "3,000"], moved)
    second += row(754, "Loans", ["300", "200", "500"], moved)
    return list(extract_path(write_positioned_pdf(tmp_path / "t.pdf", [first, second])).pages)[1]


def test_a_table_overleaf_a_few_points_off_still_continues(tmp_path: Path) -> None:
    """Right edges 6 points off the table before: overleaf without headers it continues it
    (headers, title and unit); with headers of its own and no caption it takes its title
    from a table of the page before 10 points off."""
    assert rows_of(_two_pages(tmp_path, 6, headed=False))["Loans"] == (
        "Our debt maturities are as follows (in millions): Loans: "
        "2024 = 300; 2025 = 200; Total = 500"
    )
    assert rows_of(_two_pages(tmp_path, 10, headed=True))["Loans"] == (
        "Our debt maturities are as follows (in millions): Loans: "
        "2026 = 300; 2027 = 200; Total = 500"
    )
