"""Ordered, non-blocking sends for an actor whose events report progress rather than decide it.

On Ray every ``emit`` is a round trip to the EventLog actor, and a researcher used to wait for
each of its fifteen-odd events (and for the pool's ``store`` of each document it read) before its
next search or fetch: on a loaded two-core machine that was a tenth of a second or more per batch
on the critical path. The Outbox queues events and ships whatever has accumulated in one call
from a single sender task, so the log receives them in exactly the order they were emitted.
Calls whose answer nobody needs (``later``) run in the background too.

With ``linger_s`` the sender waits that long after the first event of a burst before shipping,
so a researcher's step sends one batch instead of several. Each Ray call costs a few milliseconds
of CPU in both processes, and on two cores that CPU is taken from the researchers' critical paths.
Every event carries the time it was emitted, so lingering never shifts the log's timestamps.

``flush`` waits until every queued event and background call has landed and re-raises the first
failure. The researcher flushes before it returns its report, so every one of its events is in
``events.jsonl`` before the coordinator can emit ``run_finished``. A researcher that is killed
mid-run leaves a prefix of its events in the log (the order is kept), never a gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, runtime_checkable

from pydantic import JsonValue

from deepresearch.actors.event_log import EventSink

Queued = tuple[str, dict[str, JsonValue], float]  # type, payload, when emitted (unix time)


@runtime_checkable
class BatchSink(Protocol):
    """A sink that takes several stamped events in one call (one round trip for a burst)."""

    async def emit_many(self, events: list[Queued]) -> None: ...


class Outbox:
    def __init__(
        self, sink: EventSink, linger_s: float = 0.0, clock: Callable[[], float] = time.time
    ) -> None:
        self._sink = sink
        self._linger_s = linger_s
        self._clock = clock
        self._queue: list[Queued] = []
        self._sender: asyncio.Task[None] | None = None
        self._urgent: asyncio.Event | None = None  # set by flush: stop lingering
        self._background: list[asyncio.Task[Any]] = []
        self._error: BaseException | None = None

    def emit(self, type: str, payload: dict[str, JsonValue]) -> None:
        """Queue an event; it is sent after every event queued before it."""
        self._queue.append((type, payload, self._clock()))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send())

    def later(self, call: Coroutine[Any, Any, Any]) -> None:
        """Run ``call`` in the background; ``flush`` waits for it and raises what it raised."""
        self._background.append(asyncio.get_running_loop().create_task(call))

    async def _send(self) -> None:
        while self._queue:
            await self._linger()
            batch, self._queue = self._queue, []
            try:
                if isinstance(self._sink, BatchSink):
                    await self._sink.emit_many(batch)
                else:
                    for type, payload, _ in batch:
                        await self._sink.emit(type, payload)
            except Exception as exc:  # kept for flush: the emitter learns of it at its next flush
                self._error = self._error or exc

    async def _linger(self) -> None:
        if self._linger_s <= 0:
            return
        if self._urgent is None:
            self._urgent = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._urgent.wait(), self._linger_s)

    async def flush(self) -> None:
        """Wait until everything queued so far has landed; re-raise the first failure once."""
        if self._urgent is None:
            self._urgent = asyncio.Event()
        self._urgent.set()
        try:
            await self._drain()
        finally:
            self._urgent.clear()

    async def _drain(self) -> None:
        while (self._sender is not None and not self._sender.done()) or self._background:
            if self._sender is not None and not self._sender.done():
                # shielded: a cancelled emitter still delivers what it already emitted
                await asyncio.shield(self._sender)
            background, self._background = self._background, []
            outcomes = await asyncio.shield(asyncio.gather(*background, return_exceptions=True))
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    self._error = self._error or outcome
        error, self._error = self._error, None
        if error is not None:
            raise error


class QueuedSink:
    """An ``EventSink`` whose ``emit`` returns at once: events go through an ``Outbox`` (in
    order, batched), so an actor that only reports progress never waits a round trip to the log
    on its critical path. Checkpoints and files go straight through (callers order those with a
    ``Chain``). ``flush`` before the last event that must come after everything else."""

    def __init__(self, sink: EventSink, linger_s: float = 0.0) -> None:
        self._sink = sink
        self._outbox = Outbox(sink, linger_s)

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        self._outbox.emit(type, dict(payload or {}))

    def checkpoint(self, data: dict[str, Any]) -> Coroutine[Any, Any, None]:
        return self._sink.checkpoint(data)  # the sink's own call: nothing added in between

    def write_text(self, name: str, text: str) -> Coroutine[Any, Any, None]:
        return self._sink.write_text(name, text)

    async def flush(self) -> None:
        await self._outbox.flush()


class Latest:
    """Background writes where only the newest matters (checkpoints, the progress file): one
    runs at a time, and a newer one replaces any still waiting. Each holds everything the ones
    before it held, so skipping a superseded one loses nothing: a crash resumes from the last that
    landed either way, and two cores are not spent writing states already out of date. A failure
    surfaces at the next ``check`` or at ``wait``."""

    def __init__(self) -> None:
        self._next: Coroutine[Any, Any, None] | None = None
        self._runner: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def submit(self, call: Coroutine[Any, Any, None]) -> None:
        if self._next is not None:
            self._next.close()  # superseded before it started
        self._next = call
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._next is not None:
            call, self._next = self._next, None
            try:
                await call
            except Exception as exc:
                self._error = self._error or exc

    def check(self) -> None:
        """Raise the first failure (once)."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    async def wait(self) -> None:
        """Wait until the newest call submitted so far has landed, then ``check``."""
        if self._runner is not None:
            await asyncio.shield(self._runner)
        self.check()


class Chain:
    """Background calls that must land one after another (checkpoints, the progress file,
    steering notes): each starts when the one before it has finished, and the caller goes on
    meanwhile. A failure surfaces at the next ``check`` or at ``wait``."""

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []

    def submit(self, call: Coroutine[Any, Any, None]) -> None:
        previous = self._tasks[-1] if self._tasks else None

        async def in_turn() -> None:
            try:
                if previous is not None:
                    await asyncio.wait([previous])
            except asyncio.CancelledError:
                call.close()
                raise
            await call

        self._tasks.append(asyncio.get_running_loop().create_task(in_turn()))

    def check(self) -> None:
        """Raise the first failure among the calls that have finished (then forget them)."""
        while self._tasks and self._tasks[0].done():
            task = self._tasks.pop(0)
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error

    async def wait(self) -> None:
        """Wait for every call submitted so far, then ``check``."""
        if self._tasks:
            await asyncio.shield(asyncio.wait(list(self._tasks)))
        self.check()
