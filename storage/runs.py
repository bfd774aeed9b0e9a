"""Past and running runs on disk: their records, listing, pruning, and following one's events.

Each run directory holds ``run.json`` (the request, the validated settings and the report
directory, written before any work; no secrets: keys are not part of the settings tree),
``events.jsonl``, checkpoints and, once it ends, ``summary.json``. Everything here reads those files
only, so ``runs`` and ``attach`` work from a second terminal without joining Ray.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deepresearch.config.settings import Settings
from deepresearch.errors import InputError, RunInterrupted, StorageError
from deepresearch.schemas import Event, Request, RunSummary
from deepresearch.storage.run_dir import RunDir

RECORD = "run.json"
SUMMARY = "summary.json"


@dataclass(frozen=True)
class RunRecord:
    request: Request
    settings: Settings
    output_dir: Path


@dataclass(frozen=True)
class RunRow:
    run_id: str
    started: float
    mode: str
    status: str
    query: str
    report_path: str | None


def write_record(run_dir: RunDir, request: Request, settings: Settings, output_dir: Path) -> None:
    data = {
        "request": request.model_dump(mode="json"),
        "settings": settings.model_dump(mode="json"),
        "output_dir": str(output_dir),
    }
    run_dir.write_text(RECORD, json.dumps(data, indent=2, sort_keys=True))


def read_record(run_dir: RunDir) -> RunRecord:
    path = run_dir.path(RECORD)
    try:
        data = json.loads(path.read_text("utf-8"))
        return RunRecord(
            request=Request.model_validate(data["request"]),
            settings=Settings.model_validate(data["settings"]),
            output_dir=Path(data["output_dir"]),
        )
    except FileNotFoundError:
        raise StorageError(str(path), "no run record: not a run directory") from None
    except (OSError, ValueError, KeyError, ValidationError) as exc:
        raise StorageError(str(path), f"unreadable run record ({type(exc).__name__})") from None


def read_summary(run_dir: RunDir) -> RunSummary | None:
    path = run_dir.path(SUMMARY)
    try:
        return RunSummary.model_validate_json(path.read_text("utf-8"))
    except (OSError, ValidationError):
        return None


def record_ending(run_dir: RunDir, request: Request, duration_s: float, exc: BaseException) -> None:
    """A run that ended without a summary (Ray failed to start, a model failed, Ctrl-C during
    start-up) gets one, so ``runs list`` says ``failed``/``interrupted``, never ``stopped``."""
    if read_summary(run_dir) is not None:
        return
    interrupted = isinstance(exc, KeyboardInterrupt | RunInterrupted)
    reason = (
        "interrupted; continue with: deep-research resume " + request.run_id
        if interrupted
        else (str(exc) or type(exc).__name__)
    )
    summary = RunSummary(
        run_id=request.run_id,
        status="interrupted" if interrupted else "failed",
        mode=request.mode,
        query=request.query,
        duration_s=round(duration_s, 3),
        reason=" ".join(reason.split())[:500],
    )
    with contextlib.suppress(StorageError):  # the original error matters more than this one
        run_dir.write_text(SUMMARY, summary.model_dump_json(indent=2))


def _run_dirs(state_dir: Path) -> Iterator[RunDir]:
    root = state_dir / "runs"
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child / RECORD).exists():
            yield RunDir(child)


def status_of(run_dir: RunDir) -> str:
    summary = read_summary(run_dir)
    if summary is not None:
        return summary.status
    return "running" if _recently_active(run_dir) else "stopped"


def _recently_active(run_dir: RunDir, window_s: float = 120.0) -> bool:
    events = run_dir.path("events.jsonl")
    try:
        return time.time() - events.stat().st_mtime < window_s
    except OSError:
        return False


def list_runs(state_dir: Path) -> list[RunRow]:
    rows = []
    for run_dir in _run_dirs(state_dir):
        try:
            record = read_record(run_dir)
        except StorageError:
            continue
        summary = read_summary(run_dir)
        rows.append(
            RunRow(
                run_id=record.request.run_id,
                started=record.request.created_at,
                mode=record.request.mode,
                status=status_of(run_dir),
                query=record.request.query,
                report_path=summary.report_path if summary else None,
            )
        )
    return rows


def check_run_id(run_id: str) -> str:
    """``run_id`` when it can name a folder under ``runs/`` (not empty, no path, no dot names)."""
    if not run_id.strip() or "/" in run_id or "\x00" in run_id or run_id in (".", ".."):
        raise InputError(f"not a run id: {run_id[:64]!r}")
    return run_id


def open_run(state_dir: Path, run_id: str) -> RunDir:
    check_run_id(run_id)
    try:
        return RunDir.existing(state_dir, run_id)
    except StorageError:
        shown = run_id if len(run_id) <= 64 else run_id[:64] + "..."
        raise InputError(f"no run {shown} under {state_dir}") from None


def show(state_dir: Path, run_id: str, tail: int = 10) -> dict[str, Any]:
    run_dir = open_run(state_dir, run_id)
    record = read_record(run_dir)
    summary = read_summary(run_dir)
    events = run_dir.read_events()
    return {
        "run_id": run_id,
        "query": record.request.query,
        "mode": record.request.mode,
        "status": status_of(run_dir),
        "summary": summary.model_dump(mode="json") if summary else None,
        "events": len(events),
        "tail": [e.model_dump(mode="json") for e in events[max(0, len(events) - tail) :]],
    }


AGE_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_AGE = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")


def parse_age(text: str) -> float:
    """``90s``, ``90min``, ``12h``, ``30d``, ``2w`` → seconds. A bare ``m`` is refused: it has
    been read as minutes where months were meant (and the reverse), and pruning takes no guesses."""
    match = _AGE.fullmatch(text.strip().lower())
    if match is None or match.group(2) not in AGE_UNITS:
        raise InputError(
            f"not an age: {text!r} (a number and one of s, min, h, d, w: e.g. 90min, 12h, 30d)"
        )
    return float(match.group(1)) * AGE_UNITS[match.group(2)]


def prunable(state_dir: Path, older_than_s: float, now: float) -> list[RunRow]:
    """Finished runs started more than ``older_than_s`` ago; running ones are never included."""
    return [
        row
        for row in list_runs(state_dir)
        if row.status != "running" and now - row.started >= older_than_s
    ]


def remove(state_dir: Path, run_ids: list[str]) -> None:
    for run_id in run_ids:
        shutil.rmtree(state_dir / "runs" / run_id)


def prune(state_dir: Path, older_than_s: float, now: float) -> list[str]:
    """Delete finished runs started more than ``older_than_s`` ago; running ones are kept."""
    removed = [row.run_id for row in prunable(state_dir, older_than_s, now)]
    remove(state_dir, removed)
    return removed


ENDED = ("completed", "no_answer", "interrupted", "failed")  # a summary's final statuses
REPORTED = ("completed", "no_answer")  # endings the driver follows with run_finished
SETTLE_S = 15.0  # how long a stream waits for the second half of a reported ending


def stream_ended(
    status: str | None, finished: str | None, over_s: float, settle_s: float = SETTLE_S
) -> str | None:
    """The one rule for the end of a run's event stream (the service's SSE, ``attach``): the
    status the stream ends with, or None while it goes on. A pure function.

    ``status`` is the run's ending as last read (None while it may still be going); ``finished``
    what ``run_finished`` said, once the stream has seen it; ``over_s`` how long since the stream
    first saw either. A reported run (completed, no answer) writes its summary, then says
    ``run_finished`` (the log says completed only once the report is on disk): the stream waits
    for both, or ``settle_s`` for the one missing. Any other ending (failed, interrupted,
    stopped) has no ``run_finished`` to wait for: the stream ends at once."""
    if status is not None and (finished is not None or status not in REPORTED):
        return status
    ending = status if status is not None else finished
    if ending is not None and over_s > settle_s:
        return ending
    return None


def follow(
    state_dir: Path,
    run_id: str,
    on_event: Callable[[Event], None],
    sleep: Callable[[float], None] = time.sleep,
    idle_timeout_s: float = 600.0,
) -> str:
    """Print a run's events as they are appended until it ends (``stream_ended``); returns its
    final status. A run with no summary that logs nothing for ``idle_timeout_s`` (its driver
    gone without a word) ends the stream with ``status_of``."""
    run_dir = open_run(state_dir, run_id)
    seen, idle, over = 0, 0.0, 0.0
    finished: str | None = None
    while True:
        summary = read_summary(run_dir)  # before reading: nothing appended before it is missed
        events = run_dir.read_events()
        for event in events[seen:]:
            on_event(event)
            if event.type == "run_finished":
                finished = str(event.payload.get("status", "completed"))
        fresh = len(events) > seen
        seen = len(events)
        status = summary.status if summary is not None and summary.status in ENDED else None
        if not fresh:
            ended = stream_ended(status, finished, over)
            if ended is not None:
                return ended
        if idle >= idle_timeout_s:
            return status_of(run_dir)
        sleep(0.5)
        idle = 0.0 if fresh else idle + 0.5
        over += 0.5 if status is not None or finished is not None else 0.0
