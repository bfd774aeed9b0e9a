"""The run host: a crew actor that holds each run's own state, keyed by run id.

A run's coordinator, URL pool and event log are plain objects in this process, created when the
driver opens the run and dropped when it closes it, so starting a run starts no process. Runs
never share one of these objects: researchers reach a run's pool and log only through its id
(``log`` and ``pool``, limited to the methods named in ``run_context``). Closing a run also tells
every crew actor to drop what it kept for the run (its model client, its gateway and keys).

A run is held by its driver's lease (``hold``): a call pending until the run closes, whose result
the driver owns. When the driver dies (killed, its job stopped) Ray fails the host's wait on it
with ``OwnerDiedError`` within seconds, and the host stops the run as Ctrl-C would (its checkpoint
and events stay, ``summary.json`` says interrupted): ``deep-research resume`` continues it. A
service or MCP server owns its runs' leases in its own long-lived process.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from deepresearch.errors import InputError
from deepresearch.llm_messages import EvaluateTask, LLMReply
from deepresearch.per_run.lease import abandoned, watch_lease, written_ending
from deepresearch.per_run.run_context import (
    LOG_METHODS,
    POOL_METHODS,
    LedgerHook,
    RunContext,
    RunSpec,
)
from deepresearch.per_run.run_models import ModelBuilder, Notify, RunModels
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.lifecycle import crew_dispatch, partial_pace
from deepresearch.policies.lifecycle.crew_dispatch import Ticket, pick_researcher
from deepresearch.schemas import (
    Evaluation,
    PriorWork,
    ResearcherReport,
    RunResult,
    SubTask,
)

# The coordinator and the event log (the research machinery) are imported where a run is opened,
# in the host's process: a driver decoding the host's handle imports this module (Ray loads the
# actor's class), and a warm run should not pay for them (tests/unit/test_warm_imports.py).
if TYPE_CHECKING:
    from deepresearch.config.settings import Settings
    from deepresearch.per_run.coordinator import Coordinator
    from deepresearch.per_run.event_log import EventLog
    from deepresearch.per_run.log_sinks import LogDocs
    from deepresearch.policies.resilience.breaker import BreakerState
    from deepresearch.providers.llm.base import LLMProvider
    from deepresearch.providers.llm.registry import LLMKeys

log = logging.getLogger(__name__)
CLOSE_GRACE_S = 600.0  # a finished run whose driver neither closed it nor died (hung) closes then


def crashed(exc: BaseException) -> bool:
    """Whether ``exc`` says a crew actor's process died (Ray replaces it)."""
    import ray.exceptions

    return isinstance(exc, ray.exceptions.RayActorError | ray.exceptions.ActorUnavailableError)


class CrewMember:
    """One crew researcher serving one of this run's sub-tasks (a ``ResearcherPort``); which
    researcher is decided when the host's ``Load`` gives the sub-task a slot."""

    def __init__(
        self,
        researchers: Sequence[Any],
        rank: int,
        context: RunContext,
        load: Load,
        log: EventLog,
    ) -> None:
        self._researchers = researchers
        self._rank = rank  # ``policies.crew_dispatch.rank``
        self._context = context
        self._load = load
        self._log = log
        self._subtask = ""
        self.handle: Any = None

    async def run(
        self, subtask: SubTask, notes: Sequence[str] = (), prior: PriorWork | None = None
    ) -> ResearcherReport:
        import ray

        self._subtask = subtask.id
        researchers = len(self._researchers)
        index = await self._load.take(self._rank, researchers)
        self.handle = self._researchers[index]
        try:
            if index in self._load.replaced:  # Ray resubmits the probe once it is back
                await self.handle.pid.options(max_task_retries=-1).remote()
                self._load.replaced.discard(index)
            ref = self.handle.run.remote(self._context, subtask, list(notes), prior)
            try:
                report: ResearcherReport = await ref
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):  # the crew actor stops this sub-task too
                    ray.cancel(ref)
                raise
        except Exception as exc:
            if crashed(exc):  # its next sub-task waits until Ray has replaced it
                self._load.replaced.add(index)
            raise
        finally:  # the researcher is done with it: the next sub-task need not wait for the log
            self._load.give(index, researchers)
        return report

    async def steer(self, note: str) -> None:
        """A note for the sub-task once a researcher serves it (before that, nobody to tell)."""
        if self.handle is not None:
            await self.handle.steer.remote(self._context.run_id, self._subtask, note)


class Load:
    """What this host knows of the crew's researchers, over all its runs, and the sub-tasks
    waiting for one of their slots (``policies.crew_dispatch``)."""

    def __init__(self) -> None:
        self.busy: dict[int, int] = {}  # sub-tasks in flight per researcher
        self.replaced: set[int] = set()  # died; not yet seen back
        self.capacity = 0  # sub-tasks a researcher serves at once (ray.crew.concurrency)
        self._waiting: list[tuple[Ticket, asyncio.Future[int]]] = []  # a heap
        self._seq = itertools.count()

    def _next_researcher(self, researchers: int) -> int | None:
        return pick_researcher(self.busy, self.replaced, researchers, self.capacity)

    async def take(self, rank: int, researchers: int) -> int:
        """A slot for a sub-task of ``rank`` (``crew_dispatch.rank``): the researcher's
        index, once one has room and no sub-task served before it waits."""
        index = None if self._waiting else self._next_researcher(researchers)
        if index is None:
            slot: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (Ticket(rank, next(self._seq)), slot))
            try:
                return await slot
            except asyncio.CancelledError:
                if slot.done() and not slot.cancelled():  # given just as it was cancelled
                    self.give(slot.result(), researchers)
                raise
        self.busy[index] = self.busy.get(index, 0) + 1
        return index

    def give(self, index: int, researchers: int) -> None:
        """The sub-task on ``index`` ended: its slot goes to the first waiting sub-task."""
        self.busy[index] -= 1
        while self._waiting:
            next_index = self._next_researcher(researchers)
            if next_index is None:
                return
            _, slot = heapq.heappop(self._waiting)
            if not slot.done():  # one cancelled while waiting is skipped
                self.busy[next_index] = self.busy.get(next_index, 0) + 1
                slot.set_result(next_index)


class CrewSpawner:
    """Hands each sub-task to the crew through the host's ``Load`` (a slot on the least busy
    researcher, in the order ``policies.crew_dispatch`` serves); nothing to start or stop."""

    def __init__(
        self, researchers: Sequence[Any], context: RunContext, load: Load, log: EventLog
    ) -> None:
        self._researchers = list(researchers)
        self._context = context
        self._load = load
        self._log = log
        self._handed = 0

    def acquire(self) -> CrewMember:
        rank = crew_dispatch.rank(self._handed, self._context.settings.deep.max_parallel)
        member = CrewMember(self._researchers, rank, self._context, self._load, self._log)
        self._handed += 1
        return member

    def release(self, researcher: Any, healthy: bool) -> None:
        """Crew researchers outlive the sub-task (Ray replaces one whose process died)."""

    def close(self) -> None:
        """The crew outlives the run."""

    def crashed(self, exc: BaseException) -> bool:
        return crashed(exc)


class CrewEvaluatorPort:
    def __init__(self, handle: Any, context: RunContext) -> None:
        self._handle = handle
        self._context = context

    async def evaluate(self, task: EvaluateTask) -> tuple[Evaluation, list[LLMReply]]:
        result: tuple[Evaluation, list[LLMReply]] = await self._handle.evaluate.remote(
            self._context, task
        )
        return result


@dataclass
class HostedRun:
    spec: RunSpec
    events: EventLog
    pool: UrlPool
    docs: LogDocs
    coordinator: Coordinator
    task: asyncio.Task[RunResult] | None = None
    closer: asyncio.TimerHandle | None = field(default=None, repr=False)
    closed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    watch: asyncio.Task[None] | None = field(default=None, repr=False)
    opened: float = field(default_factory=time.monotonic)
    finished: bool = False  # ``run_finished`` is in its log: the report is on disk


def build_model(
    settings: Settings,
    keys: LLMKeys,
    hook: LedgerHook | None,
    breakers: dict[str, BreakerState],
    notify: Notify | None,
) -> LLMProvider:
    """A run's model, built in the crew's process only: a driver decoding a crew handle imports
    this module and should not pay for the providers (test_warm_imports.py)."""
    from deepresearch.providers.assembly import from_settings as assembly

    return assembly.build_llm_provider(settings, keys, hook, breakers, notify=notify)


_BUILDS: ModelBuilder = build_model  # checked against the plain object's protocol


class RunHost:
    def __init__(self) -> None:
        self._runs: dict[str, HostedRun] = {}
        self._models = RunModels(build_model)
        self._load = Load()

    async def open(self, spec: RunSpec) -> None:
        """Create the run's log, pool and coordinator; nothing runs until ``run``."""
        from deepresearch.per_run.coordinator import Coordinator
        from deepresearch.per_run.event_log import EventLog
        from deepresearch.per_run.log_sinks import LocalSink, LogDocs

        context, request = spec.context, spec.request
        run_id = context.run_id
        self._load.capacity = context.settings.ray.crew.concurrency  # the crew's, like every run's
        if run_id in self._runs:  # e.g. resumed while its first driver's run still goes on
            raise InputError(f"run {run_id} is still running on the crew; wait for it to end")
        events = EventLog(spec.run_dir, run_id, spec.start_seq, time.time, spec.doc_caps)
        docs = LogDocs(events)
        pool = UrlPool(spec.seed_docs, docs)
        evaluator = None
        if spec.evaluator is not None:
            evaluator = CrewEvaluatorPort(spec.evaluator, context)
        coordinator = Coordinator(
            context.settings,
            request,
            LocalSink(events),
            self._models.get(context),
            CrewSpawner(spec.researchers, context, self._load, events),
            evaluator,
            spec.resume,
            spec.follow_up,
            spec.prior,
            progress_pace=lambda: partial_pace.interval(len(self._runs)),
        )
        self._runs[run_id] = HostedRun(spec, events, pool, docs, coordinator)
        for kind, text in spec.warnings:
            await events.append("warning", {"kind": kind, "message": text})

    def _run(self, run_id: str) -> HostedRun:
        run = self._runs.get(run_id)
        if run is None:
            raise LookupError(f"run {run_id} is not open on this host")
        return run

    async def run(self, run_id: str, lease: Sequence[Any] = ()) -> RunResult:
        """Carry out the run to its result (the driver writes the report). ``lease`` holds the
        driver's ``hold`` call (in a list, so Ray does not wait for it before this call)."""
        run = self._run(run_id)
        if run.task is None:
            run.task = asyncio.get_running_loop().create_task(run.coordinator.run())
            run.task.add_done_callback(lambda _t: self._close_later(run_id))
        if lease and run.watch is None:
            run.watch = asyncio.get_running_loop().create_task(
                watch_lease(lease[0], lambda: self._driver_lost(run_id))
            )
        return await asyncio.shield(run.task)

    async def hold(self, run_id: str) -> None:
        """The driver's lease on the run: returns once the run is closed."""
        await self._run(run_id).closed.wait()

    async def _driver_lost(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is None:
            return
        ending = None if run.finished else await asyncio.to_thread(written_ending, run.spec.run_dir)
        if run.finished or ending is not None:  # its report is on disk: the run ended
            if ending is not None:  # the driver died before saying so
                with contextlib.suppress(Exception):
                    await self.finished(run_id, ending)
            await self.close(run_id)
            return
        log.warning("the driver of run %s is gone: stopping the run", run_id)
        with contextlib.suppress(Exception):  # the files matter more than the note
            await run.events.append("driver_lost", {"resume": f"deep-research resume {run_id}"})
        await self.close(run_id)
        await abandoned(run.spec.run_dir, run.spec.request, time.monotonic() - run.opened)

    async def finished(self, run_id: str, ending: dict[str, JsonValue]) -> None:
        """``run_finished``, said by whoever wrote the run's report once it is on disk (never
        the coordinator: a run whose driver died first is interrupted, not completed)."""
        run = self._run(run_id)
        if not run.finished:
            run.finished = True
            await run.events.append("run_finished", ending)

    def _close_later(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            loop = asyncio.get_running_loop()
            run.closer = loop.call_later(
                CLOSE_GRACE_S, lambda: loop.create_task(self.close(run_id))
            )

    async def log(self, run_id: str, method: str, *args: Any) -> Any:
        if method not in LOG_METHODS:
            raise ValueError(f"not an event log method: {method}")
        return await getattr(self._run(run_id).events, method)(*args)

    async def log_many(
        self, bursts: Sequence[tuple[str, list[tuple[str, dict[str, JsonValue]]]]]
    ) -> list[BaseException | None]:
        """Bursts of many runs from one crew process (``run_context.HostMail``), each appended
        to its run's log in the order given; what appending one raised is returned in its place."""

        async def append(run_id: str, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
            await self.log(run_id, "append_many", events)

        outcomes = await asyncio.gather(*(append(r, e) for r, e in bursts), return_exceptions=True)
        return [o if isinstance(o, BaseException) else None for o in outcomes]

    async def pool(self, run_id: str, method: str, *args: Any) -> Any:
        if method not in POOL_METHODS:
            raise ValueError(f"not a URL pool method: {method}")
        return await getattr(self._run(run_id).pool, method)(*args)

    async def close(self, run_id: str) -> None:
        """Stop the run if it is still going (as Ctrl-C would: its checkpoint stays), close its
        files and drop everything kept for it here and in the crew."""
        run = self._runs.get(run_id)
        if run is None:
            return
        if run.closer is not None:
            run.closer.cancel()
        run.closed.set()
        if run.watch is not None and run.watch is not asyncio.current_task():
            run.watch.cancel()
        if run.task is not None and not run.task.done():
            run.task.cancel()
            await asyncio.wait([run.task], timeout=60)
        await asyncio.wait([asyncio.ensure_future(run.docs.flush())], timeout=60)
        self._runs.pop(run_id, None)
        self._models.release(run_id)
        await run.events.close()
        for member in run.spec.crew():  # what they keep for the run goes; nobody waits for it
            with contextlib.suppress(Exception):
                member.release.remote(run_id)

    async def held(self) -> list[str]:
        return sorted(self._runs)

    async def ready(self, crew: Sequence[Any] = ()) -> None:
        """Load what opening a run needs; receiving ``crew`` decoded the handles a run's spec
        carries (the first decoding of a class's handle loads that class here, for a second of a
        first run)."""
        from deepresearch.per_run import coordinator, event_log, log_sinks  # noqa: F401
