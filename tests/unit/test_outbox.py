"""Outbox (ordered, batched, stamped events), QueuedSink, and Latest (newest-wins writes)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import JsonValue

from deepresearch.actors.event_log import EventLog, ListSink
from deepresearch.actors.outbox import Latest, Outbox, QueuedSink


class BatchRecorder(ListSink):
    """A sink that takes bursts, like ``ActorSink``: notes each call's batch."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[tuple[str, dict[str, JsonValue], float]]] = []

    async def emit_many(self, events: list[tuple[str, dict[str, JsonValue], float]]) -> None:
        self.batches.append(list(events))


class Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


async def test_events_keep_their_order_and_the_time_they_were_emitted() -> None:
    sink = BatchRecorder()
    box = Outbox(sink, clock=Ticks())
    for i in range(3):
        box.emit("step", {"i": i})
    await box.flush()
    sent = [e for batch in sink.batches for e in batch]
    assert [(t, p["i"]) for t, p, _ in sent] == [("step", 0), ("step", 1), ("step", 2)]
    assert [ts for _, _, ts in sent] == [101.0, 102.0, 103.0]  # emit times, not send times


async def test_lingering_sends_a_burst_in_one_call_and_flush_does_not_wait_it_out() -> None:
    sink = BatchRecorder()
    box = Outbox(sink, linger_s=30.0)
    box.emit("a", {})
    await asyncio.sleep(0)  # the sender is lingering now
    box.emit("b", {})
    box.emit("c", {})
    await asyncio.wait_for(box.flush(), timeout=5)  # never the 30 s linger
    assert [[t for t, _, _ in batch] for batch in sink.batches] == [["a", "b", "c"]]
    box.emit("d", {})  # after a flush, lingering applies again
    await asyncio.sleep(0.05)
    assert len(sink.batches) == 1
    await box.flush()
    assert [t for t, _, _ in sink.batches[-1]] == ["d"]


async def test_a_failed_send_surfaces_at_the_next_flush_once() -> None:
    class Broken(BatchRecorder):
        async def emit_many(self, events: list[tuple[str, dict[str, JsonValue], float]]) -> None:
            raise OSError("log gone")

    box = Outbox(Broken())
    box.emit("a", {})
    with pytest.raises(OSError, match="log gone"):
        await box.flush()
    await box.flush()  # reported once


async def test_queued_sink_returns_at_once_and_passes_files_straight_through() -> None:
    inner = ListSink()
    sink = QueuedSink(inner)
    await sink.emit("run_started", {"mode": "deep"})
    assert inner.events == []  # not sent yet: the caller did not wait for it
    await sink.checkpoint({"n": 1})
    await sink.write_text("report.partial.md", "x")
    await sink.flush()
    assert inner.events == [("run_started", {"mode": "deep"})]
    assert inner.checkpoints == [{"n": 1}] and inner.files == {"report.partial.md": "x"}


async def test_latest_runs_one_at_a_time_and_skips_what_a_newer_one_supersedes() -> None:
    written: list[int] = []
    gate = asyncio.Event()

    async def write(n: int) -> None:
        if n == 1:
            await gate.wait()  # the first is still being written while more arrive
        written.append(n)

    latest = Latest()
    latest.submit(write(1))
    await asyncio.sleep(0)
    for n in (2, 3, 4):
        latest.submit(write(n))
    gate.set()
    await latest.wait()
    assert written == [1, 4]  # 2 and 3 were out of date before they started


async def test_latest_reports_a_failure_at_the_next_check() -> None:
    async def fail() -> None:
        raise OSError("disk full")

    async def ok() -> None:
        return None

    latest = Latest()
    latest.submit(fail())
    with pytest.raises(OSError, match="disk full"):
        await latest.wait()
    latest.submit(ok())
    await latest.wait()
    latest.check()


async def test_stamped_events_keep_their_emit_time_in_the_log(tmp_path: Path) -> None:
    log = EventLog(str(tmp_path), "r1", clock=lambda: 500.0)
    await log.append_many([("a", {}), ("b", {})], [10.0, 11.0])
    await log.append_many([("c", {})])  # unstamped: the time it arrived
    assert [(e.type, e.ts) for e in await log.events()] == [("a", 10.0), ("b", 11.0), ("c", 500.0)]
