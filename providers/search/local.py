"""The ``local`` search provider and its fetcher: BM25 over a folder of documents.

Both are thin async faces of one ``CorpusIndex``; the index does the work and is safe to share.
Ids are ``doc:<relpath>#page=N`` (PDF) or ``doc:<relpath>``, resolved only inside the corpus.
"""

from __future__ import annotations

from pathlib import Path

from deepresearch.config.settings import Settings
from deepresearch.errors import ProviderError
from deepresearch.providers.extract import ExtractionPool
from deepresearch.providers.search.corpus_index import (
    CorpusIndex,
    doc_id,
    doc_location,
    parse_doc_id,
)
from deepresearch.providers.search.corpus_store import Warn
from deepresearch.schemas import FetchedDoc, SearchHit

__all__ = [
    "CorpusIndex",
    "LocalDocuments",
    "LocalSearch",
    "doc_id",
    "doc_location",
    "open_corpus",
    "parse_doc_id",
]


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


def open_corpus(
    settings: Settings, corpus_dir: Path | None = None, on_warning: Warn | None = None
) -> CorpusIndex:
    """Build or load the index for ``corpus_dir`` (default: ``settings.corpus.path``)."""
    corpus = settings.corpus
    path = corpus_dir if corpus_dir is not None else corpus.path
    if path is None:
        from deepresearch.errors import CorpusError

        raise CorpusError("", "no corpus folder given (--corpus or corpus.path)")

    def pool() -> ExtractionPool:
        return ExtractionPool(
            corpus.extract_workers, corpus.extract_timeout_s, corpus.extract_memory_mb
        )

    return CorpusIndex.open(
        Path(path).expanduser(),
        settings.resolved_cache_dir(),
        passage_chars=corpus.passage_chars,
        pool_factory=pool,
        on_warning=on_warning,
    )
