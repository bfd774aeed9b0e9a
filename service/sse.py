"""Server-Sent Events from a run's ``events.jsonl``: works for any run, live or finished.

The file is the source of truth, not the running actors, so a stream can start late, be resumed
with ``Last-Event-ID`` (each message's ``id:`` is the event's ``seq``), or follow a run started by
another process. A closed connection only ends this stream; the run never notices.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from deepresearch.errors import InputError
from deepresearch.schemas import Event
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

HEARTBEAT = b": keep-alive\n\n"


def format_event(event: Event) -> bytes:
    """One SSE message: ``id`` is the seq, ``data`` the event as one JSON line."""
    return f"id: {event.seq}\ndata: {event.model_dump_json()}\n\n".encode()


def format_end(status: str) -> bytes:
    """The last message of a stream: the run's status (no id, so a resume point is unchanged)."""
    return f"event: end\ndata: {json.dumps({'status': status})}\n\n".encode()


def parse_last_event_id(header: str | None, query: str | None = None) -> int:
    """The seq to resume after: the ``Last-Event-ID`` header, else ``?last_event_id=``, else 0.

    Only plain ASCII decimals of sane length (InputError otherwise): ``"²".isdigit()`` is true
    but ``int("²")`` fails, and a 5,000-digit number is nobody's sequence number.
    """
    for value in (header, query):
        if value is None or not value.strip():
            continue
        text = value.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 18):
            raise InputError("Last-Event-ID / last_event_id must be a non-negative integer")
        return int(text)
    return 0


@dataclass
class _Cursor:
    after: int
    offset: int = 0  # bytes of events.jsonl already read (whole lines only)


def _poll(run_dir: RunDir, cursor: _Cursor) -> list[Event]:
    """New events after the cursor: only the lines appended since the last poll are read and
    parsed (re-reading the whole file on every poll made a long run's stream quadratic)."""
    try:
        with open(run_dir.path("events.jsonl"), "rb") as fh:
            fh.seek(cursor.offset)
            data = fh.read()
    except OSError:
        return []
    complete_lines = data[
        : data.rfind(b"\n") + 1
    ]  # a line still being written waits for the next poll
    cursor.offset += len(complete_lines)
    fresh = []
    for line in complete_lines.splitlines():
        try:
            event = Event.model_validate_json(line)
        except ValueError:  # a torn line left by a crash, cut when the log reopens: not an event
            continue
        if event.seq > cursor.after:
            fresh.append(event)
    if fresh:
        cursor.after = fresh[-1].seq
    return fresh


def _settled_status(run_dir: RunDir, is_active: Callable[[], bool]) -> str | None:
    """The final status once the run is over (summary written, or nobody is running it)."""
    summary = runs.read_summary(run_dir)
    if summary is not None and summary.status in runs.ENDED:
        return summary.status
    if is_active():
        return None
    status = runs.status_of(run_dir)
    return None if status == "running" else status


def _look(
    run_dir: RunDir, cursor: _Cursor, is_active: Callable[[], bool]
) -> tuple[str | None, list[Event]]:
    """Decide "over" before reading, so nothing appended before that is missed."""
    return _settled_status(run_dir, is_active), _poll(run_dir, cursor)


async def stream(
    request: web.Request,
    run_dir: RunDir,
    after: int,
    is_active: Callable[[], bool],
    heartbeat_s: float = 10.0,
    poll_s: float = 0.2,
    settle_s: float = runs.SETTLE_S,
) -> web.StreamResponse:
    """Send events after ``after`` as they are appended, heartbeats between, ``end`` when
    ``runs.stream_ended`` says so."""
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",  # a reverse proxy must not buffer the stream
        }
    )
    await response.prepare(request)
    loop = asyncio.get_running_loop()
    cursor = _Cursor(after)
    last_write = loop.time()
    over_at: float | None = None  # when the stream first saw the run over
    finished: str | None = None
    try:
        while True:
            status, fresh = await asyncio.to_thread(_look, run_dir, cursor, is_active)
            for event in fresh:
                await response.write(format_event(event))
                last_write = loop.time()
                if event.type == "run_finished" and finished is None:
                    finished = str(event.payload.get("status", "completed"))
            if over_at is None and (status is not None or finished is not None):
                over_at = loop.time()
            over_s = 0.0 if over_at is None else loop.time() - over_at
            ended = None if fresh else runs.stream_ended(status, finished, over_s, settle_s)
            if ended is not None:
                await response.write(format_end(ended))
                break
            if loop.time() - last_write >= heartbeat_s:
                await response.write(HEARTBEAT)
                last_write = loop.time()
            await asyncio.sleep(poll_s)
    except (ConnectionResetError, ConnectionError):
        pass  # the client went away; the run goes on
    return response
