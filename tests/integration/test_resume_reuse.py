"""A failure mid-run loses nothing, on Ray through the driver: a run interrupted inside its only
sub-task (after its searches and its first batch of pages) is resumed, and the resumed run pays
only for what was left. Calls are counted on the loopback fakes (SearXNG, the web)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from aiohttp import web
from web_settings import web_settings

from deepresearch.actors import crew
from deepresearch.errors import RunInterrupted
from deepresearch.providers.testing.fake_web import article_html
from deepresearch.providers.testing.searxng import FakeSearxng, result
from deepresearch.run import driver

pytestmark = pytest.mark.usefixtures("ray_session")

QUESTION = "How much did solar output rise in the northern valley in 2024?"
PAGES = 4


class HeldWeb:
    """Article pages on loopback. With ``hold`` set, page requests after the first
    ``hold_after`` wait until the test ends and set ``held`` (the moment to interrupt)."""

    def __init__(self, hold_after: int) -> None:
        self.hold_after = hold_after
        self.hold = False
        self.held = threading.Event()  # read by the driver's thread
        self.pages: list[str] = []
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def _page(self, request: web.Request) -> web.Response:
        n = request.match_info["n"]
        self.pages.append(n)
        if self.hold and len(self.pages) > self.hold_after:
            self.held.set()
            await self._release.wait()
        text = [f"Solar output in the northern valley rose by {10 + int(n)} percent in 2024."] * 3
        return web.Response(
            text=article_html(f"Solar output report {n}", "2024-06-01", text),
            content_type="text/html",
        )

    def url(self, n: int) -> str:
        return f"{self.base_url}/page/{n}"

    async def __aenter__(self) -> HeldWeb:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/page/{n}", self._page)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()


async def test_a_resumed_run_pays_only_for_the_searches_and_pages_it_had_not_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = web_settings(tmp_path, {"researcher.queries": 2, "researcher.batch_sizes": [2]})
    async with HeldWeb(hold_after=2) as pages:
        hits = [
            result(pages.url(n), f"Solar output report {n}", "solar output rose in 2024")
            for n in range(1, PAGES + 1)
        ]
        async with FakeSearxng(default=hits) as searx:
            monkeypatch.setenv("SEARXNG_URL", searx.base_url)
            fresh = await asyncio.to_thread(
                driver.execute, driver.prepare(QUESTION, "quick", settings), crew=crew
            )
            searched, fetched = len(searx.requests), len(pages.pages)
            assert fresh.status == "completed", fresh.reason
            assert searched >= 1 and fetched == PAGES

            pages.hold, pages.pages, searx.requests = True, [], []
            prep = driver.prepare(QUESTION, "quick", settings)
            with pytest.raises(RunInterrupted):
                await asyncio.to_thread(
                    driver.execute, prep, None, None, pages.held.is_set, crew=crew
                )
            # every search was made, the first batch read, the second batch held
            assert len(searx.requests) == searched and len(pages.pages) == PAGES

            pages.hold, pages.pages, searx.requests = False, [], []
            resumed = driver.prepare_resume(prep.request.run_id, settings.resolved_state_dir())
            summary = await asyncio.to_thread(driver.execute, resumed, crew=crew)
            assert summary.status == "completed", summary.reason
            assert searx.requests == []  # every search had been done: none is paid again
            assert len(pages.pages) == fetched - 2  # nor the two pages read before the stop
    assert [s.url for s in summary.sources] == [s.url for s in fresh.sources]
