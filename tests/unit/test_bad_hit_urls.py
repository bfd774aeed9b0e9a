"""One malformed search-result URL (``http://a..b/``, a label over 63 characters, a port out of
range) is skipped and logged: it never raises out of the gateway, the fetcher or the researcher."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from list_sink import ListSink

from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.actors.search_gateway import SearchGateway
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.errors import FetchBlocked
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.documents.extract import ExtractionPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.search.web_engines import SearxngSearch
from deepresearch.providers.testing.fake_web import FakeWeb, static_resolver
from deepresearch.providers.testing.searxng import FakeSearxng, result
from deepresearch.providers.web.netguard import check_url
from deepresearch.providers.web.safe_fetcher import FetchPolicy, SafeFetcher, make_client
from deepresearch.schemas import Request, RunResult

QUESTION = "How much did solar output rise in the northern valley in 2024?"
RESOLVE = static_resolver({"solar.test": ["127.0.0.1"]})
POLICY = FetchPolicy(allowed_private_hosts=frozenset({"solar.test"}), per_host_delay_s=0.0)
BAD = (
    "http://a..b/solar-2024",
    f"http://{'a' * 64}.example/solar-2024",
    "http://xn--a.example/solar-2024",
    "http://solar.test:99999/solar-2024",
)


@pytest.fixture(scope="module")
def pool() -> Iterator[ExtractionPool]:
    with ExtractionPool(workers=1, timeout_s=30, memory_mb=1024) as extraction:
        yield extraction


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with make_client() as http:
        yield http


@pytest.mark.parametrize("url", BAD)
async def test_the_fetcher_refuses_a_malformed_host_instead_of_raising(
    url: str, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    with pytest.raises(FetchBlocked):
        await check_url(url, resolve=RESOLVE)
    with pytest.raises(FetchBlocked):
        await SafeFetcher(client, pool, POLICY, resolve=RESOLVE).fetch(url)


async def test_a_redirect_to_a_malformed_host_is_refused(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    async with FakeWeb() as web:
        fetcher = SafeFetcher(client, pool, POLICY, resolve=RESOLVE)
        with pytest.raises(FetchBlocked, match="empty label"):
            await fetcher.fetch(web.url("/redirect?to=http://a..b/x", host="solar.test"))


async def test_bad_hits_are_skipped_and_logged_and_the_run_answers(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    async with FakeWeb() as web:
        good = web.url("/article", host="solar.test")
        hits = [result(u, "Solar output in 2024", "Solar output rose 12 percent") for u in BAD]
        hits.append(result(good, "Solar output in 2024", "Solar output rose"))
        async with FakeSearxng(default=hits) as searx, httpx.AsyncClient() as search_client:
            outcome, sink = await run(client, pool, searx, search_client)
    skipped = [p for t, p in sink.events if t == "hit_skipped"]
    assert {p["url"] for p in skipped} == set(BAD)
    assert all(p["provider"] == "searxng" and p["reason"] for p in skipped)
    assert "researcher_failed" not in sink.types()
    assert outcome.status == "completed"
    assert [s.url for s in outcome.report.sources] == [good]
    assert "12 percent" in outcome.report.answer


async def run(
    client: httpx.AsyncClient,
    pool: ExtractionPool,
    searx: FakeSearxng,
    search_client: httpx.AsyncClient,
) -> tuple[RunResult, ListSink]:
    """A quick run in this process: real gateway over SearXNG, real safe fetcher over FakeWeb."""
    sink = ListSink()
    gateway = SearchGateway(
        [SearxngSearch(search_client, searx.base_url)],
        BreakerConfig(2, 30.0, 1),
        RetryPolicy(1, 0.0, 0.0, 0.0),
        sink=sink,
    )
    fetcher = SafeFetcher(client, pool, POLICY, resolve=RESOLVE)
    s = load_settings(None, overrides_from_flags({"search.providers": "searxng"}), env={})
    llm = ExtractiveLLM()
    spawner = LocalSpawner(s, gateway, UrlPool(), sink, llm, [fetcher])  # type: ignore[arg-type]
    request = Request(run_id="r1", query=QUESTION, mode="quick")
    coordinator = Coordinator(s, request, sink, llm, spawner, None)  # type: ignore[arg-type]
    return await coordinator.run(), sink
