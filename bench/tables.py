"""PDF table reconstruction over a corpus: rows recovered and the cost over bare text extraction.

Runs bare pypdfium2 text extraction and our extraction (``text.pdf_tables.DocumentTables``) in one
process, interleaved per file so machine noise hits both alike, and counts the self-describing
rows: all of them, those whose every value has a column header, those with a title or unit, and
the known failure kinds: a ``column N`` header (no header recovered), a lone unheaded column
named ``value`` (no header printed, no date in the title), a header holding a value
(a data row read as a header), a row without a label, a title that is a sentence fragment (it
starts in lower case or is only a unit line) and a row without a unit line.

    python bench/tables.py [--docs ../shared/data/sec-10q/docs] [--json]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from printout import show

REPO = Path(__file__).resolve().parents[1]
_COLUMN_N = re.compile(r"^column \d+$")
_VALUE_IN_HEADER = re.compile(r"[$€£]\s*[\d(—–-]|\b\d{1,3},\d{3}\b")


def main() -> None:
    import pypdfium2 as pdfium

    from deepresearch.text.pdf_tables import DocumentTables
    from deepresearch.text.tables import parse_row

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bare_s = ours_s = 0.0
    pages = rows = headed = titled = 0
    bad = dict.fromkeys(
        (
            "column_n_header",
            "value_placeholder_header",
            "value_in_header",
            "no_label",
            "fragment_title",
            "no_unit",
        ),
        0,
    )
    for path in sorted(args.docs.glob("*.pdf")):
        start = time.perf_counter()
        pdf = pdfium.PdfDocument(path)
        for page in pdf:
            page.get_textpage().get_text_range()
        pdf.close()
        bare_s += time.perf_counter() - start
        start = time.perf_counter()
        pdf = pdfium.PdfDocument(path)
        tables = DocumentTables()
        texts = [tables.page_text(page.get_textpage()) for page in pdf]
        pdf.close()
        ours_s += time.perf_counter() - start
        pages += len(texts)
        for line in (line for text in texts for line in text.split("\n")):
            row = parse_row(line)
            if row is None:
                continue
            rows += 1
            headed += all(not h.startswith("column ") for h, _ in row.cells)
            titled += bool(row.title or row.unit)
            bad["column_n_header"] += any(_COLUMN_N.match(h) for h, _ in row.cells)
            bad["value_placeholder_header"] += any(h == "value" for h, _ in row.cells)
            bad["value_in_header"] += any(_VALUE_IN_HEADER.search(h) for h, _ in row.cells)
            bad["no_label"] += row.label == "(row)"
            bad["fragment_title"] += bool(row.title) and (
                row.title[:1].islower() or row.title.startswith("(")
            )
            bad["no_unit"] += not row.unit
    result = {
        "pages": pages,
        "rows": rows,
        "rows_with_all_headers": headed,
        "rows_with_title_or_unit": titled,
        **{f"rows_{key}": value for key, value in bad.items()},
        "bare_extraction_s": round(bare_s, 3),
        "table_extraction_s": round(ours_s, 3),
        "table_over_bare": round(ours_s / bare_s, 3),
    }
    show(result, args.json)


if __name__ == "__main__":
    main()
