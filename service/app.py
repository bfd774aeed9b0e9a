"""The HTTP API and web page: routes, bearer-token auth, and JSON errors a client can act on.

``POST /runs`` · ``GET /runs`` · ``GET /runs/{id}`` · ``GET /runs/{id}/events`` (SSE) ·
``GET /runs/{id}/report`` (the file as saved) · ``GET /runs/{id}/report/rendered`` (JSON:
the Markdown and its sanitized HTML, what the page shows) · ``DELETE /runs/{id}`` · ``GET /``.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import json
import logging
from collections.abc import Iterable
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.typedefs import Handler
from pydantic import SecretStr, ValidationError

from deepresearch.config.settings import Settings
from deepresearch.errors import ConfigError, CorpusRefused, InputError, QueryGated, StorageError
from deepresearch.policies.lifecycle.progress import ProgressState, advance
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.service import guard, sse
from deepresearch.service.runner import RunManager
from deepresearch.service.submission import RunCreate, describe_errors, gated_body
from deepresearch.storage import runs

log = logging.getLogger(__name__)
MANAGER = web.AppKey("manager", RunManager)
SETTINGS = web.AppKey("settings", Settings)
PUBLIC = ("/", "/favicon.ico")
REPORT_TYPES = {".md": "text/markdown", ".json": "application/json", ".html": "text/html"}
MAX_RUN_ID = 64


def _error(code: int, message: str, **extra: Any) -> web.Response:
    return web.json_response({"error": message, **extra}, status=code)


def _auth_middleware(token: SecretStr) -> Any:
    expected = token.get_secret_value().encode()

    @web.middleware
    async def auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path in PUBLIC or request.path.startswith("/static/"):
            return await handler(request)  # the page and its script hold no data
        header = request.headers.get("Authorization", "")
        supplied = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not supplied and request.path.endswith("/events"):
            supplied = request.query.get("access_token", "")  # EventSource cannot set headers
        if not supplied or not hmac.compare_digest(supplied.encode(), expected):
            response = _error(401, "missing or wrong bearer token")
            response.headers["WWW-Authenticate"] = 'Bearer realm="deep-research"'
            return response
        return await handler(request)

    return auth


SHORT_OF = (errno.EMFILE, errno.ENFILE, errno.ENOSPC, errno.ENOMEM)


def _unavailable(exc: OSError) -> web.Response:
    response = _error(503, f"the service is short of resources ({exc.strerror}); try again later")
    response.headers["Retry-After"] = "10"
    return response


def _http_error_message(exc: web.HTTPException, request: web.Request) -> str:
    """What aiohttp's own 404, 405 and 413 say, in words a client can act on."""
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods))
        return f"method {request.method} is not allowed on {request.path} (allowed: {allowed})"
    if isinstance(exc, web.HTTPNotFound):
        return f"no such resource: {request.path}"
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return f"the body is larger than {request.client_max_size} bytes"
    return exc.reason


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error the API answers is JSON, as README promises: aiohttp's router (404, 405) and
    body limit (413) raise plain-text errors, and an unexpected exception would be a text 500."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400 or exc.content_type == "application/json":
            raise
        response = _error(exc.status, _http_error_message(exc, request))
        for name in ("Allow", "Retry-After", "WWW-Authenticate"):
            if name in exc.headers:
                response.headers[name] = exc.headers[name]
        return response
    except Exception as exc:  # a bug: the client gets JSON, the log gets the traceback
        if request.writer.output_size > 0:
            raise  # a stream already under way cannot become an error reply
        log.exception("%s %s failed", request.method, request.path)
        return _error(500, f"internal error ({type(exc).__name__})")


@web.middleware
async def _short_of_resources(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Out of descriptors (or space, or memory) is a 503 the client can retry, not a 500."""
    try:
        return await handler(request)
    except OSError as exc:
        if exc.errno not in SHORT_OF:
            raise
        log.warning("%s %s: %s", request.method, request.path, exc)
        return _unavailable(exc)


class _AccessLogger(AbstractAccessLogger):
    """Method, path and status only: a query string may carry an access token."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s %.3fs", request.method, request.path, response.status, time)


def _run_dir(request: web.Request) -> Any:
    manager = request.app[MANAGER]
    run_id = request.match_info["run_id"]
    try:
        if len(run_id) > MAX_RUN_ID:
            raise InputError("not a run id")  # a name too long for the filesystem: not a 500
        return runs.open_run(manager.state_dir, run_id)
    except (InputError, OSError):  # the message never names the server's state directory
        raise web.HTTPNotFound(
            text=json.dumps({"error": f"no run {run_id[:MAX_RUN_ID]}"}),
            content_type="application/json",
        ) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


async def read_json(request: web.Request) -> Any:
    """The body as JSON; ValueError for bad JSON (NaN and Infinity included, nesting too deep),
    TimeoutError when it trickles in slower than ``service.request_timeout_s``."""
    timeout = request.app[SETTINGS].service.request_timeout_s
    text = await asyncio.wait_for(request.text(), timeout)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def submission_error(exc: Exception) -> web.Response:
    """The reply to a run that could not be started: the client's fault (4xx) or ours (5xx)."""
    if isinstance(exc, CorpusRefused):
        return _error(403, str(exc))
    if isinstance(exc, InputError | ConfigError):
        return _error(422, str(exc))
    if isinstance(exc, TimeoutError):
        return _error(504, str(exc) or "preparing the run took too long")
    if isinstance(exc, OSError) and exc.errno in SHORT_OF:
        return _unavailable(exc)
    if isinstance(exc, StorageError):
        return _error(500, str(exc))
    log.error("starting a run failed: %s: %s", type(exc).__name__, exc)
    return _error(500, f"the run could not be started ({type(exc).__name__}: {exc})")


async def create_run(request: web.Request) -> web.Response:
    manager = request.app[MANAGER]
    try:
        raw = await read_json(request)
    except TimeoutError:
        return _error(408, "the body took too long to arrive")
    except ValueError as exc:
        return _error(422, f"the body is not valid JSON ({exc})")
    try:
        body = RunCreate.model_validate(raw)
    except ValidationError as exc:
        return _error(422, "invalid request", details=describe_errors(exc))
    try:
        run_id = await manager.start(body)
    except QueryGated as gated:  # the intent gate answered: no run, the reply instead
        return web.json_response(gated_body(gated, body.query), status=200)
    except Exception as exc:
        return submission_error(exc)
    if run_id is None:
        retry = request.app[SETTINGS].service.retry_after_s
        response = _error(429, f"{manager.max_runs} runs are already going; try again later")
        response.headers["Retry-After"] = str(retry)
        return response
    return web.json_response({"run_id": run_id, "status": "running"}, status=202)


async def list_runs(request: web.Request) -> web.Response:
    manager = request.app[MANAGER]
    rows = []
    for row in runs.list_runs(manager.state_dir):
        data = asdict(row)
        if manager.is_active(row.run_id) and data["status"] not in runs.ENDED:
            data["status"] = "running"
        elif row.run_id in manager.failures:
            data["status"] = "failed"
        rows.append(data)
    return web.json_response(
        {"runs": rows, "active": manager.running(), "max_runs": manager.max_runs}
    )


def describe(run_dir: Any, active: bool, failure: str | None = None) -> dict[str, Any]:
    """Status, usage and live progress of one run, from its files (blocking: call in a thread);
    ``failure`` is the reason of a failed run whose summary could not be written."""
    record = runs.read_record(run_dir)
    summary = runs.read_summary(run_dir)
    events = run_dir.read_events()
    progress = ProgressState()
    for event in events:
        progress = advance(progress, event)
    status: str
    if summary is not None:
        status = summary.status
    elif failure is not None:
        status = "failed"
    else:
        status = "running" if active else runs.status_of(run_dir)
    return {
        "run_id": record.request.run_id,
        "query": record.request.query,
        "mode": record.request.mode,
        "created_at": record.request.created_at,
        "status": status,
        "events": len(events),
        "progress": {
            "phase": progress.phase,
            "percent": progress.percent,
            "round": progress.round,
            "researchers_active": progress.researchers_active,
            "researchers_done": progress.researchers_done,
            "sources": progress.sources,
            "tokens": progress.tokens,
            "cost_usd": round(progress.cost_usd, 6),
            "waiting": progress.waiting,
        },
        "usage": summary.usage.model_dump() if summary else None,
        "summary": summary.model_dump(mode="json") if summary else None,
        **({"reason": failure} if failure is not None and summary is None else {}),
    }


async def get_run(request: web.Request) -> web.Response:
    run_dir = _run_dir(request)
    manager = request.app[MANAGER]
    run_id = request.match_info["run_id"]
    active = manager.is_active(run_id)
    try:
        data = await asyncio.to_thread(describe, run_dir, active, manager.failures.get(run_id))
    except StorageError as exc:
        return _error(500, str(exc))
    return web.json_response(data)


async def run_events(request: web.Request) -> web.StreamResponse:
    run_dir = _run_dir(request)
    manager = request.app[MANAGER]
    run_id = request.match_info["run_id"]
    try:
        after = sse.parse_last_event_id(
            request.headers.get("Last-Event-ID"), request.query.get("last_event_id")
        )
    except InputError as exc:
        return _error(422, str(exc))
    return await sse.stream(
        request,
        run_dir,
        after,
        lambda: manager.is_active(run_id),
        heartbeat_s=request.app[SETTINGS].service.heartbeat_s,
    )


async def _report_text(request: web.Request) -> tuple[Path, str] | web.Response:
    """The finished run's report file and its text, or the error reply saying why there is none."""
    run_dir = _run_dir(request)
    summary = runs.read_summary(run_dir)
    if summary is None or not summary.report_path:
        status = summary.status if summary else "running"
        return _error(404, "this run has no report (yet)", status=status)
    path = Path(summary.report_path)
    try:
        return path, await asyncio.to_thread(path.read_text, "utf-8")
    except OSError as exc:
        return _error(410, f"the report file is gone ({exc.strerror})")


async def get_report(request: web.Request) -> web.Response:
    found = await _report_text(request)
    if isinstance(found, web.Response):
        return found
    path, text = found
    kind = REPORT_TYPES.get(path.suffix.lower(), "text/markdown")
    response = web.Response(text=text, content_type=kind, charset="utf-8")
    if kind == "text/html":  # the page is self-contained: it may load and run nothing
        response.headers["Content-Security-Policy"] = (
            "default-src 'none'; style-src 'unsafe-inline'"
        )
    return response


def rendered(run_id: str, path: Path, text: str) -> dict[str, Any]:
    """The report as the web page shows it: sanitized HTML (``markdown_html``) beside the Markdown.
    A report saved as JSON or HTML has no Markdown to render; the HTML then says where it is."""
    from deepresearch.reports.markdown_html import to_html

    kind = path.suffix.lower().lstrip(".")
    if kind not in ("json", "html"):  # as ``GET /runs/{id}/report``: anything else is Markdown
        return {"run_id": run_id, "format": "md", "markdown": text, "html": to_html(text)}
    note = f"This run's report was saved as {kind.upper()}: `GET /runs/{run_id}/report` returns it."
    return {"run_id": run_id, "format": kind, "markdown": None, "html": to_html(note)}


async def get_rendered_report(request: web.Request) -> web.Response:
    found = await _report_text(request)
    if isinstance(found, web.Response):
        return found
    path, text = found
    run_id = request.match_info["run_id"]
    return web.json_response(await asyncio.to_thread(rendered, run_id, path, text))


async def cancel_run(request: web.Request) -> web.Response:
    run_dir = _run_dir(request)
    manager = request.app[MANAGER]
    run_id = request.match_info["run_id"]
    if not await manager.cancel(run_id):
        summary = runs.read_summary(run_dir)
        status = summary.status if summary else runs.status_of(run_dir)
        return _error(409, "this run is not running in this service", status=status)
    summary = runs.read_summary(run_dir)
    return web.json_response(
        {"run_id": run_id, "status": summary.status if summary else "stopping"}
    )


def _static(name: str) -> bytes:
    return resources.files("deepresearch.service").joinpath("static", name).read_bytes()


async def index(request: web.Request) -> web.Response:
    return web.Response(body=_static("index.html"), content_type="text/html", charset="utf-8")


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    types = {".js": "text/javascript", ".css": "text/css"}
    kind = types.get(Path(name).suffix)
    if kind is None or "/" in name or "\x00" in name or name.startswith("."):
        raise web.HTTPNotFound()
    try:
        body = _static(name)
    except (FileNotFoundError, IsADirectoryError):
        raise web.HTTPNotFound() from None
    return web.Response(body=body, content_type=kind, charset="utf-8")


def _middlewares(settings: Settings, token: SecretStr | None, hosts: Iterable[str]) -> list[Any]:
    """Outermost first: errors as JSON, 503 when short of resources, Host, cross-origin writes and content
    type, then the token."""
    names = guard.allowed_names(hosts, settings.service.allowed_hosts)
    chain = [_json_errors, _short_of_resources, guard.host_middleware(names), guard.check_writes]
    if token is not None:
        chain.append(_auth_middleware(token))
    return chain


def create_app(
    settings: Settings,
    token: SecretStr | None = None,
    llm: LLMProvider | None = None,
    *,
    hosts: Iterable[str] = (),
) -> web.Application:
    """The service; the caller has joined Ray (``runtime.connect``) before serving it. ``hosts``
    are the names it is bound to (Host headers answered besides loopback names)."""
    app = web.Application(middlewares=_middlewares(settings, token, hosts))
    app.on_response_prepare.append(guard.add_security_headers)
    app[SETTINGS] = settings
    app[MANAGER] = RunManager(settings, settings.service.max_runs, llm)

    async def stop_runs(app: web.Application) -> None:
        await app[MANAGER].shutdown()

    app.on_shutdown.append(stop_runs)
    app.add_routes(
        [
            web.get("/", index),
            web.get("/static/{name}", static),
            web.post("/runs", create_run),
            web.get("/runs", list_runs),
            web.get("/runs/{run_id}", get_run),
            web.get("/runs/{run_id}/events", run_events),
            web.get("/runs/{run_id}/report", get_report),
            web.get("/runs/{run_id}/report/rendered", get_rendered_report),
            web.delete("/runs/{run_id}", cancel_run),
        ]
    )
    return app


ACCESS_LOGGER = _AccessLogger
