"""Text out of office documents: DOCX, PPTX, XLSX, CSV and EPUB; tables become self-describing
rows (``text.grid_tables``: each row with its column headers and the heading above the table).

These run inside ``ExtractionPool`` workers like the PDF and HTML extractors (``extract.py``
dispatches here). Pages follow the document's own units so a citation can point at them: one per
slide (PPTX), per worksheet (XLSX) and per spine document (EPUB); DOCX and CSV are one page.
DOCX, PPTX, XLSX and EPUB are zip files, so before any parser sees one, ``open_zip`` checks the
archive's central directory: a few kilobytes must not unpack into gigabytes (``zipfile`` never
inflates an entry past its declared size, so bounding the declared sizes bounds the output).
EPUB is read with ``zipfile`` and the HTML extractor rather than EbookLib, which is AGPL-licensed.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import posixpath
import struct
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote
from xml.etree import ElementTree

from deepresearch.errors import ExtractionError
from deepresearch.providers.documents.extracted_doc import ExtractedDoc, html_doc
from deepresearch.text.grid_tables import rows_from_pipes

MAX_ZIP_ENTRIES = 10_000
MAX_ZIP_UNPACKED = 256 * 1024 * 1024  # declared uncompressed bytes, all entries together
MAX_ZIP_DIRECTORY = (
    2 * 1024 * 1024
)  # zipfile parses the whole central directory, whatever the count
MAX_TABLE_ROWS = 2_000  # per CSV file and per worksheet; the rest is noted, not indexed
MAX_TABLE_COLS = 60
MAX_CELL_CHARS = 500

ZipKind = Literal["docx", "pptx", "xlsx", "epub"]
CONTENT_TYPES = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "epub": "application/epub+zip",
    "csv": "text/csv",
}
# the main part that tells an OOXML package's kind (beside [Content_Types].xml)
_OOXML_PARTS: dict[str, ZipKind] = {
    "word/document.xml": "docx",
    "ppt/presentation.xml": "pptx",
    "xl/workbook.xml": "xlsx",
}
_EOCD = b"PK\x05\x06"
_EOCD_SEARCH = 22 + 65_535  # the record plus the longest archive comment


# ---------------------------------------------------------------------- zip safety and sniffing


def _zip_directory(tail: bytes) -> tuple[int, int, bool] | None:
    """(entry count, central directory bytes, ZIP64?) from the end-of-central-directory record."""
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return None
    entries, size = struct.unpack("<HI", tail[at + 10 : at + 16])
    zip64 = tail[max(0, at - 20) : at].startswith(b"PK\x06\x07")  # its sizes would win
    return int(entries), int(size), zip64


def open_zip(source: Path | bytes, name: str) -> zipfile.ZipFile:
    """The archive, refused before parsing when it has too many entries or unpacks too large."""
    if isinstance(source, Path):
        with source.open("rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - _EOCD_SEARCH))
            tail = handle.read()
    else:
        tail = source[-_EOCD_SEARCH:]
    directory = _zip_directory(tail)
    if directory is None:
        raise ExtractionError(name, "not a zip archive (no central directory)")
    entries, size, zip64 = directory
    if zip64 or entries > MAX_ZIP_ENTRIES or size > MAX_ZIP_DIRECTORY:
        # no office file needs ZIP64 or that many parts; the directory is parsed whole (by size)
        raise ExtractionError(name, f"zip archive too large ({entries} entries, {size} bytes)")
    try:
        archive = zipfile.ZipFile(source if isinstance(source, Path) else io.BytesIO(source))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ExtractionError(name, f"not a readable zip archive ({exc})") from None
    infos = archive.infolist()
    unpacked = sum(info.file_size for info in infos)
    if len(infos) > MAX_ZIP_ENTRIES or unpacked > MAX_ZIP_UNPACKED:
        archive.close()
        raise ExtractionError(name, f"zip archive unpacks to {unpacked} bytes (a zip bomb?)")
    return archive


def zip_kind(data: bytes) -> ZipKind | None:
    """``docx``/``pptx``/``xlsx``/``epub`` for such a zip file, else ``None``; reads names only,
    plus at most 64 bytes of an EPUB's ``mimetype`` entry, so it is safe on hostile archives."""
    try:
        with open_zip(data, "zip") as archive:
            names = set(archive.namelist())
            if "mimetype" in names:
                with archive.open("mimetype") as handle:
                    if handle.read(64).strip() == b"application/epub+zip":
                        return "epub"
            if "[Content_Types].xml" in names:
                for part, kind in _OOXML_PARTS.items():
                    if part in names:
                        return kind
    except (ExtractionError, zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        return None
    return None


# ---------------------------------------------------------------------- Markdown tables


def cell_text(value: object) -> str:
    """One cell as table text: dates in ISO form, whole floats without ``.0``, one line."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = " ".join(str(value).split())
    return text[:MAX_CELL_CHARS]


def markdown_table(rows: Iterable[Sequence[object]], max_rows: int = MAX_TABLE_ROWS) -> str:
    """Rows as a Markdown table (the first row is the header); empty rows and trailing empty
    columns dropped, at most ``max_rows`` body rows with a note when more were cut."""
    kept: list[list[str]] = []
    more = False
    for row in rows:
        cells = [cell_text(v).replace("|", "\\|") for v in row[:MAX_TABLE_COLS]]
        if not any(cells):
            continue
        if len(kept) > max_rows:
            more = True
            break
        kept.append(cells)
    if not kept:
        return ""
    width = max(max((i + 1 for i, c in enumerate(r) if c), default=0) for r in kept)
    lines = []
    for index, row in enumerate(kept):
        padded = (row + [""] * width)[:width]
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    if more:
        lines.append(f"\n(table cut after {max_rows} rows)")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the extractors


def extract_office(
    source: Path | bytes, kind: str, name: str, charset: str | None = None
) -> ExtractedDoc:
    """Extract one office document; parser errors propagate (the caller wraps them)."""
    try:
        doc = _extract(source, kind, name, charset)
    except ExtractionError as exc:  # a file's errors name its path, as the other extractors do
        if isinstance(source, Path) and exc.path != str(source):
            raise ExtractionError(str(source), exc.reason) from None
        raise
    # Markdown tables become self-describing rows (header, caption or heading above)
    return dataclasses.replace(doc, pages=tuple(rows_from_pipes(page) for page in doc.pages))


def _extract(source: Path | bytes, kind: str, name: str, charset: str | None) -> ExtractedDoc:
    if kind == "csv":
        data = source.read_bytes() if isinstance(source, Path) else source
        return _csv_doc(data, name, charset)
    with open_zip(source, name) as archive:
        if kind == "epub":
            return _epub_doc(archive, name)
        if kind == "docx":
            return _docx_doc(source, name)
        if kind == "pptx":
            return _pptx_doc(source, name)
        if kind == "xlsx":
            return _xlsx_doc(source, name)
    raise ExtractionError(name, f"unsupported kind {kind}")


def _stream(source: Path | bytes) -> Any:
    return str(source) if isinstance(source, Path) else io.BytesIO(source)


def _docx_doc(source: Path | bytes, name: str) -> ExtractedDoc:
    import docx
    from docx.table import Table

    document = docx.Document(_stream(source))
    blocks: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            table = markdown_table([cell.text for cell in row.cells] for row in block.rows)
            if table:
                blocks.append(table)
            continue
        text = block.text.strip()
        if not text:
            continue
        style = block.style.name if block.style is not None else ""
        level = style.removeprefix("Heading ").strip() if style.startswith("Heading ") else ""
        blocks.append(f"{'#' * int(level)} {text}" if level.isdigit() else text)
    title = document.core_properties.title or name
    return ExtractedDoc(title, ("\n\n".join(blocks),), CONTENT_TYPES["docx"])


def _pptx_doc(source: Path | bytes, name: str) -> ExtractedDoc:
    import pptx

    deck = pptx.Presentation(_stream(source))
    pages: list[str] = []
    first_title = ""
    for slide in deck.slides:
        title_shape = slide.shapes.title
        heading = title_shape.text_frame.text.strip() if title_shape is not None else ""
        first_title = first_title or heading
        blocks = [f"## {heading}"] if heading else []
        for shape in _shapes(slide.shapes):
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if getattr(shape, "has_table", False):
                rows = ([cell.text for cell in row.cells] for row in shape.table.rows)
                blocks.append(markdown_table(rows))
            elif getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                blocks.append(shape.text_frame.text.strip())
        if slide.has_notes_slide:
            notes_frame = slide.notes_slide.notes_text_frame
            notes = notes_frame.text.strip() if notes_frame is not None else ""
            if notes:
                blocks.append(f"Notes: {notes}")
        pages.append("\n\n".join(b for b in blocks if b))
    title = deck.core_properties.title or first_title or name
    return ExtractedDoc(title, tuple(pages), CONTENT_TYPES["pptx"])


def _shapes(shapes: Iterable[Any]) -> Iterator[Any]:
    """Every shape in reading order, group shapes opened up."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _xlsx_doc(source: Path | bytes, name: str) -> ExtractedDoc:
    import openpyxl

    book = openpyxl.load_workbook(_stream(source), read_only=True, data_only=True)
    try:
        pages = []
        for sheet in book.worksheets:
            table = markdown_table(sheet.iter_rows(values_only=True))
            pages.append(f"## {sheet.title}\n\n{table}".strip())
        title = book.properties.title or name
    finally:
        book.close()
    return ExtractedDoc(str(title), tuple(pages), CONTENT_TYPES["xlsx"])


def _csv_doc(data: bytes, name: str, charset: str | None) -> ExtractedDoc:
    try:
        text = data.decode(charset or "utf-8-sig", errors="replace")
    except LookupError:  # an unknown charset name
        text = data.decode("utf-8-sig", errors="replace")
    try:
        dialect: Any = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    table = markdown_table(csv.reader(io.StringIO(text, newline=""), dialect))
    return ExtractedDoc(name, (table,), CONTENT_TYPES["csv"])


_OPF = "{http://www.idpf.org/2007/opf}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_HTML_TYPES = ("application/xhtml+xml", "text/html")


def _epub_doc(archive: zipfile.ZipFile, name: str) -> ExtractedDoc:
    """One page per (linear) spine document, in reading order, each through the HTML extractor."""
    container = ElementTree.fromstring(archive.read("META-INF/container.xml"))
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    opf_path = rootfile.get("full-path", "") if rootfile is not None else ""
    if not opf_path:
        raise ExtractionError(name, "EPUB without a package document")
    package = ElementTree.fromstring(archive.read(opf_path))
    base = posixpath.dirname(opf_path)
    manifest = {
        item.get("id", ""): item for item in package.iter(f"{_OPF}item") if item.get("href")
    }
    pages: list[str] = []
    for ref in package.iter(f"{_OPF}itemref"):
        item = manifest.get(ref.get("idref", ""))
        if item is None or ref.get("linear") == "no" or item.get("media-type") not in _HTML_TYPES:
            continue
        href = posixpath.normpath(posixpath.join(base, unquote(item.get("href", "")).split("#")[0]))
        html = archive.read(href).decode("utf-8", errors="replace")
        chapter = html_doc(html, href)
        text = chapter.pages[0].strip()
        heading = chapter.title if chapter.title != href else ""
        pages.append(f"## {heading}\n\n{text}" if heading and heading not in text[:200] else text)
    if not pages:
        raise ExtractionError(name, "EPUB without readable chapters")
    title_el = package.find(f".//{_DC_TITLE}")
    title = (title_el.text or "").strip() if title_el is not None else ""
    return ExtractedDoc(title or name, tuple(pages), CONTENT_TYPES["epub"])
