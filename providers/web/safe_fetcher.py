"""The one safe web fetcher (DESIGN §8): every outbound page fetch goes through ``SafeFetcher``.

Each hop of a fetch is checked by ``check_url`` (netguard.py) and connected to its pinned address;
redirects are followed here, not by httpx, so every hop is checked again, and credentials and
cookies never cross to another origin. One deadline covers the whole download including redirects
and slow-drip bodies; bodies are capped before and after decompression; the kind of document is
sniffed; robots.txt is honoured; each host gets a few concurrent requests and a polite gap.
Extraction (trafilatura, pdfium) runs in the subprocess ``ExtractionPool``, never in this process.
"""

from __future__ import annotations

import asyncio
import base64
import time
import urllib.robotparser
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx

from deepresearch import domains
from deepresearch.errors import ConfigError, ExtractionError, FetchBlocked, FetchError
from deepresearch.policies.urls import web_url_problem
from deepresearch.providers.documents.extract import ExtractionPool
from deepresearch.providers.documents.extract_office import CONTENT_TYPES
from deepresearch.providers.web.body import (
    CappedDecoder,
    Kind,
    accept_encoding,
    decode_text,
    media_type,
    refused_before_body,
    sniff,
)
from deepresearch.providers.web.netguard import (
    PinnedAddress,
    PinnedTransport,
    Resolver,
    check_url,
    pinned,
)
from deepresearch.schemas import FetchedDoc

__all__ = ["USER_AGENT", "Download", "FetchPolicy", "SafeFetcher", "check_url", "make_client"]

USER_AGENT = (
    "Mozilla/5.0 (compatible; ray-deep-research/0.1; +https://github.com/ray-deep-research)"
)
ROBOTS_TOKEN = "ray-deep-research"  # the product token robots.txt groups are matched against
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: at least 500 KiB are parsed, the rest ignored
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CONTENT_TYPES: dict[Kind, str] = {
    "html": "text/html",
    "pdf": "application/pdf",
    "text": "text/plain",
    "docx": CONTENT_TYPES["docx"],
    "pptx": CONTENT_TYPES["pptx"],
    "xlsx": CONTENT_TYPES["xlsx"],
    "csv": CONTENT_TYPES["csv"],
    "epub": CONTENT_TYPES["epub"],
}
_ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.1"

Origin = tuple[str, str, int]


@dataclass(frozen=True)
class FetchPolicy:
    """The fetcher's limits (``web:`` in config); ``allowed_private_hosts`` is test-only."""

    allow_private: bool = False
    allowed_private_hosts: frozenset[str] = frozenset()
    timeout_s: float = 30.0
    max_redirects: int = 5
    max_raw_bytes: int = 10_000_000
    max_decoded_bytes: int = 20_000_000
    respect_robots: bool = True
    per_host_concurrency: int = 2
    per_host_delay_s: float = 0.25
    user_agent: str = USER_AGENT


@dataclass(frozen=True)
class Download:
    """A fetched body, decoded from its ``Content-Encoding`` but not yet extracted."""

    url: str  # after redirects
    kind: Kind
    content_type: str  # declared media type, e.g. "text/html"
    charset: str | None
    body: bytes = field(repr=False)


def make_client(policy: FetchPolicy | None = None, **transport: object) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` the fetcher needs: pinned transport, no redirects, no env proxies.

    ``transport`` goes to ``PinnedTransport`` (``ssl_context=``, ``limits=``).
    """
    timeout = (policy or FetchPolicy()).timeout_s
    return httpx.AsyncClient(
        transport=PinnedTransport(**transport),  # type: ignore[arg-type]
        follow_redirects=False,
        timeout=httpx.Timeout(timeout),
        trust_env=False,
    )


def _origin(url: httpx.URL) -> Origin:
    return (url.scheme, url.raw_host.decode("ascii").lower(), url.port or _default_port(url))


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


class SafeFetcher:
    """``Fetcher`` for http(s) URLs. ``client`` must come from ``make_client`` (its transport only
    dials pinned addresses); ``resolve``, ``clock`` and ``sleep`` are injectable for tests."""

    provider = "web"

    def __init__(
        self,
        client: httpx.AsyncClient,
        pool: ExtractionPool,
        policy: FetchPolicy | None = None,
        *,
        resolve: Resolver | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not isinstance(getattr(client, "_transport", None), PinnedTransport):
            # a plain client would dial by name after the check: DNS rebinding gets through
            raise ConfigError("web", "SafeFetcher needs an httpx client from make_client()")
        self.client = client
        self.pool = pool
        self.policy = policy or FetchPolicy()
        self._resolve = resolve
        self._clock = clock
        self._sleep = sleep
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next_start: dict[str, float] = {}
        self._robots: dict[Origin, urllib.robotparser.RobotFileParser] = {}
        self._robots_locks: dict[Origin, asyncio.Lock] = {}

    def handles(self, url: str) -> bool:
        return url.split(":", 1)[0].lower() in ("http", "https")

    async def check(self, url: str) -> PinnedAddress:
        """``check_url`` with this fetcher's resolver and private-address settings."""
        return await check_url(
            url,
            resolve=self._resolve,
            allow_private=self.policy.allow_private,
            allowed_private_hosts=self.policy.allowed_private_hosts,
        )

    # ------------------------------------------------------------------ fetch = download + extract

    async def fetch(self, url: str) -> FetchedDoc:
        """The page's text; ``FetchBlocked`` when a rule refuses it, ``FetchError`` otherwise
        (the caller then falls back to the search snippet)."""
        download = await self.download(url)
        name = httpx.URL(download.url).path.rsplit("/", 1)[-1] or httpx.URL(download.url).host
        if download.kind == "text":
            title, text, published = name, decode_text(download.body, download.charset), ""
        else:
            try:
                doc = await self.pool.extract_data(
                    download.body, download.kind, name, download.charset
                )
            except ExtractionError as exc:
                raise FetchError(url, f"extraction failed: {exc.reason}") from None
            title, published = doc.title, doc.published
            text = "\n\n".join(page.strip() for page in doc.pages)
        if not text.strip():
            raise FetchError(url, "no text in the page")
        if published:
            text = f"Published: {published}\n\n{text}"
        return FetchedDoc(
            url=download.url,
            title=title,
            location=download.url,
            text=text,
            content_type=_CONTENT_TYPES[download.kind],
            provider="web",
            domain=domains.recognize(text),  # from the page's content, as a corpus document's
        )

    async def download(self, url: str) -> Download:
        """Follow up to ``max_redirects`` redirects, checking each hop, and read the final body."""
        problem = web_url_problem(url)
        if problem:
            raise FetchBlocked(url, problem)
        try:
            current = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:  # ValueError: IDNA's UnicodeError
            raise FetchBlocked(url, f"invalid URL ({exc})") from None
        authorization = _basic_auth(current)
        cookies = httpx.Cookies()
        started = False
        try:
            async with asyncio.timeout(None) as deadline:
                for _hop in range(self.policy.max_redirects + 1):
                    address = await self.check(str(current))
                    async with self._slot(address.host):
                        if not started:  # the deadline starts once the first host lets us in
                            deadline.reschedule(
                                asyncio.get_running_loop().time() + self.policy.timeout_s
                            )
                            started = True
                        if self.policy.respect_robots:
                            await self._check_robots(current, address)
                        request = self._request(current, authorization, cookies)
                        await self._pace(address.host)
                        with pinned(address):
                            response = await self.client.send(request, stream=True)
                        try:
                            target = _redirect_target(response)
                            if target is None:
                                return await self._read(str(current), response)
                            cookies.extract_cookies(response)
                        finally:
                            await response.aclose()
                    if _origin(target) != _origin(current):  # never carry secrets across
                        authorization, cookies = None, httpx.Cookies()
                    current = target.copy_with(username=None, password=None)
        except TimeoutError:
            raise FetchError(url, f"deadline of {self.policy.timeout_s:g}s exceeded") from None
        except httpx.HTTPError as exc:
            raise FetchError(url, f"{type(exc).__name__}: {exc}"[:300]) from None
        raise FetchError(url, f"more than {self.policy.max_redirects} redirects")

    def _request(
        self, url: httpx.URL, authorization: str | None, cookies: httpx.Cookies
    ) -> httpx.Request:
        headers = {
            "User-Agent": self.policy.user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": accept_encoding(),
            "Accept-Language": "en;q=0.9, *;q=0.5",
        }
        if authorization:
            headers["Authorization"] = authorization
        request = httpx.Request("GET", url.copy_with(username=None, password=None), headers=headers)
        cookies.set_cookie_header(request)
        return request

    async def _read(self, url: str, response: httpx.Response) -> Download:
        if response.status_code >= 400:
            raise FetchError(url, f"HTTP {response.status_code}")
        declared, charset = media_type(response.headers.get("content-type", ""))
        if refused_before_body(declared):
            raise FetchError(url, f"unsupported content type {declared}")
        body = await self._body(url, response, self.policy.max_raw_bytes)
        return Download(url, sniff(url, declared, body), declared, charset, body)

    async def _body(self, url: str, response: httpx.Response, max_raw: int) -> bytes:
        """The decoded body, streamed raw with caps on wire bytes and decoded bytes."""
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > max_raw:
            raise FetchError(url, f"body of {length} bytes over the {max_raw}-byte cap")
        decoder = CappedDecoder(
            url, response.headers.get("content-encoding", ""), self.policy.max_decoded_bytes
        )
        received = 0
        async for chunk in response.aiter_raw():
            received += len(chunk)
            if received > max_raw:
                raise FetchError(url, f"body over the {max_raw}-byte cap")
            decoder.feed(chunk)
        return decoder.body()

    # ------------------------------------------------------------------ politeness

    @asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        slot = self._slots.get(host)
        if slot is None:
            slot = self._slots[host] = asyncio.Semaphore(self.policy.per_host_concurrency)
        async with slot:
            yield

    async def _pace(self, host: str) -> None:
        """Space request starts to one host by ``per_host_delay_s`` (a reservation, no lock)."""
        delay = self.policy.per_host_delay_s
        if delay <= 0:
            return
        now = self._clock()
        start = max(now, self._next_start.get(host, now))
        self._next_start[host] = start + delay
        if start > now:
            await self._sleep(start - now)

    async def _check_robots(self, url: httpx.URL, address: PinnedAddress) -> None:
        origin = _origin(url)
        lock = self._robots_locks.setdefault(origin, asyncio.Lock())
        async with lock:
            parser = self._robots.get(origin)
            if parser is None:
                parser = self._robots[origin] = await self._fetch_robots(url, address)
        if not parser.can_fetch(ROBOTS_TOKEN, str(url)):
            raise FetchBlocked(str(url), "disallowed by robots.txt")

    async def _fetch_robots(
        self, url: httpx.URL, address: PinnedAddress
    ) -> urllib.robotparser.RobotFileParser:
        """RFC 9309: 2xx is parsed, 4xx (and, simplified, 3xx) allows all, 5xx refuses for now."""
        robots_url = url.copy_with(path="/robots.txt", query=None, fragment=None)
        parser = urllib.robotparser.RobotFileParser(str(robots_url))
        await self._pace(address.host)
        with pinned(address):
            response = await self.client.send(
                self._request(robots_url, None, httpx.Cookies()), stream=True
            )
        try:
            if response.status_code >= 500:
                raise FetchBlocked(str(url), f"robots.txt answered HTTP {response.status_code}")
            if 200 <= response.status_code < 300:
                lines = (await _robots_text(str(robots_url), response)).splitlines()
                await asyncio.to_thread(parser.parse, lines)  # ~1 s for 500 KiB: off the loop
            else:
                parser.parse([])
        finally:
            await response.aclose()
        return parser


async def _robots_text(url: str, response: httpx.Response) -> str:
    """The first ``ROBOTS_MAX_BYTES`` of a robots.txt, decompressed. RFC 9309 §2.5 lets a crawler
    ignore what follows its limit (at least 500 KiB), so reading stops there, raw or decoded
    (a 38 KB gzip robots.txt can expand to megabytes), and a line cut by the cap is dropped: the
    rules read so far are parsed and applied."""
    encoding = response.headers.get("content-encoding", "")
    decoder = CappedDecoder(url, encoding, ROBOTS_MAX_BYTES, truncate=True)
    received = 0
    async for chunk in response.aiter_raw():
        received += len(chunk)
        decoder.feed(chunk)
        if decoder.full or received > ROBOTS_MAX_BYTES:
            break
    body = decoder.body()
    if decoder.full or received > ROBOTS_MAX_BYTES:
        body = body[: body.rfind(b"\n") + 1]
    return decode_text(body, "utf-8")


def _redirect_target(response: httpx.Response) -> httpx.URL | None:
    location = response.headers.get("location")
    if response.status_code not in _REDIRECTS or not location:
        return None
    try:
        return response.request.url.join(location)
    except (httpx.InvalidURL, ValueError):  # the next hop's check refuses what slips through
        return None


def _basic_auth(url: httpx.URL) -> str | None:
    if not url.username and not url.password:
        return None
    token = base64.b64encode(f"{url.username}:{url.password}".encode()).decode("ascii")
    return f"Basic {token}"
