"""The service's run manager: a capped set of runs, each ``driver.execute`` in its own thread.

Ray is joined once by the service; every run's ``execute`` then finds it initialized and reuses
it, and every run is served by the same crew (``actors/crew.py``): a run adds only its own state. A run belongs to the manager, not to any HTTP request, so a client that disconnects (or never
watches) changes nothing; only ``cancel`` (``DELETE /runs/{id}``) or service shutdown stops a run,
through ``should_stop``: the driver's Ctrl-C path, so the checkpoint stays and the run is resumable.

A slot is the run's entry in ``_active``: taken in ``start`` before anything can wait, and given
back by a done-callback of the run's own task, so it is freed on every ending (success, failure,
cancel, crash, deadline) and ``GET /runs`` counts exactly the slots held. Blocking work (prepare,
execute) runs in a thread of its own under a deadline: a run stuck in a read that never returns
is failed and its slot freed, and its thread cannot starve the threads other requests use.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from deepresearch.actors import crew
from deepresearch.config.settings import Settings
from deepresearch.errors import RunInterrupted
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.run import driver
from deepresearch.service.outcome import in_thread, record_failure, service_settings
from deepresearch.service.submission import RunCreate, settings_for
from deepresearch.storage.run_dir import new_run_id

log = logging.getLogger(__name__)
T = TypeVar("T")


async def within(future: asyncio.Future[T], limit_s: float) -> asyncio.Future[T] | None:
    """``future`` once it is done, or None (and the future cancelled) after ``limit_s`` seconds:
    a deadline that cannot be confused with a TimeoutError the work itself raised."""
    done, _ = await asyncio.wait({future}, timeout=limit_s)
    if not done:
        future.cancel()
        return None
    return future


@dataclass
class ActiveRun:
    run_id: str
    stop: threading.Event
    task: asyncio.Task[None]


class RunManager:
    """At most ``max_runs`` runs at once; ``start`` returns None when that many are going."""

    def __init__(self, settings: Settings, max_runs: int, llm: LLMProvider | None = None) -> None:
        self.settings = service_settings(settings)
        self.max_runs = max_runs
        self._llm = llm
        self._active: dict[str, ActiveRun] = {}
        self.failures: dict[str, str] = {}  # failed runs whose summary could not be written

    @property
    def state_dir(self) -> Path:
        return self.settings.resolved_state_dir()

    def is_active(self, run_id: str) -> bool:
        return run_id in self._active

    def running(self) -> int:
        return len(self._active)

    async def start(self, body: RunCreate) -> str | None:
        """Check and prepare the run (InputError/ConfigError/StorageError on bad input, TimeoutError
        when preparing passes its deadline, QueryGated when the intent gate answers instead), then
        start it; None when every slot is taken."""
        settings = settings_for(self.settings, body)  # before taking a slot: nothing to undo
        if len(self._active) >= self.max_runs:
            return None
        run_id = new_run_id(time.time(), secrets.token_bytes(3))
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        stop = threading.Event()
        task = asyncio.create_task(self._life(run_id, body, settings, stop, ready), name=run_id)
        self._active[run_id] = ActiveRun(run_id, stop, task)  # the slot, taken with no await
        task.add_done_callback(functools.partial(self._release, run_id, ready))
        return await asyncio.shield(ready)

    def _release(self, run_id: str, ready: asyncio.Future[str], task: asyncio.Task[None]) -> None:
        self._active.pop(run_id, None)
        if not ready.done():  # the task ended (or was cancelled) before it said anything
            ready.set_exception(RuntimeError(f"run {run_id} ended before it started"))

    async def _life(
        self,
        run_id: str,
        body: RunCreate,
        settings: Settings,
        stop: threading.Event,
        ready: asyncio.Future[str],
    ) -> None:
        started = time.monotonic()
        timeout = self.settings.service.prepare_timeout_s
        mode = body.mode or settings.run.mode
        # The intent gate runs in prepare: a gated query raises QueryGated, no run starts.
        work = functools.partial(
            driver.prepare, body.query, mode, settings, run_id=run_id, llm=self._llm
        )
        preparing = await within(in_thread(work, f"prepare-{run_id}"), timeout)
        if preparing is None:
            stop.set()
            ready.set_exception(TimeoutError(f"preparing the run took longer than {timeout:g} s"))
            return
        try:
            prep = preparing.result()
        except Exception as exc:
            ready.set_exception(exc)
            return
        ready.set_result(run_id)
        await self._execute(prep, stop, started)

    async def _execute(self, prep: driver.Prepared, stop: threading.Event, started: float) -> None:
        run_id = prep.request.run_id
        deadline = prep.settings.run.max_time_s + self.settings.service.deadline_grace_s
        work = functools.partial(
            driver.execute, prep, llm=self._llm, should_stop=stop.is_set, crew=crew
        )
        running = await within(in_thread(work, f"run-{run_id}"), deadline)
        if running is None:
            stop.set()  # if it ever wakes up it stops; its slot is free already
            reason = f"the run was still going {deadline:g} s after it started and was abandoned"
            await self._fail(prep, reason, started)
            return
        try:
            running.result()
        except RunInterrupted:
            log.info("run %s interrupted; checkpoint kept", run_id)
        except Exception as exc:  # the run failed: say so honestly instead of looking "stopped"
            await self._fail(prep, str(exc) or type(exc).__name__, started)

    async def _fail(self, prep: driver.Prepared, reason: str, started: float) -> None:
        log.warning("run %s failed: %s", prep.request.run_id, reason)
        if not await record_failure(prep, reason, time.monotonic() - started):
            self.failures[prep.request.run_id] = reason  # shown by GET /runs/{id} instead

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
