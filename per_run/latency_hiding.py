"""What an actor sends without waiting for the answer, performed in the order it was made.

A researcher reports each step as an event and hands every document it read to the pool; the
coordinator checkpoints after every lifecycle step, refreshes the progress file and steers running
researchers. None of that may hold up the next search or the next step, so ``Background`` takes
each at once and performs it on a task of its own, one lane per kind of call:

- events (``post``, or ``emit`` as an ``EventSink``) go out in emit order; those that pile up while
  a send is in flight (or within ``gather_s`` of the first) go in one call (``emit_many`` when
  the sink has it). The EventLog stamps them as they arrive, so ``seq`` and ``ts`` agree;
- ``submit(call, lane)``: calls whose answer nobody needs, one after another in their lane;
- ``replace(key, make)``: writes where only the newest matters (a checkpoint, the progress file).
  A newer one replaces one still waiting with the same key (it holds everything the older one
  held), and ``make`` runs only when its turn comes, so a superseded write costs nothing.

``check`` raises the first failure so far; ``flush`` waits until everything made so far has
landed, then does the same (``flush_holding_tail``: but the events not sent yet are returned). An actor killed meanwhile leaves a prefix of what it sent, never a gap.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import JsonValue

from deepresearch.per_run.event_log import EventSink

Make = Callable[[], Awaitable[Any]]
Pending = tuple[str, dict[str, JsonValue]]  # an event: type, payload


@runtime_checkable
class BatchSink(Protocol):
    """A sink that takes several events in one call (one round trip for a burst)."""

    async def emit_many(self, events: list[Pending]) -> None: ...


class _Taken:
    """A call already made (its awaitable exists) waiting for its turn; closed if superseded."""

    def __init__(self, call: Awaitable[Any]) -> None:
        self._call = call

    def __call__(self) -> Awaitable[Any]:
        return self._call

    def close(self) -> None:
        if isinstance(self._call, Coroutine):
            self._call.close()


class _Lane:
    """Jobs run one at a time, in order; a keyed job replaces a waiting one with its key."""

    def __init__(self) -> None:
        self._jobs: deque[tuple[str | None, Make]] = deque()
        self._runner: asyncio.Task[None] | None = None
        self.error: BaseException | None = None

    def push(self, make: Make, key: str | None = None) -> None:
        for i, (waiting, old) in enumerate(self._jobs):
            if key is not None and waiting == key:
                if isinstance(old, _Taken):
                    old.close()
                self._jobs[i] = (key, make)
                break
        else:
            self._jobs.append((key, make))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._jobs:
            _, make = self._jobs.popleft()
            try:
                await make()
            except Exception as exc:  # kept for check/flush: the caller goes on meanwhile
                self.error = self.error or exc

    @property
    def busy(self) -> bool:
        return self._runner is not None and not self._runner.done()

    async def drain(self) -> None:
        while self._runner is not None and not self._runner.done():
            await asyncio.shield(self._runner)  # a cancelled caller still delivers what it made


class Background:
    def __init__(self, sink: EventSink, gather_s: float = 0.0) -> None:
        self._sink = sink
        self._batch = isinstance(sink, BatchSink)  # a protocol check is slow: once per sink
        self._lanes: dict[str, _Lane] = {}
        self._events: list[Pending] = []
        self._send_waiting = False
        # A send after the first waits this long for more events to join it (``flush`` cuts the
        # wait short): a sub-task's start is seen at once, its progress in bursts.
        self._gather_s = gather_s
        self._hurry: asyncio.Event | None = None

    def _lane(self, name: str) -> _Lane:
        return self._lanes.setdefault(name, _Lane())

    # ------------------------------------------------------------------ events

    def post(self, type: str, payload: dict[str, JsonValue]) -> None:
        """Queue an event; it is sent after every event posted before it."""
        self._events.append((type, payload))
        if not self._send_waiting:
            self._send_waiting = True
            self._lane("events").push(self._send)

    async def _send(self) -> None:
        if self._gather_s > 0 and self._hurry is not None:  # the first send goes at once
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hurry.wait(), self._gather_s)
        elif self._gather_s > 0:
            self._hurry = asyncio.Event()
        batch, self._events, self._send_waiting = self._events, [], False
        if not batch:  # taken by ``flush_holding_tail``
            return
        if self._batch:
            await cast(BatchSink, self._sink).emit_many(batch)
        else:
            for type, payload in batch:
                await self._sink.emit(type, payload)

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        """``EventSink.emit`` that returns at once (the event goes out in order)."""
        self.post(type, dict(payload or {}))

    # ------------------------------------------------------------------ other calls

    def submit(self, call: Awaitable[Any], lane: str = "calls") -> None:
        """Perform ``call`` after the calls submitted to ``lane`` before it."""
        self._lane(lane).push(_Taken(call))

    def replace(self, key: str, make: Make) -> None:
        """Newest wins: ``make()`` replaces a waiting write with the same key (its own lane)."""
        self._lane(key).push(make, key)

    async def checkpoint(self, data: dict[str, Any]) -> None:
        """``EventSink.checkpoint`` in the background, newest wins. The sink's call is made now
        (a sink may note what it was given) and awaited when its turn comes."""
        self.replace("checkpoint", _Taken(self._sink.checkpoint(data)))

    async def write_text(self, name: str, text: str) -> None:
        """``EventSink.write_text`` in the background, newest wins per file."""
        self.replace(name, _Taken(self._sink.write_text(name, text)))

    # ------------------------------------------------------------------ outcomes

    def check(self) -> None:
        """Raise the first failure so far (once)."""
        for lane in self._lanes.values():
            error, lane.error = lane.error, None
            if error is not None:
                raise error

    async def flush_holding_tail(self) -> list[Pending]:
        """``flush``, except for the events no send has taken yet: they are returned instead, to
        travel with the caller's answer; its receiver appends them, after everything flushed
        here (one round trip fewer at the end of a sub-task)."""
        tail, self._events = self._events, []
        await self.flush()
        return tail

    async def flush(self) -> None:
        """Wait until everything made so far has landed; then ``check``."""
        if self._hurry is not None:
            self._hurry.set()  # from now on, sends go at once
        while any(lane.busy for lane in self._lanes.values()):
            for lane in list(self._lanes.values()):
                await lane.drain()
        self.check()
