"""A real local model server for the local-model tier, and a counting proxy in front of it.

The server is ``llama-cpp-python``'s OpenAI-compatible one, run from its own environment (the
build is too slow for CI: ``make test-local-model`` makes it). The proxy forwards every request
unchanged and records what the server itself reported (status, prompt and completion tokens,
from a JSON reply or from a stream's usage chunk), so a test can hold the run's usage against
what the server saw rather than against what the run says about itself."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

REPO = Path(__file__).resolve().parents[2]
SERVER_PYTHON = Path(
    os.environ.get("LOCAL_MODEL_PYTHON", str(REPO / ".venv-local-model" / "bin" / "python"))
)
MODEL_FILE = Path(
    os.environ.get("LOCAL_MODEL_FILE", str(REPO / ".local-model" / "SmolLM2-135M-Instruct.gguf"))
)
N_CTX = 8192
MODEL = "smollm2-135m"  # the alias the server is started under


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Exchange:
    """One request the server answered, as the server counted it."""

    path: str
    status: int
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class CountingProxy:
    """Forwards ``/v1/*`` to ``upstream`` on its own event loop in a thread; records exchanges."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completions(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    def reset(self) -> None:
        self.exchanges.clear()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() not in {"host", "content-length", "transfer-encoding"}
        }
        url = self.upstream + request.path_qs
        timeout = aiohttp.ClientTimeout(total=3600)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.request(request.method, url, data=body, headers=headers) as up,
        ):
            data = await up.read()
            self.exchanges.append(self._counted(request.path, up.status, data))
            return web.Response(body=data, status=up.status, content_type=up.content_type)

    @staticmethod
    def _counted(path: str, status: int, data: bytes) -> Exchange:
        exchange = Exchange(path, status)
        usages: list[dict[str, int]] = []
        text = data.decode("utf-8", "replace")
        try:
            usages.append(json.loads(text).get("usage") or {})
        except (ValueError, AttributeError):
            for line in text.splitlines():  # a stream: the usage rides on one data: chunk
                if line.startswith("data:") and "usage" in line:
                    try:
                        usages.append(json.loads(line[5:]).get("usage") or {})
                    except ValueError:
                        continue
        for usage in usages:
            exchange.prompt_tokens = max(exchange.prompt_tokens, int(usage.get("prompt_tokens", 0)))
            exchange.completion_tokens = max(
                exchange.completion_tokens, int(usage.get("completion_tokens", 0))
            )
        return exchange

    def start(self) -> CountingProxy:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_route("*", "/{tail:.*}", self._forward)
            self._runner = web.AppRunner(app)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            server = site._server
            assert server is not None
            self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name="counting-proxy", daemon=True)
        self._thread.start()
        ready.wait(30)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(30)
