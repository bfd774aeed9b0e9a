"""Extraction of each format, and the process pool's deadline, crash and recovery paths."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from faulty_jobs import faulty_job
from pdf_layout import write_pdf

from deepresearch.errors import ExtractionError
from deepresearch.providers.documents.extract import (
    ExtractionPool,
    extract_path,
)
from deepresearch.providers.documents.extracted_doc import ExtractedDoc

HTML = """<!doctype html><html><head><title>Battery Chemistry Notes</title></head><body>
<nav>Home | About | Contact</nav>
<article><h1>Battery chemistry</h1>
<p>Lithium iron phosphate cells trade energy density for a much longer cycle life, which matters
for stationary storage where weight is not a concern and daily cycling is the norm.</p>
<p>Nickel manganese cobalt cells dominate electric cars because their energy density is higher,
though their cycle life is shorter and the cobalt supply chain raises cost and ethical concerns.</p>
<table><tr><td>Chemistry</td><td>Cycles</td></tr><tr><td>LFP</td><td>4000</td></tr></table>
</article></body></html>"""


def test_pdf_has_one_entry_per_page(tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "report.pdf",
        [["Cover page", "ACME Corp"], ["Net sales rose", "to 42 million"], ["Risk factors"]],
    )
    doc = extract_path(pdf)
    assert doc.title == "report.pdf"
    assert doc.content_type == "application/pdf"
    assert len(doc.pages) == 3
    assert "ACME Corp" in doc.pages[0]
    assert "Net sales rose" in doc.pages[1] and "42 million" in doc.pages[1]
    assert "Risk factors" in doc.pages[2]
    assert "\r" not in "".join(doc.pages)


def test_markdown_and_text_are_single_pages(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"# Title\r\nSome *markdown* text.\r\n")
    (tmp_path / "b.txt").write_bytes(b"plain text \xff with a bad byte\n")
    md = extract_path(tmp_path / "a.md")
    txt = extract_path(tmp_path / "b.txt")
    assert md.pages == ("# Title\nSome *markdown* text.\n",)
    assert md.title == "a.md" and md.content_type == "text/markdown"
    assert len(txt.pages) == 1 and "with a bad byte" in txt.pages[0]
    assert "\ufffd" in txt.pages[0]


def test_html_main_text_title_and_table(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(HTML)
    doc = extract_path(tmp_path / "page.html")
    assert "battery chemistry" in doc.title.lower()
    assert doc.content_type == "text/html"
    assert len(doc.pages) == 1
    assert "Lithium iron phosphate" in doc.pages[0]
    assert "4000" in doc.pages[0]  # tables are kept
    assert "<p>" not in doc.pages[0]


def test_tiny_html_falls_back_to_stripped_text(tmp_path: Path) -> None:
    (tmp_path / "t.htm").write_text("<html><body><b>hi</b> there<script>x=1</script></body></html>")
    doc = extract_path(tmp_path / "t.htm")
    assert "hi" in doc.pages[0] and "there" in doc.pages[0]
    assert "x=1" not in doc.pages[0]
    assert doc.title == "t.htm"


def test_corrupt_pdf_raises_extraction_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"\x00\x01not a pdf at all" * 50)
    with pytest.raises(ExtractionError) as info:
        extract_path(bad)
    assert info.value.path == str(bad)
    assert "PDF" in info.value.reason
    copy = pickle.loads(pickle.dumps(info.value))
    assert copy.path == str(bad) and copy.reason == info.value.reason


def test_unsupported_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "x.odt").write_bytes(b"zip")
    with pytest.raises(ExtractionError, match="unsupported"):
        extract_path(tmp_path / "x.odt")
    with pytest.raises(ExtractionError, match="cannot read"):
        extract_path(tmp_path / "missing.txt")


async def test_pool_extracts_many_and_reports_failures(tmp_path: Path) -> None:
    good = write_pdf(tmp_path / "good.pdf", [["alpha"], ["beta"]])
    (tmp_path / "n.md").write_text("gamma")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"garbage" * 100)
    with ExtractionPool(workers=2, timeout_s=30, memory_mb=2048) as pool:
        results = pool.extract_many([good, tmp_path / "n.md", bad])
        assert isinstance(results[good], ExtractedDoc) and len(results[good].pages) == 2
        assert isinstance(results[tmp_path / "n.md"], ExtractedDoc)
        assert isinstance(results[bad], ExtractionError)
        with pytest.raises(ExtractionError) as info:
            await pool.extract(bad)
        assert info.value.path == str(bad)
        assert (await pool.extract(good)).pages[1].strip() == "beta"


async def test_pool_timeout_kills_worker_and_pool_recovers(tmp_path: Path) -> None:
    hang = tmp_path / "hang.txt"
    hang.write_text("never read")
    ok = tmp_path / "ok.txt"
    ok.write_text("fine text")
    with ExtractionPool(workers=2, timeout_s=1.0, memory_mb=2048, job=faulty_job) as pool:
        results = pool.extract_many([hang, ok])
        error = results[hang]
        assert isinstance(error, ExtractionError)
        assert error.reason == "timed out after 1s"
        assert results[ok] == ExtractedDoc("ok.txt", ("fine text",), "text/plain")
        # the pool was rebuilt: later work still runs, sync and async
        again = pool.extract_many([ok])
        assert isinstance(again[ok], ExtractedDoc)
        with pytest.raises(ExtractionError, match="timed out"):
            await pool.extract(hang)
        assert (await pool.extract(ok)).pages == ("fine text",)


async def test_worker_crash_is_blamed_on_its_file_only(tmp_path: Path) -> None:
    crash = tmp_path / "crash.txt"
    crash.write_text("boom")
    oks = [tmp_path / f"ok{i}.txt" for i in range(3)]
    for ok in oks:
        ok.write_text(ok.stem)
    with ExtractionPool(workers=2, timeout_s=30, memory_mb=2048, job=faulty_job) as pool:
        results = pool.extract_many([crash, *oks])
        error = results[crash]
        assert isinstance(error, ExtractionError) and error.reason == "extraction worker crashed"
        for ok in oks:
            assert results[ok] == ExtractedDoc(ok.name, (ok.stem,), "text/plain")
        with pytest.raises(ExtractionError, match="crashed"):
            await pool.extract(crash)
        assert (await pool.extract(oks[0])).pages == ("ok0",)
