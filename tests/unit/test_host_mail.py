"""HostMail: bursts of many runs that pile up while a call to their run host is in flight go in
one ``log_many`` call; each sender waits for its own burst and learns only its own failure; and
the run host appends each run's bursts in order, a failing run's error returned to its sender."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

import pytest
from pydantic import JsonValue

from deepresearch.actors.run_host import RunHost
from deepresearch.per_run.run_context import RunSink, mail_for

Burst = list[tuple[str, dict[str, JsonValue]]]


class FakeHost:
    """A run host whose ``log_many`` records each call; the first call waits on ``gate``."""

    def __init__(self, missing: str = "") -> None:
        self.calls: list[list[tuple[str, list[str]]]] = []
        self.gate = asyncio.Event()
        self.missing = missing

    async def log_many(self, bursts: list[tuple[str, Burst]]) -> list[BaseException | None]:
        if not self.calls:
            await self.gate.wait()
        self.calls.append([(run, [t for t, _ in events]) for run, events in bursts])
        return [LookupError(run) if run == self.missing else None for run, _ in bursts]


class Handle:
    """A stand-in actor handle: ``log_many.remote``; handles of one host are equal."""

    def __init__(self, host: FakeHost) -> None:
        self.host = host
        self.log_many = SimpleNamespace(remote=host.log_many)

    def __hash__(self) -> int:
        return id(self.host)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Handle) and other.host is self.host


async def test_bursts_of_many_runs_during_a_call_go_in_the_next_one() -> None:
    host = FakeHost(missing="gone")
    sinks = {run: RunSink(Handle(host), run) for run in ("r1", "r2", "gone", "r3")}
    first = asyncio.ensure_future(sinks["r1"].emit_many([("a", {})]))
    await asyncio.sleep(0)  # r1's burst is in flight, held by the gate
    later = [
        asyncio.ensure_future(sinks[run].emit_many([("b", {}), ("c", {})]))
        for run in ("r2", "gone", "r3")
    ]
    for _ in range(3):
        await asyncio.sleep(0)
    assert not any(task.done() for task in (first, *later))  # nobody returns before landing
    host.gate.set()
    await first
    await later[0]
    with pytest.raises(LookupError):
        await later[1]  # only the sender whose run failed learns of it
    await later[2]
    assert host.calls == [
        [("r1", ["a"])],
        [("r2", ["b", "c"]), ("gone", ["b", "c"]), ("r3", ["b", "c"])],
    ]


async def test_a_cancelled_sender_does_not_hold_up_the_others() -> None:
    host = FakeHost()
    sinks = [RunSink(Handle(host), run) for run in ("r1", "r2", "r3")]
    first = asyncio.ensure_future(sinks[0].emit_many([("a", {})]))
    await asyncio.sleep(0)
    gone = asyncio.ensure_future(sinks[1].emit_many([("b", {})]))
    kept = asyncio.ensure_future(sinks[2].emit_many([("c", {})]))
    await asyncio.sleep(0)
    gone.cancel()
    host.gate.set()
    await asyncio.gather(first, kept)
    assert gone.cancelled()
    assert host.calls[-1] == [("r2", ["b"]), ("r3", ["c"])]  # sent, its sender no longer waits


async def test_one_mail_per_host() -> None:
    host = FakeHost()
    assert mail_for(Handle(host)) is mail_for(Handle(host))
    assert mail_for(Handle(FakeHost())) is not mail_for(Handle(host))


class Log:
    def __init__(self) -> None:
        self.bursts: list[list[str]] = []

    async def append_many(self, events: Burst) -> int:
        await asyncio.sleep(0)
        self.bursts.append([t for t, _ in events])
        return len(self.bursts)


async def test_run_host_appends_each_runs_bursts_in_order_and_returns_failures() -> None:
    host = RunHost()
    logs = {"r1": Log(), "r2": Log()}
    for run, log in logs.items():
        host._runs[run] = cast(Any, SimpleNamespace(events=log))
    outcomes = await host.log_many(
        [("r1", [("a", {})]), ("nope", [("x", {})]), ("r2", [("b", {})]), ("r1", [("c", {})])]
    )
    assert [type(o) for o in outcomes] == [type(None), LookupError, type(None), type(None)]
    assert logs["r1"].bursts == [["a"], ["c"]]
    assert logs["r2"].bursts == [["b"]]
