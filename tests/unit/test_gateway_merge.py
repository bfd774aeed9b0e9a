"""The gateway over real providers and mixed chains: breaker + fallback through a loopback SearXNG,
merging local with web hits, partial fan-out failures, rate limits and lazily built chains."""

from __future__ import annotations

import time

import httpx
import pytest
from fake_clock import FakeClock
from list_sink import ListSink

from deepresearch.actors.search_gateway import SearchGateway, merges
from deepresearch.errors import ConfigError, ProviderError, SearchUnavailable
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.search.base import SearchProvider
from deepresearch.providers.search.web_engines import SearxngSearch
from deepresearch.providers.testing.searxng import FakeSearxng, result
from deepresearch.schemas import SearchHit


class Listed:
    """A provider answering fixed URLs (``doc:`` ids for a corpus, https for the web)."""

    def __init__(self, name: str, urls: list[str], fail: bool = False) -> None:
        self.name = name
        self.urls = urls
        self.fail = fail
        self.calls = 0
        self.last_failures: tuple[str, ...] = ()

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        self.calls += 1
        if self.fail:
            raise ProviderError(self.name, "HTTP 400: bad request", False)
        return [
            SearchHit(url=u, title=u, snippet="s", provider=self.name, rank=i + 1)
            for i, u in enumerate(self.urls[:limit])
        ]


def gateway(
    providers: list[SearchProvider],
    sink: ListSink,
    clock: FakeClock | None = None,
    **kwargs: object,
) -> SearchGateway:
    clock = clock or FakeClock()
    return SearchGateway(
        providers,
        BreakerConfig(2, 30.0, 1),
        RetryPolicy(3, 0.25, 8.0, 30.0),
        sink=sink,
        clock=clock,
        sleep=clock.sleep,
        rand=lambda: 0.5,
        **kwargs,  # type: ignore[arg-type]
    )


def test_which_chains_merge() -> None:
    assert merges(["local", "duckduckgo"]) and merges(["searxng", "grep"])
    assert not merges(["searxng", "duckduckgo"]) and not merges(["local"])
    assert not merges(["local", "grep"])


async def test_searxng_500s_open_its_breaker_and_the_next_provider_answers() -> None:
    sink, clock = ListSink(), FakeClock()
    b = Listed("brave", ["https://b.example/1", "https://b.example/2"])
    async with FakeSearxng(default=[result("https://a.example/x", "x")]) as fake:
        fake.fail_next(500, times=2)
        async with httpx.AsyncClient() as client:
            a = SearxngSearch(client, fake.base_url, timeout_s=5)
            gw = gateway([a, b], sink, clock)
            first = await gw.search("solar output", 5)
            assert first.provider == "brave" and [h.url for h in first.hits] == b.urls
            assert any("circuit open" in e for e in first.errors)
            assert len(fake.requests) == 2  # two 500s reached the threshold of 2
            assert gw._breakers.status()["searxng"] == "open"
            assert (await gw.search("again", 5)).provider == "brave"
            assert len(fake.requests) == 2  # open: not even asked
            retries = [p for t, p in sink.events if t == "search_retry"]
            assert retries and retries[0]["provider"] == "searxng"
            assert ("breaker_open", {"provider": "searxng"}) in sink.events
            assert b.calls == 2
            clock.now += 31.0  # past the reset timeout: a half-open probe
            recovered = await gw.search("later", 5)
            assert recovered.provider == "searxng"
            assert [h.url for h in recovered.hits] == ["https://a.example/x"]
            assert gw._breakers.status()["searxng"] == "closed"


async def test_local_and_web_are_merged_with_chain_order_breaking_ties() -> None:
    sink = ListSink()
    local = Listed("local", ["doc:a.pdf#page=2", "doc:b.md"])
    web = Listed(
        "duckduckgo",
        ["https://w.example/1?utm_source=x", "https://W.example:443/1/", "https://w.example/2"],
    )
    result_ = await gateway([local, web], sink).search("q", 10)
    assert result_.provider == "local+duckduckgo"
    assert [h.url for h in result_.hits] == [
        "doc:a.pdf#page=2",
        "https://w.example/1",  # its two spellings are one hit
        "doc:b.md",
        "https://w.example/2",
    ]
    assert [h.rank for h in result_.hits] == [1, 2, 3, 4]
    assert local.calls == web.calls == 1


async def test_merge_survives_one_failing_provider_and_fails_typed_when_all_do() -> None:
    sink = ListSink()
    local = Listed("local", ["doc:a.md"])
    web = Listed("duckduckgo", [], fail=True)
    result_ = await gateway([local, web], sink).search("q", 5)
    assert result_.provider == "local" and [h.url for h in result_.hits] == ["doc:a.md"]
    assert result_.errors and "duckduckgo" in result_.errors[0]
    assert ("search_fallback", {"provider": "duckduckgo", "error": "HTTP 400: bad request"}) in (
        sink.events
    )
    local.fail = True
    with pytest.raises(SearchUnavailable) as info:
        await gateway([local, web], ListSink()).search("q", 5)
    assert info.value.providers == ("local", "duckduckgo")


async def test_a_partial_fan_out_is_an_event() -> None:
    sink = ListSink()
    security = Listed("security", ["https://osv.dev/vulnerability/X"])
    security.last_failures = ("nvd: HTTP 503", "kev: timed out")
    result_ = await gateway([security], sink).search("CVE-2024-0001", 5)
    assert result_.hits
    assert (
        "search_partial",
        {"provider": "security", "failures": "nvd: HTTP 503; kev: timed out"},
    ) in sink.events


async def test_rate_limit_spaces_calls_to_one_provider() -> None:
    sink = ListSink()
    slow = Listed("duckduckgo", ["https://d.example/1"])
    free = Listed("searxng", ["https://s.example/1"])
    # 2 per 0.2 s: a burst of 2, then one call every 0.1 s.
    limited = gateway([slow], sink, rate_limits={"duckduckgo": 2}, rate_period_s=0.2)
    started = time.monotonic()
    for i in range(5):
        await limited.search(f"q{i}", 5)
    elapsed = time.monotonic() - started
    assert elapsed >= 0.25  # 3 waits of 0.1 s (leaky bucket), minus timer slack
    assert sink.types().count("search_throttled") == 3
    unlimited = gateway([free], ListSink(), rate_limits={"duckduckgo": 2}, rate_period_s=0.2)
    started = time.monotonic()
    for i in range(5):
        await unlimited.search(f"q{i}", 5)
    assert time.monotonic() - started < 0.1  # the limit is per provider


async def test_a_lazy_chain_is_built_once_on_first_search() -> None:
    built: list[int] = []

    async def build() -> list[SearchProvider]:
        built.append(1)
        return [Listed("local", ["doc:a.md"])]

    with pytest.raises(ValueError):
        gateway([], ListSink())
    gw = gateway(build, ListSink())  # type: ignore[arg-type]
    assert gw._breakers.status() == {}
    await gw.search("a", 5)
    await gw.search("b", 5)
    assert built == [1] and gw._breakers.status() == {"local": "closed"}


async def test_a_chain_that_cannot_be_built_is_search_unavailable() -> None:
    async def build() -> list[SearchProvider]:
        raise ConfigError("search.providers", "searxng needs SEARXNG_URL")

    gw = gateway(build, ListSink())  # type: ignore[arg-type]
    with pytest.raises(SearchUnavailable) as info:
        await gw.search("a", 5)
    assert "SEARXNG_URL" in info.value.reason
