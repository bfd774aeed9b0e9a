"""The service's run manager: a capped set of runs, each ``driver.execute`` in a worker thread.

Ray is joined once by the service; every run's ``execute`` then finds it initialized and reuses
it. A run belongs to the manager, not to any HTTP request, so a client that disconnects (or never
watches) changes nothing; only ``cancel`` (``DELETE /runs/{id}``) or service shutdown stops a run,
through ``should_stop``: the driver's Ctrl-C path, so the checkpoint stays and the run is resumable.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from deepresearch import driver, runs
from deepresearch.config.settings import Settings
from deepresearch.errors import RunInterrupted
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import RunSummary
from deepresearch.service.submission import RunCreate, settings_for

log = logging.getLogger(__name__)


@dataclass
class ActiveRun:
    run_id: str
    stop: threading.Event
    task: asyncio.Task[None]


class RunManager:
    """At most ``max_runs`` runs at once; ``start`` returns None when that many are going."""

    def __init__(self, settings: Settings, max_runs: int, llm: LLMProvider | None = None) -> None:
        self.settings = settings
        self.max_runs = max_runs
        self._llm = llm
        self._active: dict[str, ActiveRun] = {}
        self._reserved = 0  # slots held by requests still in ``prepare``
        # A run holds its thread for its whole life: its own pool, so runs never starve the
        # default executor that SSE streams and ``prepare`` use.
        self._threads = ThreadPoolExecutor(max_runs, thread_name_prefix="deep-research-run")

    @property
    def state_dir(self) -> Path:
        return self.settings.resolved_state_dir()

    def is_active(self, run_id: str) -> bool:
        return run_id in self._active

    def running(self) -> int:
        return len(self._active)

    async def start(self, body: RunCreate) -> str | None:
        """Validate and prepare the run (InputError/ConfigError on bad input, QueryGated when the
        intent gate answers instead), then start it."""
        if len(self._active) + self._reserved >= self.max_runs:
            return None
        self._reserved += 1
        try:
            settings = settings_for(self.settings, body)
            mode = body.mode or settings.run.mode
            # The intent gate runs in prepare: a gated query raises QueryGated, no run starts.
            work = functools.partial(driver.prepare, body.query, mode, settings, llm=self._llm)
            prep = await asyncio.to_thread(work)
        finally:
            self._reserved -= 1
        run_id = prep.request.run_id
        stop = threading.Event()
        task = asyncio.create_task(self._run(prep, stop), name=f"run-{run_id}")
        self._active[run_id] = ActiveRun(run_id, stop, task)
        return run_id

    async def _run(self, prep: driver.Prepared, stop: threading.Event) -> None:
        run_id = prep.request.run_id
        started = time.monotonic()
        try:
            work = functools.partial(driver.execute, prep, llm=self._llm, should_stop=stop.is_set)
            await asyncio.get_running_loop().run_in_executor(self._threads, work)
        except RunInterrupted:
            log.info("run %s interrupted; checkpoint kept", run_id)
        except Exception as exc:  # the run failed: say so honestly instead of looking "stopped"
            log.warning("run %s failed: %s", run_id, exc)
            _write_failed(prep, str(exc) or type(exc).__name__, time.monotonic() - started)
        finally:
            self._active.pop(run_id, None)

    async def cancel(self, run_id: str, wait_s: float = 60.0) -> bool:
        """Ask a run to stop and wait (up to ``wait_s``) until it has; False if it is not running."""
        active = self._active.get(run_id)
        if active is None:
            return False
        active.stop.set()
        await asyncio.wait({active.task}, timeout=wait_s)
        return True

    async def shutdown(self, wait_s: float = 60.0) -> None:
        """Stop every run the way Ctrl-C would (checkpoints kept) and wait for them."""
        tasks = []
        for active in list(self._active.values()):
            active.stop.set()
            tasks.append(active.task)
        if tasks:
            await asyncio.wait(tasks, timeout=wait_s)
        self._threads.shutdown(wait=False)


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
