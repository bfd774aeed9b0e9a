"""Table extraction methods compared on the same corpus pages: cost and how readable the rows are.

For each method, in one process, interleaved per file with bare pypdfium2 text extraction (so
machine noise hits both alike), prints:

* ``over_bare`` — the method's time over bare pypdfium2 text extraction of the same files
  (one run; the cold index build must stay within 3x, ``bench/startup.py --index-only``);
* ``rows`` — table rows the method yields, as ``tables.format_row`` lines;
* ``rows_all_headers`` — share of rows whose every value has a column header (no ``column N``);
* ``rows_column_n`` — rows with a ``column N`` header (no header recovered);
* ``rows_no_unit`` — rows without a unit line;
* ``answer_figures_readable`` — of the reviewed answers' figures (``sec10q.figures``, every
  question of the QnA CSV, pooled), the share that is a value in a table row of one of the
  question's gold filings whose headers name a period (a date, a year, a quarter, "Three
  Months Ended"): the figures a reader of that row could interpret;
  ``answer_figures_in_rows`` counts the same without the period condition.

Methods: ``ours`` (``text.pdf_tables``: pdfium character boxes, the shipped extractor),
``pdfplumber`` (its table finder, default ruled-line strategy), ``pdfplumber-text`` (its
text-alignment strategy), ``kreuzberg`` (its PDF tables, default config), ``docling-parse`` (its
word boxes fed to our layout, ``text.table_layout``: it ships no table finder of its own; the
docling model that finds tables needs weights). The last four read their grids through
``text.grid_tables.grid_rows``, as HTML and DOCX tables are read. A method whose package is not
installed is skipped with a one-line note.

    python bench/table_methods.py [--methods ours,pdfplumber,...] [--docs DIR] [--qna CSV] [--json]
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sec10q import figures, gold_globs

REPO = Path(__file__).resolve().parents[1]
_COLUMN_N = re.compile(r"^column \d+$")
_PERIOD = re.compile(
    r"\b(?:(?:19|20)\d\d|Q[1-4]|quarters?|months|weeks|year|fiscal"
    r"|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)",
    re.IGNORECASE,
)
METHODS = ("ours", "pdfplumber", "pdfplumber-text", "kreuzberg", "docling-parse")
_NEEDS = {
    "pdfplumber": "pdfplumber",
    "pdfplumber-text": "pdfplumber",
    "kreuzberg": "kreuzberg",
    "docling-parse": "docling_parse",
}


def bare(path: Path) -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    for page in pdf:
        page.get_textpage().get_text_range()
    pdf.close()


def ours(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    from deepresearch.text.pdf_tables import DocumentTables

    pdf = pdfium.PdfDocument(path)
    tables = DocumentTables()
    lines = [line for page in pdf for line in tables.page_text(page.get_textpage()).split("\n")]
    pdf.close()
    return lines


def _grids(grids: list[list[list[str | None]]]) -> list[str]:
    from deepresearch.text.grid_tables import grid_rows

    lines: list[str] = []
    for grid in grids:
        lines += grid_rows([[" ".join((c or "").split()) for c in row] for row in grid])
    return lines


def plumber(settings: dict[str, Any]) -> Callable[[Path], list[str]]:
    def run(path: Path) -> list[str]:
        import pdfplumber

        with pdfplumber.open(path) as pdf:
            return _grids([t for page in pdf.pages for t in page.extract_tables(settings)])

    return run


def kreuzberg(path: Path) -> list[str]:
    import kreuzberg as kb

    result = kb.extract_file_sync(str(path), config=kb.ExtractionConfig())
    return _grids([table.cells for table in result.tables])


def docling(path: Path) -> list[str]:
    from docling_core.types.doc.page import TextCellUnit
    from docling_parse.pdf_parser import DoclingPdfParser

    from deepresearch.text.table_layout import find_tables
    from deepresearch.text.tables import format_row
    from deepresearch.text.visual_rows import Word

    doc = DoclingPdfParser().load(str(path))
    lines: list[str] = []
    previous = None
    for _, page in doc.iterate_pages():
        words = []
        for i, cell in enumerate(page.iterate_cells(unit_type=TextCellUnit.WORD)):
            r = cell.rect
            xs, ys = (r.r_x0, r.r_x1, r.r_x2, r.r_x3), (r.r_y0, r.r_y1, r.r_y2, r.r_y3)
            words.append(Word(cell.text, min(xs), max(xs), min(ys), max(ys), i))
        for table in find_tables(words, previous):
            lines += [format_row(row) for _, row in table.rows]
            previous = table
    return lines


RUNNERS: dict[str, Callable[[Path], list[str]]] = {
    "ours": ours,
    "pdfplumber": plumber({}),
    "pdfplumber-text": plumber({"vertical_strategy": "text", "horizontal_strategy": "text"}),
    "kreuzberg": kreuzberg,
    "docling-parse": docling,
}


def measure(
    method: str, docs: list[Path], questions: list[tuple[list[str], set[str]]]
) -> dict[str, Any]:
    from deepresearch.text.tables import parse_row

    run = RUNNERS[method]
    bare_s = method_s = 0.0
    rows = headed = column_n = no_unit = 0
    readable: dict[str, set[str]] = {}  # file name -> figures a row with a period header holds
    present: dict[str, set[str]] = {}  # file name -> figures any row holds
    for path in docs:
        start = time.perf_counter()
        bare(path)
        bare_s += time.perf_counter() - start
        start = time.perf_counter()
        lines = run(path)
        method_s += time.perf_counter() - start
        readable[path.name], present[path.name] = set(), set()
        for line in lines:
            row = parse_row(line)
            if row is None:
                continue
            rows += 1
            names = [h for h, _ in row.cells]
            headed += all(h and h != "(column)" and not _COLUMN_N.match(h) for h in names)
            column_n += any(_COLUMN_N.match(h) for h in names)
            no_unit += not row.unit
            values = {f for _, v in row.cells for f in figures(v)}
            present[path.name] |= values
            if any(_PERIOD.search(h) for h in names):
                readable[path.name] |= values
    wanted = found = anywhere = 0
    for globs, answer in questions:
        gold = [name for name in readable if any(fnmatch.fnmatch(name, g) for g in globs)]
        for figure in answer:
            wanted += 1
            found += any(figure in readable[name] for name in gold)
            anywhere += any(figure in present[name] for name in gold)
    return {
        "over_bare": round(method_s / bare_s, 2),
        "rows": rows,
        "rows_all_headers": round(headed / rows, 4) if rows else 0.0,
        "rows_column_n": column_n,
        "rows_no_unit": no_unit,
        "answer_figures": wanted,
        "answer_figures_in_rows": round(anywhere / wanted, 4) if wanted else 0.0,
        "answer_figures_readable": round(found / wanted, 4) if wanted else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument(
        "--qna", type=Path, default=REPO.parent / "shared/data/sec-10q/qna_data.csv"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in RUNNERS]
    if unknown:
        print(
            f"error: unknown method {unknown[0]!r} (known: {', '.join(METHODS)})", file=sys.stderr
        )
        sys.exit(2)
    docs = sorted(args.docs.glob("*.pdf"))
    if not docs or not args.qna.is_file():
        print(f"error: no PDFs in {args.docs} or no QnA file {args.qna}", file=sys.stderr)
        sys.exit(2)
    with args.qna.open(newline="", encoding="utf-8") as f:
        questions = [
            (gold_globs(r["Source Docs"]), figures(r["Answer"])) for r in csv.DictReader(f)
        ]
    result: dict[str, Any] = {}
    for method in methods:
        needs = _NEEDS.get(method)
        if needs and importlib.util.find_spec(needs) is None:
            result[method] = f"skipped: {needs} is not installed"
        else:
            print(f"measuring {method} ...", file=sys.stderr)
            result[method] = measure(method, docs, questions)
    if args.json:
        print(json.dumps(result))
        return
    for method, figures_of in result.items():
        if isinstance(figures_of, str):
            print(f"{method}: {figures_of}")
            continue
        print(f"{method}: " + " ".join(f"{k}={v}" for k, v in figures_of.items()))


if __name__ == "__main__":
    main()
