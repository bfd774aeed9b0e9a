"""DuckDuckGo (and the other engines ``ddgs`` aggregates) with no API key.

``ddgs`` is synchronous and does its own HTTP (it cannot use our httpx client), so each search
runs in a worker thread to keep the event loop free. The call itself is injectable: tests pass a
function returning canned result dicts, so no test reaches the real engines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.providers.search.transport import ranked_hits, text_field
from deepresearch.schemas import SearchHit

# (query, max_results) -> list of {"href", "title", "body"} dicts, as ``DDGS().text`` returns.
TextSearch = Callable[[str, int], list[dict[str, Any]]]


def ddgs_text_search(timeout_s: int = 10, backend: str = "auto") -> TextSearch:
    """The real ``ddgs`` call, imported lazily so the package loads without it."""

    def run(query: str, max_results: int) -> list[dict[str, Any]]:
        from ddgs import DDGS

        return DDGS(timeout=timeout_s).text(query, max_results=max_results, backend=backend)

    return run


def _classify(exc: Exception) -> ProviderError:
    """Map ``ddgs`` exceptions (matched by class name: the import is lazy) to our errors."""
    kind = type(exc).__name__
    if kind == "RatelimitException":
        return RateLimited("duckduckgo", None)
    if kind == "TimeoutException" or isinstance(exc, TimeoutError):
        return ProviderError("duckduckgo", "timed out", True)
    return ProviderError("duckduckgo", f"{kind}: {str(exc)[:200]}", True)


class DuckDuckGoSearch:
    """``SearchProvider`` over ``ddgs`` text search."""

    name = "duckduckgo"
    MAX_RESULTS = 50

    def __init__(self, text_search: TextSearch | None = None) -> None:
        self._text_search = text_search or ddgs_text_search()

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        wanted = max(1, min(limit, self.MAX_RESULTS))
        try:
            raw = await asyncio.to_thread(self._text_search, query, wanted)
        except ImportError:
            raise ProviderError(self.name, "the ddgs package is not installed", False) from None
        except Exception as exc:
            if "no results found" in str(exc).lower():
                return []
            raise _classify(exc) from None
        if not isinstance(raw, list):
            raise ProviderError(self.name, "unexpected result shape (not a list)", False)
        items = [r for r in raw if isinstance(r, dict)]
        return ranked_hits(
            self.name,
            (
                (text_field(i, "href", "url"), text_field(i, "title"), text_field(i, "body"))
                for i in items
            ),
            limit,
        )
