"""A fake web on loopback for offline tests and benchmarks of the safe fetcher.

``FakeWeb`` is an aiohttp app on 127.0.0.1 (port 0) serving the hostile and ordinary cases the
fetcher must handle: articles with a title and date, PDFs, plain text, redirects (anywhere, in a
loop, across origins with a cookie), slow-drip bodies, gzip and brotli bombs, wrong content types
and a robots.txt. It records every request (path, host, headers) and the peak number of requests
in flight, so tests can assert what the fetcher sent. ``static_resolver`` maps fake host names to
addresses, so a test can give the loopback server any name without DNS.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import importlib
import socket
import ssl
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from deepresearch.providers.web.netguard import Resolver

DEFAULT_ROBOTS = "User-agent: *\nDisallow: /private/\n"
_LOREM = (
    "Field measurements were collected at {n} sites over three seasons. The survey team "
    "compared the readings with the regional baseline and found a steady difference. "
    "Each site was visited twice, and the second visit confirmed the first reading. "
)


@dataclass(frozen=True)
class RecordedRequest:
    path: str  # path and query
    host: str  # the Host header
    headers: Mapping[str, str]  # lower-case names


def static_resolver(mapping: Mapping[str, Sequence[str]]) -> Resolver:
    """An async resolver answering from ``mapping`` (name -> addresses); other names fail.

    Like ``getaddrinfo`` it IDNA-encodes the name first, so a name the system resolver would
    raise ``UnicodeError`` on (``a..b``, a label over 63 characters) raises it here too."""

    async def resolve(host: str, port: int) -> list[str]:
        host.encode("idna")
        addresses = mapping.get(host.lower().rstrip("."))
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, f"{host} is not in the test resolver")
        return list(addresses)

    return resolve


def escape_pdf_text(text: str) -> str:
    """``text`` safe inside a PDF string literal ``(...)``."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A minimal valid PDF (Helvetica, one line per string, correct xref offsets)."""
    page_ids = [4 + 2 * i for i in range(len(pages))]
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for pid, lines in zip(page_ids, pages, strict=True):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {pid + 1} 0 R "
            f"/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        shown = (f"({escape_pdf_text(t)}) Tj T*" for t in lines)
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 740 Td", *shown]
        stream = "\n".join([*ops, "ET"]).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return assemble_pdf(objects)


def assemble_pdf(objects: Sequence[bytes]) -> bytes:
    """A PDF file of ``objects`` (numbered from 1, object 1 the catalog) with correct xref offsets."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{off:010d} 00000 n \n".encode() for off in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def article_html(title: str, date: str, paragraphs: Sequence[str]) -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>"
        f'<meta property="article:published_time" content="{date}">'
        f'<meta charset="utf-8"></head><body><nav><a href="/">Home</a></nav>'
        f"<article><h1>{title}</h1>{body}</article><footer>Fake Web</footer></body></html>"
    )


@functools.cache
def gzip_bomb(megabytes: int) -> bytes:
    """``megabytes`` MiB of zeros, gzipped to about a thousandth of that."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    return b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()


@functools.cache
def brotli_bomb(megabytes: int) -> bytes | None:
    try:
        brotli: Any = importlib.import_module("brotli")
    except ImportError:
        return None
    return bytes(brotli.compress(bytes(megabytes << 20), quality=5))


class FakeWeb:
    """``async with FakeWeb() as web:`` serves on ``web.base_url`` (http://127.0.0.1:PORT, or
    https with ``ssl_context``)."""

    def __init__(
        self,
        *,
        pages: int = 20,
        latency_s: float = 0.0,
        robots: str | None = DEFAULT_ROBOTS,
        drip_interval_s: float = 0.05,
        bomb_mb: int = 16,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.pages = pages
        self.latency_s = latency_s
        self.path_latency: dict[str, float] = {}
        self.robots = robots
        self.robots_status = 200
        self.robots_gzip = False  # serve robots.txt gzip-encoded (a small body, a large text)
        self.drip_interval_s = drip_interval_s
        self.bomb_mb = bomb_mb
        self.ssl_context = ssl_context
        self.scheme = "https" if ssl_context else "http"
        self.requests: list[RecordedRequest] = []
        self.texts: dict[str, str] = {}  # plain-text pages a test sets, served at /texts/<name>
        self.in_flight = 0
        self.peak_in_flight = 0
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def url(self, path: str, host: str = "127.0.0.1", userinfo: str = "") -> str:
        """``path`` on this server under any host name (resolved by a test resolver)."""
        auth = f"{userinfo}@" if userinfo else ""
        return f"{self.scheme}://{auth}{host}:{self.port}{path}"

    def paths(self, prefix: str) -> list[str]:
        return [r.path for r in self.requests if r.path.startswith(prefix)]

    async def __aenter__(self) -> FakeWeb:
        app = web.Application(middlewares=[self._observe])
        get = [
            ("/robots.txt", self._robots),
            ("/article", self._article),
            ("/pages/{n}", self._page),
            ("/private/{name}", self._article),
            ("/doc.pdf", self._pdf),
            ("/mislabeled.pdf", self._pdf),
            ("/fake.pdf", self._fake_pdf),
            ("/notes.txt", self._text),
            ("/texts/{name}", self._set_text),
            ("/html-as-octet", self._html_as_octet),
            ("/image.png", self._image),
            ("/binary", self._binary),
            ("/redirect", self._redirect),
            ("/set-cookie-redirect", self._redirect),
            ("/loop/{n}", self._loop),
            ("/slow", self._slow),
            ("/bomb.gz", self._bomb),
            ("/bomb.br", self._bomb),
            ("/status/{code}", self._status),
        ]
        app.add_routes([web.get(path, handler) for path, handler in get])
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        await site.start()
        server = getattr(site, "_server", None)
        self.port = int(server.sockets[0].getsockname()[1]) if server else 0
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _observe(self, request: web.Request, handler: Any) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(request.path_qs, request.host, headers))
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            delay = self.path_latency.get(request.path, self.latency_s)
            if delay > 0:
                await asyncio.sleep(delay)
            response: web.StreamResponse = await handler(request)
            return response
        finally:
            self.in_flight -= 1

    # ------------------------------------------------------------------ handlers

    async def _robots(self, request: web.Request) -> web.Response:
        if self.robots is None:
            raise web.HTTPNotFound()
        if self.robots_gzip:
            body = gzip.compress(self.robots.encode(), 9)
            headers = {"Content-Encoding": "gzip", "Content-Type": "text/plain"}
            return web.Response(body=body, status=self.robots_status, headers=headers)
        return web.Response(text=self.robots, status=self.robots_status, content_type="text/plain")

    async def _article(self, request: web.Request) -> web.Response:
        paragraphs = [
            "Solar output in the northern valley rose by 12 percent in 2024, the survey found.",
            *(_LOREM.format(n=i + 3) for i in range(4)),
        ]
        html = article_html("Solar output in 2024", "2024-03-05", paragraphs)
        return web.Response(text=html, content_type="text/html")

    async def _page(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if not 0 <= n < self.pages:
            raise web.HTTPNotFound()
        paragraphs = [f"Page {n} reports a reading of {n * 7} units.", _LOREM.format(n=n)]
        html = article_html(f"Fake page {n}", f"2023-11-0{1 + n % 9}", paragraphs)
        return web.Response(text=html, content_type="text/html")

    async def _pdf(self, request: web.Request) -> web.Response:
        body = build_pdf([["Quarterly report", "Revenue was 41 million dollars."], ["Page two"]])
        kind = "application/pdf" if request.path == "/doc.pdf" else "application/octet-stream"
        return web.Response(body=body, content_type=kind)

    async def _fake_pdf(self, request: web.Request) -> web.Response:
        return web.Response(body=b"<html>not a pdf</html>", content_type="application/pdf")

    async def _text(self, request: web.Request) -> web.Response:
        return web.Response(text="Plain notes: the answer is 42.\n", content_type="text/plain")

    async def _set_text(self, request: web.Request) -> web.Response:
        text = self.texts.get(request.match_info["name"])
        if text is None:
            raise web.HTTPNotFound()
        return web.Response(text=text, content_type="text/plain")

    async def _html_as_octet(self, request: web.Request) -> web.Response:
        html = article_html("Mislabeled page", "2022-01-02", [_LOREM.format(n=5)] * 3)
        return web.Response(body=html.encode(), content_type="application/octet-stream")

    async def _image(self, request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="image/png")

    async def _binary(self, request: web.Request) -> web.Response:
        return web.Response(body=bytes(range(256)) * 8, content_type="application/octet-stream")

    async def _redirect(self, request: web.Request) -> web.Response:
        status = int(request.query.get("status", "302"))
        response = web.Response(status=status, headers={"Location": request.query["to"]})
        if request.path == "/set-cookie-redirect":
            response.set_cookie("session", "secret-cookie")
        return response

    async def _loop(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        return web.Response(status=302, headers={"Location": f"/loop/{n + 1}"})

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        for _ in range(100_000):  # until the client gives up
            await response.write(b"drip ")
            await asyncio.sleep(self.drip_interval_s)
        return response

    async def _bomb(self, request: web.Request) -> web.Response:
        gz = request.path == "/bomb.gz"
        body = gzip_bomb(self.bomb_mb) if gz else brotli_bomb(self.bomb_mb)
        if body is None:
            raise web.HTTPNotFound()
        headers = {"Content-Encoding": "gzip" if gz else "br", "Content-Type": "text/html"}
        return web.Response(body=body, headers=headers)

    async def _status(self, request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="error")
