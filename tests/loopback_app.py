"""aiohttp apps served on 127.0.0.1 (port 0) with an httpx client each, for tests of the service's
HTTP surface; one ``close()`` ends every client and app a test started."""

from __future__ import annotations

from typing import Any

import httpx
from aiohttp import web


class LoopbackApps:
    def __init__(self) -> None:
        self._runners: list[web.AppRunner] = []
        self._clients: list[httpx.AsyncClient] = []

    async def client(self, app: web.Application, **client_options: Any) -> httpx.AsyncClient:
        """Serve ``app`` on a free loopback port; a client whose base URL is that server."""
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self._runners.append(runner)
        base_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        client = httpx.AsyncClient(base_url=base_url, **client_options)
        self._clients.append(client)
        return client

    async def close(self) -> None:
        """Clients first, then the apps (their cleanup stops any run still going)."""
        for client in self._clients:
            await client.aclose()
        for runner in self._runners:
            await runner.cleanup()
