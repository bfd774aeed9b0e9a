"""How many connections the service holds and for how long, and how loudly it complains.

Each open connection costs a file descriptor. Without a cap, many idle or slow clients exhaust
the process's descriptors, after which ``accept()`` fails in a loop and every run that needs to
open a file fails too. So: at most ``max_connections`` at once (the next gets a bare 503 and is
closed), a connection must send its first request's headers within ``request_timeout_s``, idle
keep-alive connections close after the same time, and repeated identical log records (the
``accept()`` error above) are let through once per window with a count of what was dropped.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from deepresearch.service.guard import SECURITY_HEADERS

_BUSY_BODY = b'{"error": "too many connections; try again shortly"}'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\n" + _BUSY_BODY
)
END_OF_HEADERS = b"\r\n\r\n"


@dataclass
class ConnectionGate:
    """A protocol factory around aiohttp's: counts connections and enforces the header deadline."""

    inner: Callable[[], asyncio.Protocol]
    max_connections: int
    request_timeout_s: float
    open: int = 0
    refused: int = 0
    expired: int = 0

    def __call__(self) -> asyncio.Protocol:
        return _Guarded(self)


class JsonErrorHandler(RequestHandler):
    """aiohttp's request handler, except that a request it cannot parse (no ``Host`` on
    HTTP/1.1, a bad method or header) is answered with a JSON error and the security headers,
    like every other error: those replies never reach the application's middlewares."""

    __slots__ = ()  # same layout as RequestHandler, so a handler can be switched to this class

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        plain = super().handle_error(request, status, exc, message)  # logs, checks the writer
        if status >= 500:
            text = "internal error"
        else:
            text = str(getattr(exc, "message", "") or message or "bad request")
        text = " ".join(text.split())[:200]  # the parser's message may quote the raw request
        response = web.json_response({"error": text}, status=plain.status)
        response.headers.update(SECURITY_HEADERS)
        response.force_close()
        return response


def answer_errors_in_json(protocol: asyncio.Protocol) -> asyncio.Protocol:
    """``protocol`` (made by aiohttp's server) answering unparsable requests in JSON."""
    if type(protocol) is RequestHandler:
        protocol.__class__ = JsonErrorHandler
    return protocol


class _Guarded(asyncio.Protocol):
    def __init__(self, gate: ConnectionGate) -> None:
        self.gate = gate
        self.inner: asyncio.Protocol | None = None
        self.transport: asyncio.BaseTransport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self.gate.open >= self.gate.max_connections:
            self.gate.refused += 1
            if isinstance(transport, asyncio.WriteTransport):
                transport.write(BUSY)
            transport.close()
            return
        self.gate.open += 1
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(self.gate.request_timeout_s, self._expire)
        self.inner = answer_errors_in_json(self.gate.inner())
        self.inner.connection_made(transport)

    def _expire(self) -> None:
        self.gate.expired += 1
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.timer is not None:
            seen = self.tail + data
            if END_OF_HEADERS in seen:
                self.timer.cancel()  # later requests are aiohttp's keep-alive timeout's business
                self.timer = None
            self.tail = seen[-3:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.inner is not None:
            self.gate.open -= 1
            self.inner.connection_lost(exc)
            self.inner = None


class RepeatFilter(logging.Filter):
    """Lets a record through once per ``window_s`` per (logger, message, exception type)."""

    def __init__(self, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window_s = window_s
        self.clock = clock
        self._last: dict[tuple[str, str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        key = (record.name, str(record.msg), kind)
        now = self.clock()
        seen = self._last.get(key)
        if seen is not None and now - seen[0] < self.window_s:
            self._last[key] = (seen[0], seen[1] + 1)
            return False
        dropped = seen[1] if seen is not None else 0
        self._last[key] = (now, 0)
        if dropped:
            record.msg = (
                f"{record.msg} (and {dropped} more like it in the last {self.window_s:g} s)"
            )
        if len(self._last) > 1000:  # bounded: forget the oldest keys
            for stale in sorted(self._last, key=lambda k: self._last[k][0])[:500]:
                del self._last[stale]
        return True


NOISY_LOGGERS = ("asyncio", "aiohttp.server", "aiohttp.web")  # not access: one line each


def quiet_repeats(window_s: float = 60.0) -> RepeatFilter:
    """Install one ``RepeatFilter`` on the loggers that repeat under descriptor exhaustion."""
    repeat = RepeatFilter(window_s)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).addFilter(repeat)
    return repeat


# the errors asyncio's accept loop pauses on (not ``app.SHORT_OF``, which is about a request's
# own file I/O and holds ENOSPC)
_SHORT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
Handler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object]


def calm_accept_errors(loop: asyncio.AbstractEventLoop) -> Handler | None:
    """Make the loop report running out of descriptors at ``accept()`` as one warning line, not
    a traceback: a flood can open sockets faster than the gate closes the excess, asyncio stops
    accepting for a second and resumes, and nothing failed that a reader must debug. Every other
    error goes where it went before. Returns the handler it replaced (``restore_handler``)."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _SHORT_OF and "accept" in context["message"]:
            logging.getLogger("asyncio").warning(
                "%s: %s; accepting again shortly", context["message"], exc.strerror
            )
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    return previous


def restore_handler(loop: asyncio.AbstractEventLoop, previous: Handler | None) -> None:
    loop.set_exception_handler(previous)


def unquiet(repeat: RepeatFilter) -> None:
    for name in NOISY_LOGGERS:
        logging.getLogger(name).removeFilter(repeat)
