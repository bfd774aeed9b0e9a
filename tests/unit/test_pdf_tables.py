"""PDF tables read as tables: PDFs laid out the way filings are (cells placed one by one, numbers
right-aligned, headers spanning columns) come out of extraction as self-describing rows."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
from pdf_layout import Placed, text_width, write_positioned_pdf

from deepresearch.providers.documents.extract import extract_path
from deepresearch.text.tables import parse_row

LEFT = 50.0


def num(right: float, y: float, value: str, dollar: float | None = None) -> list[Placed]:
    """A right-aligned value; with ``dollar``, a "$" printed at the cell's left like filings do."""
    out: list[Placed] = [(right - text_width(value), y, value)]
    if dollar is not None:
        out.append((dollar, y, "$"))
    return out


def centred(middle: float, y: float, text: str) -> Placed:
    return (middle - text_width(text) / 2, y, text)


def row(
    y: float,
    label: str,
    values: list[str],
    rights: list[float],
    x: float = LEFT,
    dollar: float = 62.0,
) -> list[Placed]:
    """A table row: the label at ``x``, each value right-aligned at its column's right edge."""
    out: list[Placed] = [(x, y, label)] if label else []
    for right, value in zip(rights, values, strict=True):
        sign = right - dollar if value.startswith("$ ") else None
        out += num(right, y, value.removeprefix("$ "), sign)
    return out


STATEMENT_RIGHTS = [330.0, 400.0, 480.0, 550.0]


def statement_page() -> list[Placed]:
    """An income statement: title, unit line, "Three/Nine Months Ended" each spanning two columns
    over two-line dates, a section label, "$" columns, "(265)", "—" and a wrapped row label."""
    r = STATEMENT_RIGHTS
    page: list[Placed] = [
        centred(306, 750, "CONDENSED STATEMENTS OF OPERATIONS (Unaudited)"),
        centred(306, 738, "(In millions, except per-share amounts)"),
        centred((r[0] + r[1]) / 2 - 15, 716, "Three Months Ended"),
        centred((r[2] + r[3]) / 2 - 15, 716, "Nine Months Ended"),
    ]
    for right, (day, year) in zip(
        r,
        [("July 1,", "2023"), ("June 25,", "2022"), ("July 1,", "2023"), ("June 25,", "2022")],
        strict=True,
    ):
        page += [centred(right - 18, 704, day), centred(right - 18, 694, year)]
    page.append((LEFT, 678, "Net sales:"))
    page += row(666, "Products", ["$ 60,584", "$ 63,355", "$ 230,901", "$ 245,241"], r, LEFT + 8)
    page += row(654, "Services", ["21,213", "19,604", "62,886", "58,941"], r, LEFT + 8)
    page += row(642, "Total net sales", ["81,797", "82,959", "293,787", "304,182"], r, LEFT + 16)
    page += row(626, "Other income/(expense), net", ["(265)", "(10)", "(594)", "(97)"], r)
    page += row(614, "Restructuring charges", ["—", "—", "12", "—"], r)
    page.append((LEFT, 602, "Income before provision for"))
    page += row(592, "income taxes", ["22,733", "23,066", "86,738", "94,446"], r, LEFT + 8)
    page += row(580, "Net income", ["$ 19,881", "$ 19,442", "$ 74,039", "$ 79,082"], r)
    return page


def rows_of(text: str) -> dict[str, str]:
    """Formatted rows of a page by label -> the line."""
    out = {}
    for line in text.split("\n"):
        parsed = parse_row(line)
        if parsed is not None:
            out[parsed.label] = line
    return out


def test_statement_rows_carry_title_unit_and_spanning_period_headers(tmp_path: Path) -> None:
    doc = extract_path(write_positioned_pdf(tmp_path / "statement.pdf", [statement_page()]))
    rows = rows_of(doc.pages[0])
    head = "Condensed statements of operations (in millions, except per-share amounts): "
    periods = [
        "Three Months Ended July 1, 2023",
        "Three Months Ended June 25, 2022",
        "Nine Months Ended July 1, 2023",
        "Nine Months Ended June 25, 2022",
    ]

    def line(label: str, values: list[str]) -> str:
        cells = "; ".join(f"{p} = {v}" for p, v in zip(periods, values, strict=True))
        return f"{head}{label}: {cells}"

    assert rows["Total net sales"] == line(
        "Total net sales", ["81,797", "82,959", "293,787", "304,182"]
    )
    # "$" columns lose the sign (the unit says the currency), a section label prefixes its rows
    assert rows["Net sales - Products"] == line(
        "Net sales - Products", ["60,584", "63,355", "230,901", "245,241"]
    )
    assert rows["Other income/(expense), net"].endswith(
        "July 1, 2023 = (265); Three Months Ended June 25, 2022 = (10); "
        "Nine Months Ended July 1, 2023 = (594); Nine Months Ended June 25, 2022 = (97)"
    )
    assert rows["Restructuring charges"] == line("Restructuring charges", ["—", "—", "12", "—"])
    # a label wrapped over two lines is one row; the flat row lines are gone from the text
    assert "Income before provision for income taxes" in rows
    assert rows["Net income"].endswith("Nine Months Ended June 25, 2022 = 79,082")
    assert "Total net sales 81,797" not in doc.pages[0]
    assert len(rows) == 7


def stacked_header_page() -> list[Placed]:
    """Headers right-aligned over their last column, a stacked "Percentage / Change" header, the
    unit as a stub on a header row, tight columns ("7% $ 211,915") and "*" cells."""
    r = [240.0, 300.0, 370.0, 440.0, 500.0, 570.0]
    page: list[Placed] = [(LEFT, 760, "Our results of operations were as follows:")]
    for right, text in [
        (r[1], "Three Months Ended"),
        (r[2], "Percentage"),
        (r[4], "Nine Months Ended"),
        (r[5], "Percentage"),
    ]:
        page.append((right - text_width(text), 744, text))
    page.append((LEFT, 732, "(In millions)"))
    for right, text in [
        (r[1], "March 31,"),
        (r[2], "Change"),
        (r[4], "March 31,"),
        (r[5], "Change"),
    ]:
        page.append((right - text_width(text), 732, text))
    for right, text in [(r[0], "2023"), (r[1], "2022"), (r[3], "2023"), (r[4], "2022")]:
        page.append((right - text_width(text), 720, text))
    tight = {"rights": r, "dollar": 48.0}  # "$" 7 points right of the previous column
    page += row(
        704, "Revenue", ["$ 52,857", "$ 49,360", "7%", "$ 155,737", "$ 146,407", "6%"], **tight
    )
    page += row(692, "Impairment", ["0", "0", "*", "152", "0", "*"], **tight)
    page += row(
        680, "Operating income", ["$ 22,352", "$ 20,364", "10%", "64,269", "62,849", "2%"], **tight
    )
    return page


def test_right_aligned_spans_stacked_headers_and_a_unit_stub(tmp_path: Path) -> None:
    doc = extract_path(write_positioned_pdf(tmp_path / "results.pdf", [stacked_header_page()]))
    rows = rows_of(doc.pages[0])
    assert rows["Revenue"] == (
        "Our results of operations were as follows (in millions): Revenue: "
        "Three Months Ended March 31, 2023 = 52,857; Three Months Ended March 31, 2022 = 49,360; "
        "Percentage Change = 7%; Nine Months Ended March 31, 2023 = 155,737; "
        "Nine Months Ended March 31, 2022 = 146,407; Percentage Change = 6%"
    )
    assert "Percentage Change = *" in rows["Impairment"]
    assert len(rows) == 3


def test_prose_stays_as_printed_and_a_page_without_tables_is_unchanged(tmp_path: Path) -> None:
    prose = [
        "Revenue grew because of higher cloud demand in fiscal 2023 and 2022.",
        "Operating expenses rose 12% on headcount, compared with 2022.",
        "We expect growth to continue in 2024.",
    ]
    plain: list[Placed] = [(LEFT, 740 - 14 * i, text) for i, text in enumerate(prose)]
    mixed = list(plain)
    mixed.append((LEFT, 690, "Segment revenue"))
    mixed += row(678, "", ["2023", "2022"], [400.0, 480.0])
    mixed += row(664, "Cloud", ["$ 1,200", "$ 1,000"], [400.0, 480.0])
    mixed += row(652, "Devices", ["300", "(45)"], [400.0, 480.0])
    mixed.append((LEFT, 630, "Devices revenue fell as fewer units shipped."))
    path = write_positioned_pdf(tmp_path / "mixed.pdf", [plain, mixed])
    doc = extract_path(path)

    pdf = pdfium.PdfDocument(path)
    bare = pdf[0].get_textpage().get_text_range().replace("\r\n", "\n")
    pdf.close()
    assert doc.pages[0] == bare  # nothing tabular: the text is the plain text
    lines = doc.pages[1].split("\n")
    assert lines[:3] == prose
    assert "Segment revenue: Cloud: 2023 = 1,200; 2022 = 1,000" in lines
    assert "Segment revenue: Devices: 2023 = 300; 2022 = (45)" in lines
    assert lines[-1] == "Devices revenue fell as fewer units shipped."


def test_a_date_centred_over_three_stacked_headers_reaches_all_three(tmp_path: Path) -> None:
    r = [230.0, 300.0, 370.0, 450.0, 520.0, 590.0]
    page: list[Placed] = [(LEFT, 760, "The components of our intangible assets are as follows:")]
    page += [centred(r[1] - 15, 744, "April 30, 2023"), centred(r[4] - 15, 744, "January 29, 2023")]
    stacks = [
        ("Gross", "Carrying", "Amount"),
        ("", "Accumulated", "Amortization"),
        ("", "Net", "Amount"),
    ]
    for group in (r[:3], r[3:]):
        for right, stack in zip(group, stacks, strict=True):
            for depth, word in enumerate(stack):
                if word:
                    page.append(centred(right - 15, 730 - 10 * depth, word))
    page.append(centred(306, 698, "(In millions)"))
    page += row(
        684,
        "Patents",
        ["$ 3,112", "$ (1,780)", "$ 1,332", "$ 3,093", "$ (1,614)", "$ 1,479"],
        r,
        dollar=55,
    )
    page += row(672, "Licenses", ["460", "(251)", "209", "446", "(249)", "197"], r)
    doc = extract_path(write_positioned_pdf(tmp_path / "intangibles.pdf", [page]))
    assert rows_of(doc.pages[0])["Patents"] == (
        "The components of our intangible assets are as follows (in millions): Patents: "
        "April 30, 2023 Gross Carrying Amount = 3,112; April 30, 2023 Accumulated Amortization = "
        "(1,780); April 30, 2023 Net Amount = 1,332; January 29, 2023 Gross Carrying Amount = "
        "3,093; January 29, 2023 Accumulated Amortization = (1,614); January 29, 2023 Net Amount "
        "= 1,479"
    )


def stub_header(title: str, stub: str, rights: list[float]) -> list[Placed]:
    """A title, "(In millions)" and a period stub at the label margin over the years 2023, 2022."""
    return [
        (LEFT, 760, title),
        (LEFT, 746, "(In millions)"),
        (LEFT, 730, stub),
        *(
            (right - text_width(y), 730, y)
            for right, y in zip(rights, ["2023", "2022"], strict=True)
        ),
    ]


def test_a_stub_period_header_and_sections_at_the_label_indent(tmp_path: Path) -> None:
    r = [480.0, 570.0]
    title = "Segment revenue and operating income were as follows:"
    page = [*stub_header(title, "Three Months Ended September 30,", r), (LEFT, 716, "Revenue")]
    page += row(704, "Cloud", ["$ 24,259", "$ 20,325"], r)
    page += row(692, "Devices", ["13,666", "13,332"], r)
    page += row(680, "Total", ["$ 37,925", "$ 33,657"], r, LEFT + 10)
    page.append((LEFT, 664, "Operating income"))
    page += row(652, "Cloud", ["$ 11,751", "$ 8,978"], r)
    page += row(640, "Devices", ["5,174", "4,217"], r)
    rows = rows_of(extract_path(write_positioned_pdf(tmp_path / "seg.pdf", [page])).pages[0])
    head = "Segment revenue and operating income were as follows (in millions): "
    periods = (
        "Three Months Ended September 30, 2023 = {}; Three Months Ended September 30, 2022 = {}"
    )
    assert rows["Revenue - Cloud"] == head + "Revenue - Cloud: " + periods.format(
        "24,259", "20,325"
    )
    assert rows["Revenue - Total"].endswith(periods.format("37,925", "33,657"))
    assert rows["Operating income - Devices"].endswith(periods.format("5,174", "4,217"))


def test_a_total_of_rows_before_its_section_closes_the_section(tmp_path: Path) -> None:
    """ "Net cash provided by operating activities", printed at the indent of the rows of the
    section above it, adds up every row since the statement began: it is that total, not one
    of the section's changes in assets."""
    r = [480.0, 570.0]
    page = stub_header("Statements of cash flows", "Nine Months Ended", r)
    page += row(716, "Net income", ["$ 2,954", "$ 6,749"], r)
    page.append((LEFT, 702, "Adjustments to reconcile net income:"))
    page += row(690, "Depreciation", ["1,147", "—"], r, LEFT + 10)
    page += row(678, "Stock-based compensation", ["1,549", "1,462"], r, LEFT + 10)
    page.append((LEFT, 664, "Changes in operating assets and liabilities:"))
    page += row(652, "Accounts receivable", ["(258)", "(1,033)"], r, LEFT + 10)
    page += row(640, "Inventories", ["(1,999)", "(1,974)"], r, LEFT + 10)
    page += row(628, "Net cash provided by operating activities", ["3,393", "5,204"], r, LEFT + 10)
    rows = rows_of(extract_path(write_positioned_pdf(tmp_path / "cash.pdf", [page])).pages[0])
    assert "Changes in operating assets and liabilities - Inventories" in rows, list(rows)
    assert "Net cash provided by operating activities" in rows, list(rows)


class _HyphenPage:
    """A text page as PDFium reads some filings' fonts: their hyphen comes back as U+FFFE."""

    def get_text_range(self) -> str:
        return "Our stock\ufffebased compensation grew.\r\nThe write\ufffedowns were small."


def test_a_hyphen_read_as_a_noncharacter_is_a_hyphen() -> None:
    """A compound ("stock" and "based" are words the document uses) keeps its hyphen once the
    document's pages are read together (``artefacts.mend_hyphens``)."""
    from deepresearch.text.artefacts import mend_hyphens
    from deepresearch.text.pdf_tables import page_text

    text = mend_hyphens([page_text(_HyphenPage()), "stock based; write downs"])[0]
    assert text == "Our stock-based compensation grew.\nThe write-downs were small.", text
