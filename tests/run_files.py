"""Waiting on a run's own files, for tests and benches.

A run moves on in other processes (Ray's actors, a CLI or service subprocess), so a test that
needs it to get somewhere polls what the run wrote, with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def events_of(run_dir: Path) -> list[dict[str, Any]]:
    """The events in ``run_dir``'s ``events.jsonl`` so far (none before it exists); a line still
    being written is left for the next look."""
    path = run_dir / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(x) for x in lines if x.strip().endswith("}")]


def with_event(runs: Path, event_type: str) -> Path | None:
    """The first run folder under ``runs`` whose log holds an event of ``event_type``."""
    for log in sorted(runs.glob("*/events.jsonl")):
        if any(e["type"] == event_type for e in events_of(log.parent)):
            return log.parent
    return None


def until(check: Callable[[], T | None], what: str, timeout_s: float = 120.0) -> T:
    """``check()``'s first truthy answer, looking every 50 ms; AssertionError naming ``what``
    when ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout_s:g} s")
