"""Office formats: DOCX, PPTX, XLSX, CSV and EPUB extraction, zip sniffing and bombs, the corpus."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from aiohttp import web
from inline_pool import InlinePool
from pptx.util import Inches

from deepresearch.errors import ExtractionError, FetchError
from deepresearch.providers.documents.extract import ExtractionPool, extract_bytes, extract_path
from deepresearch.providers.documents.extract_office import (
    MAX_ZIP_ENTRIES,
    MAX_ZIP_UNPACKED,
    markdown_table,
    zip_kind,
)
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.web.body import sniff
from deepresearch.providers.web.safe_fetcher import FetchPolicy, SafeFetcher, make_client


def make_docx(path: Path) -> Path:
    document = docx.Document()
    document.core_properties.title = "Pump maintenance"
    document.add_heading("Maintenance plan", level=1)
    document.add_paragraph("Centrifugal pumps need bearing lubrication every quarter.")
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {
        (0, 0): "Part",
        (0, 1): "Interval",
        (1, 0): "Seal",
        (1, 1): "6 months",
    }.items():
        table.cell(r, c).text = text
    document.add_paragraph("Impeller wear | checked yearly.")
    document.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    assert first.shapes.title is not None
    first.shapes.title.text = "Quarterly roadmap"
    first.placeholders[1].text_frame.text = "Ship the telescope firmware"
    first.notes_slide.notes_text_frame.text = "Mention the observatory partners"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    assert second.shapes.title is not None
    second.shapes.title.text = "Budget"
    grid = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (r, c), text in {(0, 0): "Item", (0, 1): "Cost", (1, 0): "Mirrors", (1, 1): "900"}.items():
        grid.cell(r, c).text = text
    deck.save(str(path))
    return path


def make_xlsx(path: Path) -> Path:
    book = openpyxl.Workbook()
    sales = book.active
    sales.title = "Sales"
    sales.append(["Region", "Revenue"])
    sales.append(["Nordics", 1250.0])
    sales.append(["Iberia", 830.5])
    staff = book.create_sheet("Staff")
    staff.append(["Name", "Role"])
    staff.append(["Ada", "glaciologist"])
    book.save(str(path))
    return path


def make_epub(path: Path, chapters: list[tuple[str, str]]) -> Path:
    """A minimal EPUB 3: mimetype first and stored, container, package document, XHTML chapters."""
    items = "".join(
        f'<item id="c{i}" href="text/ch{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(chapters))
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Sea Voyages</dc:title>'
            f"</metadata><manifest>{items}</manifest><spine>{spine}</spine></package>",
        )
        for i, (title, body) in enumerate(chapters):
            archive.writestr(
                f"OEBPS/text/ch{i}.xhtml",
                f'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>'
                f"<body><h1>{title}</h1><p>{body}</p></body></html>",
            )
    return path


CHAPTERS = [
    ("The harbour", "The schooner left the harbour at dawn with a cargo of salted cod. " * 4),
    (
        "The storm",
        "A storm broke the mainmast near the Faroe islands and the crew bailed water. " * 4,
    ),
]


def test_docx_keeps_headings_paragraphs_and_tables_in_order(tmp_path: Path) -> None:
    doc = extract_path(make_docx(tmp_path / "plan.docx"))
    assert doc.title == "Pump maintenance"
    assert len(doc.pages) == 1
    text = doc.pages[0]
    assert text.startswith("# Maintenance plan")
    assert "\n\nSeal: Interval = 6 months\n\n" in text  # the row with its column header
    assert text.index("bearing lubrication") < text.index("Seal:") < text.index("Impeller")
    assert "wordprocessingml" in doc.content_type


def test_pptx_has_one_page_per_slide_with_notes_and_tables(tmp_path: Path) -> None:
    doc = extract_path(make_pptx(tmp_path / "deck.pptx"))
    assert len(doc.pages) == 2
    assert doc.title == "Quarterly roadmap"  # no core title: the first slide's
    assert doc.pages[0].startswith("## Quarterly roadmap")
    assert "telescope firmware" in doc.pages[0]
    assert "Notes: Mention the observatory partners" in doc.pages[0]
    assert "## Budget\n\nBudget: Mirrors: Cost = 900" in doc.pages[1]


def test_xlsx_has_one_markdown_table_per_sheet(tmp_path: Path) -> None:
    doc = extract_path(make_xlsx(tmp_path / "book.xlsx"))
    assert len(doc.pages) == 2
    assert doc.pages[0] == (
        "## Sales\n\nSales: Nordics: Revenue = 1250\nSales: Iberia: Revenue = 830.5"
    )
    assert doc.pages[1].startswith("## Staff") and "Staff: Ada: Role = glaciologist" in doc.pages[1]


def test_csv_becomes_one_capped_table_with_its_delimiter_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "rates.csv"
    path.write_text("city;rate\nOslo;4,5\n\nLima;3|1\n", encoding="utf-8-sig")
    doc = extract_path(path)
    assert doc.pages == ("Oslo: rate = 4,5\nLima: rate = 3|1",)
    long = "n,sq\n" + "".join(f"{i},{i * i}\n" for i in range(50))
    table = extract_bytes(long.encode(), "csv", "squares.csv").pages[0]
    assert len(table.splitlines()) == 50 and "cut" not in table and "49: sq = 2401" in table
    cut = markdown_table([["h"], *([str(i)] for i in range(10))], max_rows=3)
    assert cut.splitlines()[:5] == ["| h |", "| --- |", "| 0 |", "| 1 |", "| 2 |"]
    assert cut.endswith("(table cut after 3 rows)")


def test_epub_has_one_page_per_chapter_in_spine_order(tmp_path: Path) -> None:
    doc = extract_path(make_epub(tmp_path / "voyages.epub", CHAPTERS))
    assert doc.title == "Sea Voyages"
    assert len(doc.pages) == 2
    assert "salted cod" in doc.pages[0] and "storm" not in doc.pages[0].lower()
    assert "Faroe islands" in doc.pages[1]


def test_fetched_bytes_are_sniffed_and_extracted_by_kind(tmp_path: Path) -> None:
    files = {
        "docx": make_docx(tmp_path / "a.docx"),
        "pptx": make_pptx(tmp_path / "a.pptx"),
        "xlsx": make_xlsx(tmp_path / "a.xlsx"),
        "epub": make_epub(tmp_path / "a.epub", CHAPTERS),
    }
    for kind, path in files.items():
        data = path.read_bytes()
        assert zip_kind(data) == kind
        assert sniff("u", "application/octet-stream", data) == kind
        assert extract_bytes(data, kind, path.name).pages == extract_path(path).pages
    assert sniff("u", "text/csv", b"a,b\n1,2\n") == "csv"
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("readme.txt", "just a zip")
    with pytest.raises(FetchError, match="not a DOCX"):
        sniff("u", "application/zip", plain.getvalue())


def test_corrupt_and_mislabelled_files_are_extraction_errors(tmp_path: Path) -> None:
    for name in ("bad.docx", "bad.pptx", "bad.xlsx", "bad.epub"):
        (tmp_path / name).write_bytes(b"PK\x03\x04 this is not really a zip" * 20)
        with pytest.raises(ExtractionError, match="zip") as bad:
            extract_path(tmp_path / name)
        assert bad.value.path == str(tmp_path / name)
    xlsx_as_docx = tmp_path / "sheet.docx"
    xlsx_as_docx.write_bytes(make_xlsx(tmp_path / "s.xlsx").read_bytes())
    with pytest.raises(ExtractionError) as info:
        extract_path(xlsx_as_docx)
    assert info.value.path == str(xlsx_as_docx)
    truncated = make_pptx(tmp_path / "deck.pptx").read_bytes()[:-200]
    with pytest.raises(ExtractionError):
        extract_bytes(truncated, "pptx", "deck.pptx")


def test_zip_bomb_is_refused_from_its_directory_without_inflating(tmp_path: Path) -> None:
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("mimetype", "application/epub+zip")
        chunk = b"\0" * (64 * 1024 * 1024)  # 64 MiB of zeros deflate to ~64 KiB
        for i in range(MAX_ZIP_UNPACKED // len(chunk) + 1):
            archive.writestr(f"word/document{i}.xml", chunk)
    data = bomb.getvalue()
    assert len(data) < 2_000_000
    assert zip_kind(data) is None  # sniffing refuses it too
    path = tmp_path / "bomb.docx"
    path.write_bytes(data)
    with pytest.raises(ExtractionError, match="zip bomb"):
        extract_path(path)
    # an end record that claims one entry but a 50 MB central directory is refused unparsed
    liar = b"PK\x03\x04" + b"\0" * 100 + b"PK\x05\x06" + bytes(6) + b"\x01\x00"
    liar += (50 << 20).to_bytes(4, "little") + bytes(6)
    with pytest.raises(ExtractionError, match="too large"):
        extract_bytes(liar, "docx", "liar.docx")
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(MAX_ZIP_ENTRIES + 1):
            archive.writestr(f"{i}", b"")
    assert zip_kind(many.getvalue()) is None
    with pytest.raises(ExtractionError, match="too large"):
        extract_bytes(many.getvalue(), "epub", "many.epub")


def test_corpus_indexes_office_files_with_page_locations(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "office").mkdir(parents=True)
    make_docx(root / "office" / "plan.docx")
    make_pptx(root / "office" / "deck.pptx")
    make_xlsx(root / "book.xlsx")
    make_epub(root / "voyages.epub", CHAPTERS)
    (root / "rates.csv").write_text("city,rate\nOslo,4.5\nReykjavik,7.25\n")
    (root / "broken.xlsx").write_bytes(b"not a workbook")
    warnings: list[tuple[str, str]] = []
    index = CorpusIndex.open(
        root,
        tmp_path / "cache",
        passage_chars=400,
        pool_factory=InlinePool,
        on_warning=lambda kind, msg: warnings.append((kind, msg)),
    )
    assert (index.documents, index.pages) == (5, 1 + 2 + 2 + 2 + 1)
    assert [w[1].split(":")[0] for w in warnings] == ["broken.xlsx"]

    def top(query: str) -> tuple[str, str]:
        hit = index.search(query, 3)[0]
        return hit.url, hit.location

    assert top("bearing lubrication pumps") == ("doc:office/plan.docx", "office/plan.docx")
    assert top("mirrors cost budget") == (
        "doc:office/deck.pptx#page=2",
        "office/deck.pptx, slide 2",
    )
    assert top("glaciologist") == ("doc:book.xlsx#page=2", "book.xlsx, sheet 2")
    assert top("storm mainmast Faroe") == ("doc:voyages.epub#page=2", "voyages.epub, section 2")
    assert top("Reykjavik rate") == ("doc:rates.csv", "rates.csv")
    page = index.page_text("doc:book.xlsx#page=2")
    assert page.location == "book.xlsx, sheet 2" and "Staff: Ada: Role = glaciologist" in page.text
    with pytest.raises(Exception, match="needs #page=N"):
        index.page_text("doc:office/deck.pptx")


async def test_safe_fetcher_extracts_office_files_in_the_pool(tmp_path: Path) -> None:
    """Loopback server -> SafeFetcher -> sniffed kind -> the real subprocess ExtractionPool."""
    bodies = {
        "/deck": (make_pptx(tmp_path / "deck.pptx").read_bytes(), "application/octet-stream"),
        "/rates.csv": (b"city,rate\nOslo,4.5\n", "text/csv; charset=utf-8"),
    }

    async def serve(request: web.Request) -> web.Response:
        body, kind = bodies[request.path]
        return web.Response(body=body, headers={"Content-Type": kind})

    app = web.Application()
    app.router.add_get("/{tail:.*}", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    policy = FetchPolicy(allow_private=True, respect_robots=False, per_host_delay_s=0.0)
    try:
        with ExtractionPool(workers=1, timeout_s=30, memory_mb=1024) as pool:
            async with make_client(policy) as client:
                fetcher = SafeFetcher(client, pool, policy)
                deck = await fetcher.fetch(f"http://127.0.0.1:{port}/deck")
                rates = await fetcher.fetch(f"http://127.0.0.1:{port}/rates.csv")
    finally:
        await runner.cleanup()
    assert deck.content_type.endswith("presentationml.presentation")
    assert deck.title == "Quarterly roadmap"
    assert "telescope firmware" in deck.text and "Budget: Mirrors: Cost = 900" in deck.text
    assert rates.content_type == "text/csv"
    assert "Oslo: rate = 4.5" in rates.text
