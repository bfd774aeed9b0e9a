"""The ``local`` search provider and its fetcher: BM25 over a folder of documents.

Both are thin async faces of one ``CorpusIndex``; the index does the work and is safe to share.
Ids are ``doc:<relpath>#page=N`` (PDF, PPTX, XLSX, EPUB: ``extract.PAGE_LABELS``) or
``doc:<relpath>``, resolved only inside the corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from deepresearch.errors import ProviderError
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.doc_ids import doc_id, doc_location, parse_doc_id
from deepresearch.schemas import FetchedDoc, SearchHit

if TYPE_CHECKING:
    from deepresearch.config.settings import Settings

__all__ = [
    "CorpusIndex",
    "LocalDocuments",
    "LocalSearch",
    "doc_id",
    "doc_location",
    "opened_index",
    "parse_doc_id",
]

_opened: dict[tuple[str, str, int], CorpusIndex] = {}  # per process: loading takes seconds


def opened_index(settings: Settings) -> CorpusIndex:
    """The already-built index of ``settings.corpus.path`` (the driver built it), opened once
    per process and shared by the search provider and the fetcher of every run that reads it."""
    assert settings.corpus.path is not None
    key = (
        str(settings.corpus.path),
        str(settings.resolved_cache_dir()),
        settings.corpus.passage_chars,
    )
    if key not in _opened:
        _opened[key] = CorpusIndex.load_cached(Path(key[0]), Path(key[1]), key[2])
    return _opened[key]


class LocalSearch:
    """``SearchProvider`` over a ``CorpusIndex`` (queries take well under a millisecond)."""

    name = "local"

    def __init__(self, index: CorpusIndex) -> None:
        self.index = index

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            return self.index.search(query, limit)
        except Exception as exc:  # a broken index must look like any failing provider
            raise ProviderError(self.name, f"{type(exc).__name__}: {exc}") from exc


class LocalDocuments:
    """``Fetcher`` for ``doc:`` ids: the page's text from the index cache, never from outside."""

    def __init__(self, index: CorpusIndex) -> None:
        self.index = index

    def handles(self, url: str) -> bool:
        return url.startswith("doc:")

    async def fetch(self, url: str) -> FetchedDoc:
        return self.index.page_text(url)
