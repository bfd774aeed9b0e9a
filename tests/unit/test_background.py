"""Background: events in emit order (bursts in one call), calls in order per lane, newest-wins
writes, failures at check/flush; and the EventLog's arrival stamps that keep ``ts`` in ``seq`` order."""

from __future__ import annotations

import asyncio
import inspect
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


async def test_a_held_tail_is_what_no_send_took_and_everything_before_it_has_landed() -> None:
    """A researcher's last events ride back with its report: ``flush_holding_tail`` waits for
    the burst in flight and returns the events posted after it, unsent, in order."""
    sink = BatchRecorder()
    sink.gate.clear()
    out = Background(sink)
    out.post("a", {})
    await asyncio.sleep(0)  # "a" is in flight, held by the gate
    out.post("b", {})
    out.post("c", {})
    holding = asyncio.ensure_future(out.flush_holding_tail())
    await asyncio.sleep(0)
    assert not holding.done()  # "a" has not landed yet
    sink.gate.set()
    assert [t for t, _ in await holding] == ["b", "c"]
    assert sink.batches == [["a"]]  # the tail never went out on its own
    await out.flush()
    assert sink.batches == [["a"]]


async def test_events_within_the_gather_window_go_in_one_call_and_a_flush_cuts_it_short() -> None:
    """A crew researcher's events go to the run host in bursts (one call per window, not per
    step), and nothing that waits for them (a flush, the end of a sub-task) waits out the window."""
    sink = BatchRecorder()
    out = Background(sink, gather_s=30.0)  # a window no test waits out
    out.post("started", {})
    for _ in range(3):
        await asyncio.sleep(0)
    assert sink.batches == [["started"]]  # the first send goes at once
    out.post("a", {})
    await asyncio.sleep(0)
    out.post("b", {})
    await asyncio.sleep(0)
    assert sink.batches == [["started"]]  # the next ones gather
    await asyncio.wait_for(out.flush(), 5)
    assert sink.batches == [["started"], ["a", "b"]]
    out.post("c", {})
    await asyncio.wait_for(out.flush(), 5)
    assert sink.batches == [["started"], ["a", "b"], ["c"]]
    held = Background(sink, gather_s=30.0)
    held.post("d", {})
    await asyncio.sleep(0)
    held.post("e", {})
    tail = await asyncio.wait_for(held.flush_holding_tail(), 5)
    assert [t for t, _ in tail] == ["e"] and sink.batches[-1] == ["d"]


async def test_emit_returns_before_the_sink_has_the_event() -> None:
    inner = ListSink()
    out = Background(inner)
    await out.emit("run_started", {"mode": "deep"})
    assert inner.events == []  # the caller did not wait for it
    await out.flush()
    assert inner.events == [("run_started", {"mode": "deep"})]


async def test_newest_write_replaces_one_still_waiting_and_runs_lazily() -> None:
    inner = ListSink()
    out = Background(inner)
    gate = asyncio.Event()
    made: list[int] = []

    def write(n: int):  # type: ignore[no-untyped-def]
        async def run() -> None:
            made.append(n)
            if n == 1:
                await gate.wait()  # the first is still being written while more arrive
            await inner.write_text("p.md", str(n))

        return run

    out.replace("p.md", write(1))
    await asyncio.sleep(0)
    for n in (2, 3, 4):
        out.replace("p.md", write(n))
    await out.checkpoint({"n": 1})  # another key: its own lane, not held up by "p.md"
    gate.set()
    await out.flush()
    assert made == [1, 4]  # 2 and 3 were out of date before their turn: never even rendered
    assert inner.files == {"p.md": "4"} and inner.checkpoints == [{"n": 1}]


async def test_submitted_calls_run_one_after_another_in_their_lane() -> None:
    order: list[str] = []
    first_started = asyncio.Event()
    release = asyncio.Event()

    async def slow() -> None:
        first_started.set()
        await release.wait()
        order.append("slow")

    async def quick() -> None:
        order.append("quick")

    out = Background(ListSink())
    out.submit(slow(), "steering")
    out.submit(quick(), "steering")
    await first_started.wait()
    await asyncio.sleep(0.01)
    assert order == []  # the second waits for the first
    release.set()
    await out.flush()
    assert order == ["slow", "quick"]


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

    out.replace("checkpoint", fail)
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


async def test_a_superseded_checkpoint_is_taken_at_once_then_closed_unsent() -> None:
    class Noting(ListSink):
        def __init__(self) -> None:
            super().__init__()
            self.taken: list[Coroutine[Any, Any, None]] = []
            self.gate = asyncio.Event()

        def checkpoint(self, data: dict[str, Any]) -> Coroutine[Any, Any, None]:
            call = self._write(data)
            self.taken.append(call)
            return call

        async def _write(self, data: dict[str, Any]) -> None:
            if data["n"] == 1:
                await self.gate.wait()
            self.checkpoints.append(data)

    sink = Noting()
    out = Background(sink)
    for n in (1, 2, 3):
        await out.checkpoint({"n": n})
        await asyncio.sleep(0)
    assert len(sink.taken) == 3  # the sink saw every one when the actor took it
    sink.gate.set()
    await out.flush()
    assert sink.checkpoints == [{"n": 1}, {"n": 3}]
    assert inspect.getcoroutinestate(sink.taken[1]) == inspect.CORO_CLOSED
