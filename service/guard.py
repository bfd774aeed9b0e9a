"""What a browser may make the service do: the checks that stop other web pages driving it.

Without a token (the loopback default) a page on any site can send requests to 127.0.0.1, and a
name rebound to 127.0.0.1 makes its requests look same-origin to the browser. So:

* the Host header must name this service (loopback names, the bound address, ``allowed_hosts``),
  which defeats DNS rebinding: the browser sends the attacker's name;
* a write (POST, PUT, PATCH, DELETE) that carries an ``Origin`` must come from this same origin;
* a body must be ``application/json``: the types a form or a "simple" cross-origin request can
  send without a CORS preflight (text/plain, form types) are refused with 415;
* every response says: no framing, no sniffing, no referrer, and a CSP that allows only this
  origin's own script, style and connections (the page has no inline script or style).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler
from yarl import URL

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODIES = frozenset({"POST", "PUT", "PATCH"})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def _refuse(code: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=code)


def _name(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _is_loopback_name(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_names(bound: Iterable[str], extra: Iterable[str]) -> frozenset[str]:
    """The Host names answered: the bound address (unless a wildcard) and the operator's list."""
    names = {_name(h) for h in bound if _name(h) not in WILDCARD_BINDS}
    names |= {_name(h) if h.strip() != "*" else "*" for h in extra}
    return frozenset(names)


def _split(authority: str) -> tuple[str, int | None] | None:
    """(lower-case host, explicit port or None) of a Host value; None when it is malformed."""
    try:
        url = URL("//" + authority.strip())
    except ValueError:
        return None
    if url.host is None or url.user is not None or url.path not in ("", "/"):
        return None
    return _name(url.host), url.explicit_port


def host_allowed(header: str | None, names: frozenset[str]) -> bool:
    if header is None:
        return True  # HTTP/1.0 without Host: no browser sends that
    parts = _split(header)
    if parts is None:
        return False
    return "*" in names or _is_loopback_name(parts[0]) or parts[0] in names


def same_origin(origin: str, host: str | None) -> bool:
    """Whether ``Origin`` names the same host and port the request was sent to."""
    try:
        url = URL(origin)
    except ValueError:
        return False
    parts = _split(host or "")
    if url.scheme not in ("http", "https") or url.host is None or parts is None:
        return False
    default = 443 if url.scheme == "https" else 80
    port = parts[1] if parts[1] is not None else default
    return _name(url.host) == parts[0] and url.port == port


def host_middleware(names: frozenset[str]) -> Any:
    @web.middleware
    async def check_host(request: web.Request, handler: Handler) -> web.StreamResponse:
        header = request.headers.get("Host")
        if not host_allowed(header, names):
            return _refuse(
                403, f"this service does not answer to host {header!r} (see service.allowed_hosts)"
            )
        return await handler(request)

    return check_host


@web.middleware
async def check_writes(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Cross-origin writes are 403; a body that is not JSON is 415 (before it is read)."""
    if request.method in WRITES:
        origin = request.headers.get("Origin")
        if origin is not None and not same_origin(origin, request.headers.get("Host")):
            return _refuse(403, f"cross-origin request from {origin!r} refused")
    if request.method in BODIES and request.content_type != "application/json":
        return _refuse(415, "the body must be JSON (Content-Type: application/json)")
    return await handler(request)


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: every response, errors and streams included."""
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
