"""The address rule of the safe fetcher (DESIGN §8) and the transport that enforces it.

A URL is checked once: its host is resolved once, every address it resolves to must be public, and
the connection then goes to that checked address (the *pin*) and to nothing else. Connecting by name
after checking would let a second DNS answer (rebinding) point the socket somewhere private, so
``PinnedTransport`` never resolves: it dials only addresses pinned for the current task by
``pinned()``, and refuses every other connection. The URL keeps its hostname, so TLS SNI and
certificate checks, the ``Host`` header and connection pooling all stay keyed on the name.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import unquote

import httpcore
import httpx

from deepresearch.errors import FetchBlocked, FetchError
from deepresearch.policies.urls import web_url_problem

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``async resolve(host, port) -> [address, ...]``; injected so tests need no DNS."""

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
# Cloud metadata endpoints stay refused even with allow_private: they hand out credentials.
METADATA_IPS = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
        "100.100.100.200",
        "168.63.129.16",
    )
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


@dataclass(frozen=True)
class PinnedAddress:
    """A checked URL's connection target: ``host`` as the transport sees it, and the address to dial."""

    host: str
    port: int
    ip: str


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address of ``host`` from the system resolver, without blocking the event loop."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, compatible, NAT64 well-known, 6to4)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    value = int(ip)
    if value >> 32 == 0 and value > 1:  # IPv4-compatible ::a.b.c.d (deprecated)
        return ipaddress.IPv4Address(value)
    if ip in _NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return ip.sixtofour


def address_problem(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why ``ip`` may not be fetched, or None. ``allow_private`` lifts every rule except metadata,
    multicast and the unspecified address."""
    if ip in METADATA_IPS:
        return "cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(ip.compressed.split("%")[0])
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = address_problem(embedded, allow_private=allow_private)
            return f"{inner} {embedded} embedded in IPv6" if inner else None
        if ip in _NAT64_LOCAL and not allow_private:
            return "local-use NAT64 address"
        if ip.teredo is not None and not allow_private:
            return "Teredo tunnel address"
    if ip.is_unspecified:
        return "unspecified address"
    if ip.is_multicast:
        return "multicast address"
    if allow_private:
        return None
    if ip.is_loopback:
        return "loopback address"
    if ip.is_link_local:
        return "link-local address"
    if ip in _SHARED:
        return "shared address space (carrier-grade NAT)"
    if ip.is_reserved:
        return "reserved address"
    if ip.is_private:
        return "private address"
    if not ip.is_global:
        return "address not globally routable"
    return None


def _ip_literal(host: str) -> IPAddress | None:
    """``host`` as an address when it is one, in any form a resolver would accept (``127.1``,
    ``0x7f.0.0.1``, ``2130706433``): such hosts never reach the resolver."""
    try:
        return ipaddress.ip_address(unquote(host))
    except ValueError:
        pass
    if _NUMERIC_LABEL.match(host.rstrip(".").rsplit(".", 1)[-1]):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host.rstrip(".")))
        except OSError:
            raise ValueError(f"malformed numeric host {host}") from None
    return None


async def check_url(
    url: str,
    *,
    resolve: Resolver | None = None,
    allow_private: bool = False,
    allowed_private_hosts: Iterable[str] = (),
) -> PinnedAddress:
    """Refuse ``url`` unless it is http(s) to a public address; return the address to connect to.

    Raises ``FetchBlocked(url, reason)`` when a rule refuses the URL and ``FetchError`` when the host
    does not resolve. The host is resolved once; every address must pass (a mixed answer is refused)
    and the first is pinned. Credentials in the URL are allowed (the fetcher drops them on an origin
    change). ``allowed_private_hosts`` names hosts whose private addresses are accepted: a test-only
    setting, so a fake public name can point at a loopback server while redirects stay checked.
    """
    problem = web_url_problem(url)  # before anything IDNA-encodes the host and raises
    if problem:
        raise FetchBlocked(url, problem)
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:  # ValueError: IDNA's UnicodeError
        raise FetchBlocked(url, f"invalid URL ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise FetchBlocked(url, f"scheme {parsed.scheme or '(none)'} is not http or https")
    host = parsed.raw_host.decode("ascii").lower()
    if not host:
        raise FetchBlocked(url, "no host")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    name = host.rstrip(".")
    private_ok = allow_private or name in set(allowed_private_hosts)
    if name in METADATA_HOSTS:
        raise FetchBlocked(url, "cloud metadata host")
    if not private_ok and (name == "localhost" or name.endswith(".localhost")):
        raise FetchBlocked(url, "loopback name")
    try:
        literal = _ip_literal(host)
    except ValueError as exc:
        raise FetchBlocked(url, str(exc)) from None
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        try:
            answers = await (resolve or system_resolve)(host, port)
        except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA cannot encode
            raise FetchError(url, f"cannot resolve {name} ({exc})") from None
        try:
            addresses = [ipaddress.ip_address(a) for a in answers]
        except ValueError as exc:
            raise FetchBlocked(url, f"resolver returned a non-address ({exc})") from None
        if not addresses:
            raise FetchError(url, f"cannot resolve {name} (no addresses)")
    for ip in addresses:
        problem = address_problem(ip, allow_private=private_ok)
        if problem:
            raise FetchBlocked(url, f"{name} is {ip}: {problem}")
    return PinnedAddress(host=host, port=port, ip=str(addresses[0]))


# --------------------------------------------------------------------------- the pinned transport

_PINS: contextvars.ContextVar[Mapping[tuple[str, int], str]] = contextvars.ContextVar(
    "deepresearch_pins", default=MappingProxyType({})
)


@contextmanager
def pinned(address: PinnedAddress) -> Iterator[None]:
    """Let ``PinnedTransport`` connect to ``address.host`` (via ``address.ip``) in this task."""
    token = _PINS.set({**_PINS.get(), (address.host, address.port): address.ip})
    try:
        yield
    finally:
        _PINS.reset(token)


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Dials the pinned address of the requested host and port; anything unpinned is refused."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        ip = _PINS.get().get((host.lower(), port))
        if ip is None:
            raise httpcore.ConnectError(f"{host}:{port} was not checked (use the safe fetcher)")
        return await self._inner.connect_tcp(
            ip, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    """The certifi CA bundle, loaded once (loading it costs a few hundred milliseconds)."""
    return httpx.create_ssl_context(trust_env=False)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose connections go only to pinned addresses; no env proxies.

    TLS is always verified (against the URL's hostname); ``ssl_context`` replaces the default CA
    bundle, e.g. a test CA.
    """

    def __init__(
        self, *, ssl_context: ssl.SSLContext | None = None, limits: httpx.Limits | None = None
    ) -> None:
        super().__init__(trust_env=False)
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context or _default_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_PinnedBackend(),
        )
