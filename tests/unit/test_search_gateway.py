"""The gateway's breaker, retries and fallback, with fake providers, a fake clock and no sleeping."""

from __future__ import annotations

import asyncio

import pytest
from fake_clock import FakeClock
from list_sink import ListSink

from deepresearch.actors.search_gateway import SearchGateway
from deepresearch.errors import ProviderError, RateLimited, SearchUnavailable
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.schemas import SearchHit


class FakeProvider:
    def __init__(self, name: str, failures: list[Exception] | None = None) -> None:
        self.name = name
        self.failures = list(failures or [])
        self.calls = 0

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return [
            SearchHit(
                url=f"https://{self.name}.example/{query}/{i}#frag",
                title=f"{i}",
                provider=self.name,
                rank=i,
            )
            for i in range(1, 4)
        ] + [
            SearchHit(
                url=f"https://{self.name}.example/{query}/1",
                title="dup",
                provider=self.name,
                rank=4,
            )
        ]


def gateway(
    *providers: FakeProvider,
    threshold: int = 2,
    attempts: int = 3,
    clock: FakeClock | None = None,
    sink: ListSink | None = None,
) -> SearchGateway:
    clock = clock or FakeClock()
    return SearchGateway(
        list(providers),
        BreakerConfig(threshold, 10.0, 1),
        RetryPolicy(attempts, 0.5, 4.0, 5.0),
        sink=sink,
        clock=clock,
        sleep=clock.sleep,
        rand=lambda: 0.5,
    )


async def test_hits_are_normalized_and_deduplicated() -> None:
    result = await gateway(FakeProvider("a")).search("q", 10)
    assert [h.rank for h in result.hits] == [1, 2, 3]
    assert all("#" not in h.url for h in result.hits)
    assert result.provider == "a"


async def test_retry_honours_retry_after_with_cap() -> None:
    clock = FakeClock()
    a = FakeProvider("a", [RateLimited("a", 60.0), ProviderError("a", "503", True, None)])
    result = await gateway(a, clock=clock, threshold=5).search("q", 5)
    assert result.provider == "a" and a.calls == 3
    assert clock.slept[0] == 5.0  # Retry-After 60 s capped at 5 s
    assert 0 <= clock.slept[1] <= 1.0  # jittered backoff for attempt 2


async def test_breaker_opens_and_falls_back_then_recovers() -> None:
    clock = FakeClock()
    sink = ListSink()
    a = FakeProvider("a", [ProviderError("a", "500", False)] * 2)
    b = FakeProvider("b")
    gw = gateway(a, b, clock=clock, sink=sink, threshold=2)
    assert (await gw.search("one", 5)).provider == "b"
    assert (await gw.search("two", 5)).provider == "b"
    assert gw._breakers.status()["a"] == "open"
    assert "breaker_open" in sink.types() and "search_fallback" in sink.types()
    calls_when_open = a.calls
    assert (await gw.search("three", 5)).provider == "b"
    assert a.calls == calls_when_open  # open breaker: a is not even called
    clock.now += 11.0  # past reset_timeout: half-open probe succeeds and closes it
    assert (await gw.search("four", 5)).provider == "a"
    assert gw._breakers.status()["a"] == "closed"


async def test_every_provider_failing_is_a_typed_error() -> None:
    a = FakeProvider("a", [ProviderError("a", "down", False)] * 10)
    b = FakeProvider("b", [ProviderError("b", "down", False)] * 10)
    gw = gateway(a, b, threshold=1)
    with pytest.raises(SearchUnavailable) as info:
        await gw.search("q", 5)
    assert info.value.providers == ("a", "b")
    with pytest.raises(SearchUnavailable) as info:
        await gw.search("q", 5)
    assert "circuit open" in info.value.reason


async def test_a_cancelled_half_open_probe_frees_its_slot_for_the_next_search() -> None:
    clock = FakeClock()
    a = FakeProvider("a", [ProviderError("a", "500", False), asyncio.CancelledError()])
    gw = gateway(a, clock=clock, threshold=1)
    with pytest.raises(SearchUnavailable):
        await gw.search("one", 5)
    clock.now += 11.0  # half-open: one probe allowed, and it is cancelled mid-call
    with pytest.raises(asyncio.CancelledError):
        await gw.search("two", 5)
    assert (await gw.search("three", 5)).provider == "a"  # not refused until the next reset
