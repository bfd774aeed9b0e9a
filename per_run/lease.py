"""A run's lease: how a run host learns that the driver of a run died, from Ray itself.

The driver calls the host's ``hold`` (pending until the run closes) and hands the call's result
back to the host inside a list, so the host borrows an object its driver owns. When the owner
dies (killed, its Ray job stopped, its node lost), Ray fails every wait on that object with
``OwnerDiedError`` within seconds: no heartbeat to tune, no process of our own to watch. A
service or MCP server owns its runs' leases in its own long-lived process, so its runs are held
for as long as it lives. What the host does then (stop the run, keep its checkpoint) is
``run_host.RunHost._driver_lost``; the ending it records is ``abandoned``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from deepresearch.errors import RunInterrupted
from deepresearch.schemas import Request
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

log = logging.getLogger(__name__)


async def watch_lease(lease: Any, on_lost: Callable[[], Awaitable[None]]) -> None:
    """Wait on the driver's ``hold`` result: it arrives when the run closes; if its owner died
    first, ``on_lost`` runs."""
    import ray.exceptions

    try:
        await lease
    except ray.exceptions.OwnerDiedError:
        await on_lost()
    except Exception as exc:  # this actor is stopping, or the run closed meanwhile
        log.debug("lease wait ended: %s", type(exc).__name__)


async def abandoned(run_dir: str, request: Request, duration_s: float) -> None:
    """Record the ending the dead driver could not: interrupted, resumable (unless the driver
    already wrote the run's summary before it died)."""
    await asyncio.to_thread(
        runs.record_ending,
        RunDir(Path(run_dir)),
        request,
        duration_s,
        RunInterrupted(request.run_id),
    )


def written_ending(run_dir: str) -> dict[str, JsonValue] | None:
    """``run_finished``'s payload when the dead driver had written the run's report and summary
    but died before saying so in the log (the host says it then); None otherwise."""
    summary = runs.read_summary(RunDir(Path(run_dir)))
    if summary is None or summary.status not in ("completed", "no_answer"):
        return None
    if not summary.report_path or not Path(summary.report_path).is_file():
        return None
    return {
        "status": summary.status,
        "sources": len(summary.sources),
        "limited_by": summary.limited_by,
    }
