"""Background: one ordered queue (events, calls, checkpoints, renders land in the order they were
made; adjacent events in one call), failures at check/flush; and the EventLog's arrival stamps
that keep ``ts`` in ``seq`` order."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from list_sink import ListSink
from pydantic import JsonValue

from deepresearch.per_run.event_log import EventLog
from deepresearch.per_run.latency_hiding import Background
from deepresearch.schemas import FetchedDoc


class BatchRecorder(ListSink):
    """A sink that takes bursts, like ``RunSink``; the first send waits on ``gate``."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def emit_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
        await self.gate.wait()
        self.batches.append([t for t, _ in events])


async def test_events_go_out_in_order_and_a_burst_during_a_send_goes_in_one_call() -> None:
    sink = BatchRecorder()
    sink.gate.clear()
    out = Background(sink)
    out.post("a", {})
    await asyncio.sleep(0)  # "a" is in flight, held by the gate
    for name in ("b", "c", "d"):
        await out.emit(name, {})
    sink.gate.set()
    await out.flush()
    assert sink.batches == [["a"], ["b", "c", "d"]]


async def test_emit_returns_before_the_sink_has_the_event() -> None:
    inner = ListSink()
    out = Background(inner)
    await out.emit("run_started", {"mode": "deep"})
    assert inner.events == []  # the caller did not wait for it
    await out.flush()
    assert inner.events == [("run_started", {"mode": "deep"})]


async def test_a_failure_surfaces_at_check_and_at_flush_once() -> None:
    class Broken(BatchRecorder):
        async def emit_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
            raise OSError("log gone")

    out = Background(Broken())
    out.post("a", {})
    with pytest.raises(OSError, match="log gone"):
        await out.flush()
    await out.flush()  # reported once

    async def fail() -> None:
        raise OSError("disk full")

    out.later(fail)
    await asyncio.sleep(0.01)
    with pytest.raises(OSError, match="disk full"):
        out.check()
    out.check()


async def test_a_cancelled_flusher_still_delivers_what_was_posted() -> None:
    sink = BatchRecorder()
    sink.gate.clear()
    out = Background(sink)
    out.post("a", {})
    waiter = asyncio.create_task(out.flush())
    await asyncio.sleep(0)
    waiter.cancel()
    sink.gate.set()
    await out.flush()
    assert sink.batches == [["a"]]


async def test_the_log_stamps_on_arrival_and_never_goes_back_in_time(tmp_path: Path) -> None:
    times = iter([500.0, 499.0, 501.0])  # a wall clock that stepped back once
    log = EventLog(str(tmp_path), "r1", clock=lambda: next(times))
    await log.append_many([("a", {}), ("b", {})])
    await log.append_many([("c", {})])
    await log.append("d")
    got = [(e.seq, e.type, e.ts) for e in await log.events()]
    assert got == [(1, "a", 500.0), (2, "b", 500.0), (3, "c", 500.0), (4, "d", 501.0)]


async def test_one_logs_stalled_disk_does_not_hold_up_another_log_on_the_loop(
    tmp_path: Path,
) -> None:
    """A run host keeps many runs' logs on one event loop: a write stuck in one run's fsync must
    not stall the others, and the stuck run's event is not counted until it is on disk."""
    stalled, slow = threading.Event(), EventLog(str(tmp_path / "a"), "a")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast = EventLog(str(tmp_path / "b"), "b")
    write = slow._dir.append_events

    def stuck(events: list[Any]) -> None:
        stalled.wait(10)  # the old code blocked the loop right here
        write(events)

    slow._dir.append_events = stuck  # type: ignore[method-assign]
    pending = asyncio.create_task(slow.append("x"))
    await asyncio.sleep(0)
    assert await asyncio.wait_for(fast.append("y"), 5) == 1  # served while "a" is stuck
    assert not pending.done() and await slow.events() == []
    stalled.set()
    assert await pending == 1 and [e.type for e in await slow.events()] == ["x"]


async def test_a_stalled_documents_write_does_not_hold_up_the_loop(tmp_path: Path) -> None:
    """Page texts kept for follow-ups are written in a worker thread: a write stuck on the
    disk leaves the run host's loop (every run's claims and events) free."""
    (tmp_path / "a").mkdir()
    log, stalled = EventLog(str(tmp_path / "a"), "a"), threading.Event()
    write, writers = log._dir.append_doc, []

    def stuck(doc: Any) -> None:
        writers.append(threading.get_ident())
        stalled.wait(2)  # the old code blocked the loop right here
        write(doc)

    log._dir.append_doc = stuck  # type: ignore[method-assign]
    doc = FetchedDoc(url="https://x.example/", title="t", location="l", text="page text")
    pending = asyncio.create_task(log.append_docs([doc]))
    await asyncio.sleep(0)
    assert await asyncio.wait_for(log.append("y"), 5) == 1  # served while the write is stuck
    stalled.set()
    await pending
    assert "page text" in (tmp_path / "a" / "docs.jsonl").read_text()
    assert writers and threading.get_ident() not in writers  # never on the loop's thread


class Landing(BatchRecorder):
    """Records, in one list, every event burst, checkpoint and file as it lands."""

    def __init__(self) -> None:
        super().__init__()
        self.landed: list[object] = []

    async def emit_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
        await self.gate.wait()
        self.landed.append([t for t, _ in events])

    async def checkpoint(self, data: dict[str, Any]) -> None:
        self.landed.append(f"checkpoint {data['n']}")

    async def write_text(self, name: str, text: str) -> None:
        self.landed.append(name)


async def test_everything_lands_in_the_order_it_was_made() -> None:
    """Events, pool calls, checkpoints, the progress file and steering share one queue: while
    an event burst is still on its way, nothing made after it overtakes it (a checkpoint never
    lands before the events that led to it); adjacent events still go in one call."""
    sink = Landing()
    sink.gate.clear()
    out = Background(sink)

    async def call(name: str) -> None:
        sink.landed.append(name)

    out.post("a", {})
    await asyncio.sleep(0)  # "a" is in flight, held by the gate
    out.submit(call("pool"))
    await out.checkpoint({"n": 1})
    out.post("b", {})
    await out.emit("c", {})
    await out.write_text("report.partial.md", "so far")
    out.submit(call("steer"))
    await out.checkpoint({"n": 2})
    for _ in range(5):
        await asyncio.sleep(0)
    assert sink.landed == []  # everything waits behind "a"
    sink.gate.set()
    await out.flush()
    assert sink.landed == [
        ["a"],
        "pool",
        "checkpoint 1",
        ["b", "c"],
        "report.partial.md",
        "steer",
        "checkpoint 2",
    ]


async def test_later_work_is_made_only_when_its_turn_comes() -> None:
    """A progress render reads the reports finished by its turn, not by the time it was asked."""
    sink = BatchRecorder()
    sink.gate.clear()
    out = Background(sink)
    made: list[str] = []

    async def render() -> None:
        made.append("render")

    out.post("a", {})
    await asyncio.sleep(0)
    out.later(render)
    await asyncio.sleep(0)
    assert made == []
    sink.gate.set()
    await out.flush()
    assert made == ["render"] and sink.batches == [["a"]]


async def test_a_checkpoint_is_taken_at_once_and_each_lands_in_turn() -> None:
    class Noting(ListSink):
        def __init__(self) -> None:
            super().__init__()
            self.taken: list[Coroutine[Any, Any, None]] = []

        def checkpoint(self, data: dict[str, Any]) -> Coroutine[Any, Any, None]:
            call = self._write(data)
            self.taken.append(call)
            return call

        async def _write(self, data: dict[str, Any]) -> None:
            self.checkpoints.append(data)

    sink = Noting()
    out = Background(sink)
    for n in (1, 2, 3):
        await out.checkpoint({"n": n})
    assert len(sink.taken) == 3 and sink.checkpoints == []  # made now, awaited in turn
    await out.flush()
    assert sink.checkpoints == [{"n": 1}, {"n": 2}, {"n": 3}]
