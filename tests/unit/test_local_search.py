"""The local corpus index: validation, caching, page-grouped search and safe document ids."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bm25s
import pytest
from inline_pool import InlinePool
from pdf_layout import write_pdf

from deepresearch.errors import (
    CorpusError,
    FetchBlocked,
    FetchError,
    StorageError,
)
from deepresearch.providers.documents.extract import ExtractionPool
from deepresearch.providers.search.base import Fetcher, SearchProvider
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.local import LocalDocuments, LocalSearch
from deepresearch.providers.search.passages import snippet, split_passages

REPO = Path(__file__).resolve().parents[2]
SEC_DOCS = REPO.parent / "shared" / "data" / "sec-10q" / "docs"


def no_pool() -> ExtractionPool:
    raise AssertionError("extraction was not expected")


def inline(log: list[Path]) -> Callable[[], ExtractionPool]:
    return lambda: InlinePool(log)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "reports").mkdir(parents=True)
    write_pdf(
        root / "reports" / "2023 Q3 ACME.pdf",
        [
            ["ACME Corporation quarterly report", "Form 10-Q for the third quarter"],
            ["Total net sales were 1,234 million for the quarter.", "Gross margin was 41 percent."],
            ["Risk factors include litigation and supply chain disruption."],
        ],
    )
    write_pdf(root / "2022 Q1 ZETA.pdf", [["Zeta Inc overview"], ["Zeta litigation settled."]])
    (root / "notes.md").write_text("# Widgets\nWidget production doubled in 2023 at the plant.\n")
    (root / "guide.txt").write_text("Solar panel efficiency depends on temperature and shading.\n")
    (root / "page.html").write_text(
        "<html><head><title>Battery notes</title></head><body><article><p>"
        + "Lithium iron phosphate batteries have a long cycle life for stationary storage. " * 3
        + "</p></article></body></html>"
    )
    (root / "broken.pdf").write_bytes(os.urandom(2048))
    (root / "ignored.odt").write_bytes(b"not indexed")
    return root


def open_index(
    corpus: Path, cache: Path, pool: Callable[[], ExtractionPool], warnings: list[tuple[str, str]]
) -> CorpusIndex:
    return CorpusIndex.open(
        corpus,
        cache,
        passage_chars=400,
        pool_factory=pool,
        on_warning=lambda kind, msg: warnings.append((kind, msg)),
    )


def test_build_counts_and_skips_corrupt_file_with_warning(corpus: Path, tmp_path: Path) -> None:
    warnings: list[tuple[str, str]] = []
    log: list[Path] = []
    index = open_index(corpus, tmp_path / "cache", inline(log), warnings)
    assert index.built
    assert (index.documents, index.pages) == (5, 3 + 2 + 1 + 1 + 1)
    assert index.passages >= index.pages  # every page here has text
    assert index.corpus_dir == corpus
    assert len(log) == 6  # five good files and the broken one, each once
    assert [k for k, _ in warnings] == ["extract_failed"]
    assert warnings[0][1].startswith("broken.pdf: ")
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    assert not list((tmp_path / "cache" / "bm25").glob(".build-*"))


def test_search_groups_by_page_with_ids_and_locations(corpus: Path, tmp_path: Path) -> None:
    index = open_index(corpus, tmp_path / "cache", inline([]), [])
    hits = index.search("total net sales for the quarter", 5)
    top = hits[0]
    assert top.url == "doc:reports/2023 Q3 ACME.pdf#page=2"
    assert top.title == "2023 Q3 ACME.pdf"
    assert top.location == "reports/2023 Q3 ACME.pdf, p. 2"
    assert top.provider == "local"
    assert "net sales" in top.snippet.lower()
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.url for h in hits}) == len(hits)

    litigation = index.search("litigation", 10)
    assert {h.url for h in litigation} == {
        "doc:reports/2023 Q3 ACME.pdf#page=3",
        "doc:2022 Q1 ZETA.pdf#page=2",
    }
    widgets = index.search("widget production", 3)
    assert widgets[0].url == "doc:notes.md"
    assert widgets[0].location == "notes.md"
    assert index.search("lithium batteries", 3)[0].url == "doc:page.html"
    assert len(index.search("litigation", 1)) == 1


def test_one_hit_per_page_even_with_many_matching_passages(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    long_page = "\n".join(f"Line {i}: the reactor output rose again this week." for i in range(80))
    (root / "long.txt").write_text(long_page)
    (root / "short.txt").write_text("A single mention of the reactor.")
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=200, pool_factory=inline([]))
    assert index.passages > 10
    hits = index.search("reactor", 10)
    assert [h.url for h in hits] == ["doc:long.txt", "doc:short.txt"] or [h.url for h in hits] == [
        "doc:short.txt",
        "doc:long.txt",
    ]
    assert len(hits[0].snippet) <= 310


def test_queries_without_tokens_or_matches_return_nothing(corpus: Path, tmp_path: Path) -> None:
    index = open_index(corpus, tmp_path / "cache", inline([]), [])
    assert index.search("the and of a", 5) == []
    assert index.search("", 5) == []
    assert index.search("xylophone", 5) == []
    assert index.search("litigation", 0) == []


def test_warm_open_does_no_extraction_and_no_indexing(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = open_index(corpus, cache, inline([]), [])
    builds: list[int] = []
    real_index = bm25s.BM25.index
    monkeypatch.setattr(
        bm25s.BM25, "index", lambda *a, **k: builds.append(1) or real_index(*a, **k)
    )
    warnings: list[tuple[str, str]] = []
    second = open_index(corpus, cache, no_pool, warnings)
    assert not second.built and builds == []
    assert (second.documents, second.passages) == (first.documents, first.passages)
    assert [k for k, _ in warnings] == ["extract_failed"]  # the cached failure is still reported
    assert second.search("gross margin", 3) == first.search("gross margin", 3)
    other = CorpusIndex.load_cached(corpus, cache, 400)
    assert other.search("gross margin", 3) == first.search("gross margin", 3)
    assert builds == []


def test_a_process_loads_an_unchanged_index_once(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service prepares every run with an open: the index it loaded is shared, not re-read."""
    cache = tmp_path / "cache"
    first = open_index(corpus, cache, inline([]), [])
    loads: list[str] = []
    real_load = bm25s.BM25.load
    monkeypatch.setattr(
        bm25s.BM25, "load", lambda *a, **k: loads.append("bm25") or real_load(*a, **k)
    )
    warnings: list[tuple[str, str]] = []
    again = open_index(corpus, cache, no_pool, warnings)
    assert loads == [] and not again.built
    assert [k for k, _ in warnings] == ["extract_failed"]  # still checked and reported
    assert again.search("gross margin", 3) == first.search("gross margin", 3)
    (corpus / "guide.txt").write_text("Wind turbines produce more power in winter.\n")
    changed = open_index(corpus, cache, inline([]), [])  # a changed corpus: a new index
    assert changed.search("wind turbines", 1)[0].url == "doc:guide.txt"


def test_runs_prepared_at_once_load_the_index_once(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service prepares 32 runs at once, each in its own thread: one of them loads the index,
    the others wait for it instead of parsing the same files again."""
    from deepresearch.providers.search import corpus_index

    cache = tmp_path / "cache"
    open_index(corpus, cache, inline([]), [])
    monkeypatch.setattr(corpus_index, "_LOADED", {})  # a process that has not loaded it yet
    callers, arrived, all_in = 4, [0], threading.Event()
    loads: list[str] = []
    real_load = bm25s.BM25.load

    def load(*a: object, **k: object) -> object:
        loads.append("bm25")
        all_in.wait(5)  # every caller has asked by the time the first load ends
        return real_load(*a, **k)

    monkeypatch.setattr(bm25s.BM25, "load", load)

    def prepare() -> CorpusIndex:
        arrived[0] += 1
        if arrived[0] == callers:
            all_in.set()
        return CorpusIndex.load_cached(corpus, cache, 400)

    with ThreadPoolExecutor(callers) as pool:
        opened = list(pool.map(lambda _: prepare(), range(callers)))
    assert loads == ["bm25"]
    assert all(i.search("gross margin", 1) for i in opened)
    # and the row labels the first search builds serve every copy of the loaded index
    assert len({id(i.labels()) for i in opened}) == 1


def test_renamed_file_is_not_reextracted_but_changed_file_is(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    open_index(corpus, cache, inline([]), [])
    (corpus / "notes.md").rename(corpus / "reports" / "widgets.md")
    moved = open_index(corpus, cache, no_pool, [])
    assert moved.built  # a new file list means a new index, built from cached text
    assert moved.search("widget production", 1)[0].url == "doc:reports/widgets.md"
    (corpus / "guide.txt").write_text("Wind turbines produce more power in winter.\n")
    log: list[Path] = []
    changed = open_index(corpus, cache, inline(log), [])
    assert log == [corpus.resolve() / "guide.txt"]
    assert changed.search("wind turbines", 1)[0].url == "doc:guide.txt"
    assert changed.search("solar panel", 5) == []


def test_load_cached_without_a_build_is_a_corpus_error(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no cached index"):
        CorpusIndex.load_cached(corpus, tmp_path / "empty-cache", 400)
    open_index(corpus, tmp_path / "cache", inline([]), [])
    with pytest.raises(CorpusError):
        CorpusIndex.load_cached(corpus, tmp_path / "cache", 1000)  # other passage size


def test_unreadable_cache_entries_are_rebuilt_not_trusted(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    open_index(corpus, cache, inline([]), [])
    (meta,) = (cache / "bm25").glob("*/meta.json")
    meta.write_text("{half written")
    for doc in (cache / "docs").rglob("*.json"):
        doc.write_text("[")
    log: list[Path] = []
    again = open_index(corpus, cache, inline(log), [])
    assert again.built and len(log) == 6
    assert again.search("gross margin", 1)[0].url == "doc:reports/2023 Q3 ACME.pdf#page=2"


def test_unwritable_cache_is_a_storage_error(corpus: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("")
    with pytest.raises(StorageError) as info:
        open_index(corpus, blocker, inline([]), [])
    assert info.value.path == str(blocker.resolve())


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda p: None, "no such folder"),
        (lambda p: p.write_text("x"), "not a folder"),
        (lambda p: p.mkdir(), "no supported files"),
        (lambda p: (p.mkdir(), (p / "a.odt").write_text("x")), "no supported files"),
        (lambda p: (p.mkdir(), (p / "a.pdf").write_bytes(b"junk" * 99)), "no readable document"),
        (lambda p: (p.mkdir(), (p / "empty.txt").write_text("  \n")), "no text"),
        (lambda p: (p.mkdir(), (p / "a.txt").write_text("--- !!! *** ¶ ...\n")), "no document has"),
    ],
)
def test_unusable_corpus_is_a_clear_corpus_error(
    tmp_path: Path, setup: Callable[[Path], object], reason: str
) -> None:
    target = tmp_path / "corpus"
    setup(target)
    with pytest.raises(CorpusError) as info:
        CorpusIndex.open(target, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    assert info.value.path == str(target)
    assert reason in info.value.reason


def test_symlinks_out_of_the_corpus_are_skipped(corpus: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The zebra password is hunter2.")
    (corpus / "link.md").symlink_to(outside / "secret.md")
    (corpus / "linkdir").symlink_to(outside, target_is_directory=True)
    (corpus / "inner.md").symlink_to(corpus / "notes.md")  # stays inside: allowed
    warnings: list[tuple[str, str]] = []
    index = open_index(corpus, tmp_path / "cache", inline([]), warnings)
    assert index.search("zebra password", 5) == []
    assert ("outside_corpus", "link.md: links outside the corpus folder, skipped") in warnings
    assert {h.url for h in index.search("widget production", 5)} == {"doc:notes.md", "doc:inner.md"}
    with pytest.raises(FetchError):
        index.page_text("doc:link.md")
    with pytest.raises(FetchError):
        index.page_text("doc:linkdir/secret.md")


def test_page_text_resolves_ids_and_refuses_escapes(corpus: Path, tmp_path: Path) -> None:
    index = open_index(corpus, tmp_path / "cache", inline([]), [])
    page = index.page_text("doc:reports/2023 Q3 ACME.pdf#page=2")
    assert "Gross margin was 41 percent." in page.text
    assert (page.title, page.location) == ("2023 Q3 ACME.pdf", "reports/2023 Q3 ACME.pdf, p. 2")
    assert (page.provider, page.content_type) == ("local", "text/plain")
    assert index.page_text("doc:notes.md").text.startswith("# Widgets")
    assert index.page_text("doc:notes.md#page=1").url == "doc:notes.md"
    for blocked in ("doc:../outside/secret.md", "doc:/etc/passwd", "doc:reports/../notes.md"):
        with pytest.raises(FetchBlocked):
            index.page_text(blocked)
    for bad in (
        "doc:reports/2023 Q3 ACME.pdf#page=4",
        "doc:reports/2023 Q3 ACME.pdf#page=0",
        "doc:reports/2023 Q3 ACME.pdf",
        "doc:notes.md#page=2",
        "doc:missing.md",
        "doc:broken.pdf#page=1",
        "https://example.com/",
    ):
        with pytest.raises(FetchError):
            index.page_text(bad)
    # a file swapped for a symlink out of the corpus after indexing is refused
    (tmp_path / "elsewhere.md").write_text("other")
    (corpus / "notes.md").unlink()
    (corpus / "notes.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(FetchBlocked):
        index.page_text("doc:notes.md")


async def test_provider_and_fetcher_wrap_the_index(corpus: Path, tmp_path: Path) -> None:
    index = open_index(corpus, tmp_path / "cache", inline([]), [])
    search, docs = LocalSearch(index), LocalDocuments(index)
    assert isinstance(search, SearchProvider) and isinstance(docs, Fetcher)
    assert search.name == "local"
    hits = await search.search("gross margin", 2)
    assert hits[0].url == "doc:reports/2023 Q3 ACME.pdf#page=2"
    assert docs.handles(hits[0].url) and not docs.handles("https://example.com/a")
    fetched = await docs.fetch(hits[0].url)
    assert fetched.url == hits[0].url and "Gross margin" in fetched.text


def test_passages_split_on_boundaries_and_snippets_center_on_terms() -> None:
    text = "\n".join(f"Sentence number {i} is here." for i in range(100))
    parts = split_passages(text, 200)
    assert all(len(p) <= 200 for p in parts)
    assert "".join(parts).replace("\n", "") == text.replace("\n", "")
    one_line = "word " * 500
    assert all(len(p) <= 200 for p in split_passages(one_line, 200))
    long_text = "filler " * 100 + "the needle is here " + "filler " * 100
    snip = snippet(long_text, ["needle"])
    assert "needle" in snip and snip.startswith("…") and len(snip) <= 302


@pytest.mark.skipif(not SEC_DOCS.is_dir(), reason="shared SEC 10-Q corpus not present")
def test_sec_corpus_sanity(tmp_path: Path) -> None:
    root = tmp_path / "sec"
    root.mkdir()
    for name in ("2023 Q3 AAPL.pdf", "2023 Q3 MSFT.pdf", "2023 Q2 NVDA.pdf"):
        shutil.copy(SEC_DOCS / name, root / name)
    with ExtractionPool(2, 60, 2048) as pool:
        index = CorpusIndex.open(
            root, tmp_path / "cache", passage_chars=1000, pool_factory=lambda: pool
        )
    assert index.documents == 3 and index.passages > 300
    query = "Apple total net sales for the three months ended July 1, 2023"
    hits = index.search(query, 8)
    assert hits[0].url.startswith("doc:2023 Q3 AAPL.pdf#page=")
    assert hits[0].location.startswith("2023 Q3 AAPL.pdf, p. ")
    batches = []
    for _ in range(5):  # best of five batches: robust to a busy machine
        start = time.perf_counter()
        for _ in range(10):
            index.search(query, 8)
        batches.append((time.perf_counter() - start) / 10)
    assert min(batches) < 0.005
    text = index.page_text(hits[0].url).text
    assert "July 1, 2023" in text and len(text) > 500


def test_plain_passages_rank_by_bm25_alone(corpus: Path, tmp_path: Path) -> None:
    """The bench's baseline: the best passages by BM25 score, best first, no more than asked."""
    index = CorpusIndex.open(corpus, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    best = index.plain_passages("litigation settled", 3)
    assert best[0] == "Zeta litigation settled."
    assert len(best) == 2 and "litigation" in best[1]
    assert len(index.plain_passages("litigation", 1)) == 1
    assert index.plain_passages("quasar", 3) == []
