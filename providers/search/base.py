"""Search and fetch Protocols. Every search provider returns ranked ``SearchHit``s; every fetcher
turns a hit's URL (or corpus document id) into a ``FetchedDoc``."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from deepresearch.schemas import FetchedDoc, SearchHit


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        """Ranked hits for ``query`` (rank 1 is best); raise ``ProviderError`` on failure."""
        ...


@runtime_checkable
class Fetcher(Protocol):
    def handles(self, url: str) -> bool:
        """Whether this fetcher can resolve ``url`` (scheme or id form)."""
        ...

    async def fetch(self, url: str) -> FetchedDoc:
        """The document's text; raise ``FetchBlocked`` or ``FetchError``."""
        ...
