"""Tables of HTML, DOCX, XLSX, PPTX, Markdown and text files read as tables: documents generated the way filings and
spreadsheets lay them out (a spanning period header over its dates, "$" and ")" in cells of their
own, a unit line, merged header cells) give rows that carry header, title and unit."""

from __future__ import annotations

from pathlib import Path

import docx
import openpyxl
import pptx
from pptx.util import Inches

from deepresearch.providers.documents.extract import extract_bytes, extract_path
from deepresearch.providers.documents.extracted_doc import html_doc
from deepresearch.text.grid_tables import rows_from_pipes
from deepresearch.text.tables import parse_row

PERIODS = ("Three Months Ended July 1, 2023", "Three Months Ended June 25, 2022")


def _rows(text: str) -> dict[str, str]:
    return {p.label: line for line in text.split("\n") if (p := parse_row(line)) is not None}


def _line(head: str, label: str, a: str, b: str) -> str:
    return f"{head}{label}: {PERIODS[0]} = {a}; {PERIODS[1]} = {b}"


def test_html_filing_table_with_dollar_cells_and_a_spanning_period(tmp_path: Path) -> None:
    html = """<html><head><title>Q</title></head><body><article>
<p>Some introduction text that is long enough for the extractor to keep the article body.</p>
<h2>Condensed Consolidated Statements of Operations</h2>
<p>(In millions, except per-share amounts)</p>
<table>
<tr><td></td><td colspan="4">Three Months Ended</td></tr>
<tr><td></td><td colspan="2">July 1, 2023</td><td colspan="2">June 25, 2022 (Unaudited)</td></tr>
<tr><td>Net sales:</td><td></td><td></td><td></td><td></td></tr>
<tr><td>Products</td><td>$</td><td>60,584</td><td>$</td><td>63,355</td></tr>
<tr><td>Total net sales</td><td>$</td><td>81,797</td><td>$</td><td>82,959</td></tr>
<tr><td>Other income/(expense), net</td><td></td><td>(265</td><td>)</td><td>—</td></tr>
</table>
<p>More text follows here about the results of the quarter and the outlook for the year.</p>
</article></body></html>"""
    rows = _rows(html_doc(html, "q.html").pages[0])
    head = (
        "Condensed Consolidated Statements of Operations (in millions, except per-share amounts): "
    )
    assert rows["Total net sales"] == _line(head, "Total net sales", "81,797", "82,959")
    assert rows["Net sales - Products"] == _line(head, "Net sales - Products", "60,584", "63,355")
    assert rows["Other income/(expense), net"].endswith(f"{PERIODS[0]} = (265); {PERIODS[1]} = —")


def test_markdown_and_text_pipe_tables_are_rows_with_their_headers(tmp_path: Path) -> None:
    """A Markdown corpus file, a text file and a fetched text page print tables as pipes: a body
    row alone ("| Cloud | 1,200 | 1,000 |") would name no column once cut into passages."""
    table = (
        "Segment results (in millions)\n\n"
        f"| | {PERIODS[0]} | {PERIODS[1]} |\n| --- | --- | --- |\n"
        "| Cloud | 1,200 | 1,000 |\n| Devices | (45) | — |\n\nThe quarter went well.\n"
    )
    want = _line("Segment results (in millions): ", "Cloud", "1,200", "1,000")
    for name in ("notes.md", "notes.txt"):
        (tmp_path / name).write_text(table.replace("\n", "\r\n"))
        doc = extract_path(tmp_path / name)
        assert _rows(doc.pages[0])["Cloud"] == want, doc.pages[0]
        assert "The quarter went well." in doc.pages[0] and "\r" not in doc.pages[0]
    fetched = extract_bytes(table.encode(), "text", "notes")
    assert _rows(fetched.pages[0])["Cloud"] == want


def test_docx_table_with_merged_period_cells_under_a_heading_and_unit(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Segment results", level=2)
    document.add_paragraph("(In millions)")
    table = document.add_table(rows=4, cols=3)
    table.cell(0, 1).merge(table.cell(0, 2)).text = "Three Months Ended"
    for col, text in enumerate(["", "July 1, 2023", "June 25, 2022"]):
        table.cell(1, col).text = text
    for col, text in enumerate(["Cloud", "1,200", "1,000"]):
        table.cell(2, col).text = text
    for col, text in enumerate(["Devices", "(45)", "—"]):
        table.cell(3, col).text = text
    path = tmp_path / "segments.docx"
    document.save(str(path))
    rows = _rows(extract_path(path).pages[0])
    assert rows["Devices"] == _line("Segment results (in millions): ", "Devices", "(45)", "—")


def test_xlsx_sheet_with_a_unit_row_and_a_merged_period_header(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Income statement"
    sheet.append(["(In millions)"])
    sheet.append([None, "Three Months Ended", None])
    sheet.merge_cells("B2:C2")
    sheet.append([None, "July 1, 2023", "June 25, 2022"])
    sheet.append(["Total net sales", 81797, 82959])
    sheet.append(["Other income", -265, None])
    path = tmp_path / "income.xlsx"
    book.save(str(path))
    rows = _rows(extract_path(path).pages[0])
    head = "Income statement (in millions): "
    assert rows["Total net sales"] == _line(head, "Total net sales", "81797", "82959")
    assert rows["Other income"] == f"{head}Other income: {PERIODS[0]} = -265"


def test_pptx_table_takes_the_slide_title(tmp_path: Path) -> None:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    assert slide.shapes.title is not None
    slide.shapes.title.text = "Revenue by region (in millions)"
    shape = slide.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(2))
    cells = [["", "2023", "2022"], ["Europe", "$ 1,200", "$ 1,000"], ["Asia", "300", "(45)"]]
    for r, values in enumerate(cells):
        for c, value in enumerate(values):
            shape.table.cell(r, c).text = value
    path = tmp_path / "deck.pptx"
    deck.save(str(path))
    rows = _rows(extract_path(path).pages[0])
    assert rows["Europe"] == "Revenue by region (in millions): Europe: 2023 = 1,200; 2022 = 1,000"


def test_stacked_year_header_rows_join_and_a_caption_row_is_the_title() -> None:
    text = "\n".join(
        [
            "| Net revenue (in millions) | | |",
            "| | Fiscal | Fiscal |",
            "| | 2023 | 2022 |",
            "| Data Center | 14,514 | 3,833 |",
        ]
    )
    assert rows_from_pipes(text) == (
        "Net revenue (in millions): Data Center: Fiscal 2023 = 14,514; Fiscal 2022 = 3,833"
    )
