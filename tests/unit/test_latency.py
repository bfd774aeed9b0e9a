"""Injected latency (``simulate``): a call takes at least the delay, and how the provider's own
work relates to it depends on the mode."""

from __future__ import annotations

import asyncio

import pytest

from deepresearch.providers.assembly import simulated_latency as latency
from deepresearch.providers.assembly.simulated_latency import (
    SlowFetcher,
    SlowLLM,
    SlowSearch,
    delayed,
)
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.schemas import FetchedDoc, SearchHit


class Recorder:
    """Stands in for ``asyncio.sleep`` (no real waiting) and notes what happened in which order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, float]] = []

    async def sleep(self, seconds: float) -> None:
        self.log.append(("sleep", seconds))

    async def work(self, value: str = "done") -> str:
        self.log.append(("work", 0.0))
        return value

    async def fail(self) -> str:
        self.log.append(("work", 0.0))
        raise RuntimeError("provider down")


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder()
    monkeypatch.setattr(latency.asyncio, "sleep", recorder.sleep)
    return recorder


async def test_floor_does_the_work_first_then_waits_out_the_rest(rec: Recorder) -> None:
    assert await delayed(0.2, "floor", rec.work()) == "done"
    (first, _), (second, waited) = rec.log
    assert (first, second) == ("work", "sleep")
    assert 0.15 < waited <= 0.2  # the remainder of the delay, not the delay again


async def test_added_sleeps_first_then_works(rec: Recorder) -> None:
    assert await delayed(0.2, "added", rec.work()) == "done"
    assert rec.log == [("sleep", 0.2), ("work", 0.0)]


async def test_a_failing_call_takes_its_time_too(rec: Recorder) -> None:
    with pytest.raises(RuntimeError, match="provider down"):
        await delayed(0.2, "floor", rec.fail())
    assert [kind for kind, _ in rec.log] == ["work", "sleep"]


async def test_work_longer_than_the_delay_is_not_padded() -> None:
    async def slow() -> str:
        await asyncio.sleep(0.03)
        return "late"

    loop = asyncio.get_running_loop()
    start = loop.time()
    assert await delayed(0.01, "floor", slow()) == "late"
    assert loop.time() - start < 0.03 + 0.2  # max(delay, work), never delay + work padding


class Provider:
    name = "p"

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        await self.rec.work()
        return [SearchHit(url="https://a.example/", title=query, provider="p", rank=1)]

    def handles(self, url: str) -> bool:
        return True

    async def fetch(self, url: str) -> FetchedDoc:
        await self.rec.work()
        return FetchedDoc(url=url, title="t", location=url, text="x")


async def test_wrappers_pass_the_mode_through(rec: Recorder) -> None:
    provider = Provider(rec)
    assert (await SlowSearch(provider, 0.1, "added").search("q", 3))[0].title == "q"
    assert (await SlowFetcher(provider, 0.1, "added").fetch("u")).url == "u"
    assert rec.log == [("sleep", 0.1), ("work", 0.0)] * 2
    assert SlowLLM(ScriptedLLM({}), 0.1).mode == "floor"
