"""Where a service run's work happens and where its outcome lands, even when the machine is short.

Each run's blocking work gets a thread of its own, so a run stuck in a read that never returns
holds one thread, not a pool that other runs need. Service reports go under the state directory
(never the service's working directory) in a 0700 folder. A failed run's summary is written with
retries: when the process is out of file descriptors the first attempts fail, and the run must
still end ``failed`` with its reason rather than look ``stopped``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from deepresearch.config.settings import Settings
from deepresearch.errors import StorageError
from deepresearch.run import driver
from deepresearch.schemas import RunSummary
from deepresearch.storage import runs
from deepresearch.storage.private_files import make_private_dir

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0)


def in_thread(work: Callable[[], T], name: str) -> asyncio.Future[T]:
    """``work()`` in a new daemon thread; the future settles on the calling loop. Cancelling the
    future abandons the thread (Python cannot kill it) but frees whoever waits."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def set_outcome(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def body() -> None:
        try:
            result = work()
        except BaseException as exc:
            outcome: tuple[T | None, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
            loop.call_soon_threadsafe(set_outcome, *outcome)

    threading.Thread(target=body, name=name, daemon=True).start()
    return future


def service_settings(settings: Settings) -> Settings:
    """``settings`` with the report folder every service run uses: ``service.output_dir``, else
    ``run.output_dir``, else ``<state_dir>/reports`` made private (0700)."""
    chosen = settings.service.output_dir or settings.run.output_dir
    if chosen is None:
        chosen = settings.resolved_state_dir() / "reports"
        try:
            make_private_dir(chosen)  # and the state folder, if missing: 0700, whatever the umask
        except OSError as exc:
            raise StorageError(
                str(chosen), f"cannot make the report folder ({exc.strerror})"
            ) from None
    run = settings.run.model_copy(update={"output_dir": chosen})
    return settings.model_copy(update={"run": run})


def _write_failed(prep: driver.Prepared, reason: str, duration_s: float) -> None:
    if runs.read_summary(prep.run_dir) is not None:
        return
    summary = RunSummary(
        run_id=prep.request.run_id,
        status="failed",
        mode=prep.request.mode,
        query=prep.request.query,
        duration_s=round(duration_s, 3),
        reason=reason,
    )
    prep.run_dir.write_text(runs.SUMMARY, summary.model_dump_json(indent=2))


async def record_failure(
    prep: driver.Prepared,
    reason: str,
    duration_s: float,
    delays: tuple[float, ...] | None = None,
) -> bool:
    """Write the run's ``failed`` summary, retrying while writes fail; False if it never could."""
    for delay in (*(RETRY_DELAYS_S if delays is None else delays), None):
        try:
            await asyncio.to_thread(_write_failed, prep, reason, duration_s)
            return True
        except (OSError, StorageError, RuntimeError) as exc:
            if delay is None:
                log.error("run %s: cannot write its failed summary (%s)", prep.request.run_id, exc)
                return False
            await asyncio.sleep(delay)
    return False
