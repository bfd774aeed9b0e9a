"""A corpus's HTML pages served on loopback behind a SearXNG-compatible search, for the web path.

``documents.py --search searxng`` asks the same questions of the same pages read from the web:
the project's ``FakeSearxng`` answers every query with the pages ranked by the corpus's own index
(``CorpusIndex.search``), and a small static server hands the pages to the safe fetcher. Both run
in a thread of their own with its event loop, since the runs are driven synchronously from the
main thread. Loopback only: nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from deepresearch.providers.testing.searxng import FakeSearxng, result

ROBOTS = "User-agent: *\nAllow: /\n"
RESULTS = 10  # pages per query, as a search engine's first page


class RankedSearxng(FakeSearxng):
    """``FakeSearxng`` whose results for a query are ``rank(query)``, computed when asked."""

    def __init__(self, rank: Callable[[str], Sequence[dict[str, Any]]]) -> None:
        super().__init__()
        self._rank = rank

    async def _search(self, request: web.Request) -> web.StreamResponse:
        query = request.query.get("q", "")
        self.set_results(query, self._rank(query))
        return await super()._search(request)


def ranked_pages(
    index: Any, page_url: Callable[[str], str]
) -> Callable[[str], list[dict[str, Any]]]:
    """Search results for a query: the corpus index's hits, one per document, as served URLs."""
    from deepresearch.providers.search.doc_ids import parse_doc_id

    def rank(query: str) -> list[dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for hit in index.search(query, 4 * RESULTS):
            name = Path(parse_doc_id(hit.url)[0]).name
            if name not in out:
                out[name] = result(page_url(name), hit.title, hit.snippet)
        return list(out.values())[:RESULTS]

    return rank


class ServedCorpus:
    """``with ServedCorpus(docs, index) as searxng_url:`` the pages of ``docs`` on loopback and
    the search over them, until the block ends."""

    def __init__(self, docs: Path, index: Any) -> None:
        self._docs = docs
        self._index = index
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self._searx: RankedSearxng | None = None
        self.pages_url = ""

    async def _page(self, request: web.Request) -> web.StreamResponse:
        path = self._docs / request.match_info["name"]
        if path.parent != self._docs or not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(body=path.read_bytes(), content_type="text/html", charset="utf-8")

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text=ROBOTS)

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/{name}", self._page)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        host, port = self._runner.addresses[0][:2]
        self.pages_url = f"http://{host}:{port}"
        rank = ranked_pages(self._index, lambda name: f"{self.pages_url}/{name}")
        self._searx = await RankedSearxng(rank).__aenter__()
        return self._searx.base_url

    async def _stop(self) -> None:
        if self._searx is not None:
            await self._searx.__aexit__(None, None, None)
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> str:
        self._thread.start()
        return asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
