"""What an actor sends without waiting for the answer: one ordered queue, performed in order.

At run time a ``Background`` is a plain object inside an actor's event loop (a researcher, a
run host's coordinator and URL pool): its caller hands it work and goes on at once, and one task
of its own performs that work one item after another, in the order it was made. A researcher
reports each step as an event and hands every document it read to the pool; the coordinator
checkpoints after every lifecycle step, refreshes the progress file and steers running
researchers. None of that may hold up the next search or the next step, and none of it may
overtake what was made before it: a checkpoint lands after the events that led to it.

- events (``post``, or ``emit`` as an ``EventSink``): adjacent events still waiting go in one
  call (``emit_many`` when the sink has it); the EventLog stamps them as they arrive, so ``seq``
  and ``ts`` agree;
- ``submit(call)``: a call already made (a pool write, a steering note, a checkpoint or file
  write of the sink), awaited when its turn comes;
- ``later(make)``: work made only when its turn comes (the progress file's render).

``check`` raises the first failure so far; ``flush`` waits until everything made so far has
landed, then does the same. An actor killed meanwhile leaves a prefix of what it made.

Only the queue pays for itself: lingering for more events, a lane per kind of call, newest-wins
writes and a held tail riding back with a researcher's report measured within noise each
(bench/parallel.py); warming the crew (``actors/crew.py``: ``warm``) is what pays at start-up.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import JsonValue

from deepresearch.per_run.event_log import EventSink

Make = Callable[[], Awaitable[Any]]
Pending = tuple[str, dict[str, JsonValue]]  # an event: type, payload


@runtime_checkable
class BatchSink(Protocol):
    """A sink that takes several events in one call (one round trip for a burst)."""

    async def emit_many(self, events: list[Pending]) -> None: ...


class Background:
    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._batch = isinstance(sink, BatchSink)  # a protocol check is slow: once per sink
        # Each item: a list of adjacent events, or work to make and await. The runner pops an
        # item before performing it, so an event posted meanwhile starts a new list.
        self._queue: deque[list[Pending] | Make] = deque()
        self._runner: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def _push(self, item: list[Pending] | Make) -> None:
        self._queue.append(item)
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._queue:
            item = self._queue.popleft()
            try:
                if isinstance(item, list):
                    await self._send(item)
                else:
                    await item()
            except Exception as exc:  # kept for check/flush: the caller goes on meanwhile
                self._error = self._error or exc

    async def _send(self, events: list[Pending]) -> None:
        if self._batch:
            await cast(BatchSink, self._sink).emit_many(events)
        else:
            for type, payload in events:
                await self._sink.emit(type, payload)

    # ------------------------------------------------------------------ what is made

    def post(self, type: str, payload: dict[str, JsonValue]) -> None:
        """Queue an event; it is sent after everything made before it."""
        last = self._queue[-1] if self._queue else None
        if isinstance(last, list):
            last.append((type, payload))
        else:
            self._push([(type, payload)])

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        """``EventSink.emit`` that returns at once (the event goes out in order)."""
        self.post(type, dict(payload or {}))

    def submit(self, call: Awaitable[Any]) -> None:
        """Await ``call`` after everything made before it."""
        self._push(lambda: call)

    def later(self, make: Make) -> None:
        """Make and await ``make()`` when its turn comes."""
        self._push(make)

    async def checkpoint(self, data: dict[str, Any]) -> None:
        """``EventSink.checkpoint`` in order. The sink's call is made now (a sink may note what
        it was given) and awaited when its turn comes."""
        self.submit(self._sink.checkpoint(data))

    async def write_text(self, name: str, text: str) -> None:
        """``EventSink.write_text`` in order."""
        self.submit(self._sink.write_text(name, text))

    # ------------------------------------------------------------------ outcomes

    def check(self) -> None:
        """Raise the first failure so far (once)."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    async def flush(self) -> None:
        """Wait until everything made so far has landed; then ``check``."""
        while self._runner is not None and not self._runner.done():
            await asyncio.shield(self._runner)  # a cancelled caller still delivers what it made
        self.check()
