"""What a corpus index holds over time and what it never returns: an extraction change rebuilds
it with the new text, and signed templates most filings carry are never hits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from inline_pool import InlinePool
from pdf_layout import write_pdf

from deepresearch.providers.documents.extract import ExtractionPool
from deepresearch.providers.search import corpus_store
from deepresearch.providers.search.corpus_index import CorpusIndex


def inline(log: list[Path]) -> Callable[[], ExtractionPool]:
    return lambda: InlinePool(log)


def open_index(corpus: Path, cache: Path, pool: Callable[[], ExtractionPool]) -> CorpusIndex:
    return CorpusIndex.open(corpus, cache, passage_chars=400, pool_factory=pool, on_warning=None)


def test_a_new_extraction_version_rebuilds_the_index_and_its_pages_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that changes what extraction writes re-extracts the text and rebuilds the
    index with it: an index of the old text would point at pages the new cache does not hold,
    and every run would find nothing it could read."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_pdf(corpus / "2023 Q3 ACME.pdf", [["ACME report"], ["Gross margin was 41 percent."]])
    (corpus / "notes.md").write_text("# Widgets\nWidget production doubled in 2023.\n")
    cache = tmp_path / "cache"
    open_index(corpus, cache, inline([]))
    monkeypatch.setattr(corpus_store, "EXTRACT_VERSION", corpus_store.EXTRACT_VERSION + 1)
    log: list[Path] = []
    upgraded = open_index(corpus, cache, inline(log))
    assert upgraded.built and corpus.resolve() / "notes.md" in log
    hit = upgraded.search("gross margin", 1)[0]
    assert "Gross margin was 41 percent." in upgraded.page_text(hit.url).text


def test_a_certification_every_filing_carries_is_never_a_hit(tmp_path: Path) -> None:
    """Each filing's signed certification matches "disclosure controls" word for word; the
    filing's own page about its controls is the hit, never the template."""
    root = tmp_path / "filings"
    root.mkdir()
    for n in range(5):
        write_pdf(
            root / f"2023 Q{n % 4 + 1} CO{n}.pdf",
            [
                [
                    f"Company {n} evaluated its disclosure controls in quarter {n} and remediated",
                    f"a weakness in revenue controls found by the audit committee in region {n}.",
                ],
                [
                    "CERTIFICATION",
                    f"Officer {n}, Chief Executive Officer, states that disclosure controls and",
                    "procedures were designed to ensure that material information is made known",
                    "to the certifying officers by others within the registrant and its units.",
                    f"Date: May {n + 1}, 2023",
                    f"/s/ Officer {n}",
                ],
            ],
        )
    index = open_index(root, tmp_path / "cache", inline([]))
    hits = index.search("disclosure controls procedures designed", 10)
    assert hits and all(h.url.endswith("#page=1") for h in hits), [h.url for h in hits]
