"""A loopback SearXNG-compatible JSON API, shipped for offline tests (ours and users').

``async with FakeSearxng() as fake:`` serves ``GET /search?q=...&format=json`` on 127.0.0.1 at a
free port (``fake.base_url``), answering from scripted results. Failures are scripted as a queue
consumed one request at a time (``fail_next(500)``, ``rate_limit_next("7")``, ``malformed_next()``),
and ``latency_s`` delays every answer, so fallback, retry and timeout paths can be exercised with
the real ``SearxngSearch`` and the real httpx client, never the internet.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from aiohttp import web


def result(url: str, title: str, content: str = "", engine: str = "fake") -> dict[str, Any]:
    """One result object shaped like SearXNG's."""
    return {"url": url, "title": title, "content": content, "engine": engine, "score": 1.0}


@dataclass(frozen=True)
class ScriptedFailure:
    status: int
    body: str = ""
    retry_after: str | None = None
    content_type: str = "application/json"


class FakeSearxng:
    """The server. ``results`` maps a query to its results; other queries get ``default``."""

    def __init__(
        self,
        results: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        *,
        default: Sequence[Mapping[str, Any]] = (),
        latency_s: float = 0.0,
        require_json_format: bool = True,
    ) -> None:
        self._results = {q: [dict(r) for r in rs] for q, rs in (results or {}).items()}
        self._default = [dict(r) for r in default]
        self.latency_s = latency_s
        self.require_json_format = require_json_format
        self.requests: list[dict[str, str]] = []  # query parameters of every request received
        self._failures: deque[ScriptedFailure] = deque()
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    # ------------------------------------------------------------------ scripting

    def set_results(self, query: str, results: Sequence[Mapping[str, Any]]) -> None:
        self._results[query] = [dict(r) for r in results]

    def fail_next(self, status: int = 500, times: int = 1, body: str = "") -> None:
        for _ in range(times):
            self._failures.append(ScriptedFailure(status, body or json.dumps({"error": status})))

    def rate_limit_next(self, retry_after: str | None = "1", times: int = 1) -> None:
        for _ in range(times):
            self._failures.append(ScriptedFailure(429, "Too Many Requests", retry_after))

    def malformed_next(self, times: int = 1) -> None:
        for _ in range(times):
            self._failures.append(ScriptedFailure(200, "{not json", None))

    @property
    def pending_failures(self) -> int:
        return len(self._failures)

    # ------------------------------------------------------------------ serving

    async def _search(self, request: web.Request) -> web.StreamResponse:
        params = dict(request.query)
        self.requests.append(params)
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)  # the server being slow, not a test waiting
        if self._failures:
            failure = self._failures.popleft()
            headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            return web.Response(
                status=failure.status,
                text=failure.body,
                headers=headers,
                content_type=failure.content_type,
            )
        if self.require_json_format and params.get("format") != "json":
            return web.Response(status=403, text="format not allowed")
        query = params.get("q", "")
        found = self._results.get(query, self._default)
        payload = {
            "query": query,
            "number_of_results": len(found),
            "results": found,
            "answers": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
        return web.json_response(payload)

    async def __aenter__(self) -> FakeSearxng:
        app = web.Application()
        app.router.add_get("/search", self._search)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.base_url = f"http://{host}:{port}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


__all__ = ["FakeSearxng", "ScriptedFailure", "result"]
