"""Web search providers against httpx.MockTransport and the loopback SearXNG fake (no internet)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.providers.search.arxiv import ArxivSearch, arxiv_query
from deepresearch.providers.search.duckduckgo import DuckDuckGoSearch
from deepresearch.providers.search.stackexchange import StackExchangeSearch
from deepresearch.providers.search.web_engines import (
    BraveSearch,
    GoogleSearch,
    SearxngSearch,
    TavilySearch,
)
from deepresearch.providers.testing.searxng import FakeSearxng, result

KEY = "sk-test-SECRET-0123456789"
NOW = 1_700_000_000.0

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that records requests and answers with a scripted response."""

    def __init__(self, response: httpx.Response | Handler) -> None:
        self.response = response
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if callable(self.response):
            return self.response(request)
        return self.response

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


@pytest.fixture
async def mock() -> AsyncIterator[
    Callable[[httpx.Response | Handler], tuple[httpx.AsyncClient, Recorder]]
]:
    clients: list[httpx.AsyncClient] = []

    def make(response: httpx.Response | Handler) -> tuple[httpx.AsyncClient, Recorder]:
        recorder = Recorder(response)
        client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
        clients.append(client)
        return client, recorder

    yield make
    for client in clients:
        await client.aclose()


def build(name: str, client: httpx.AsyncClient) -> Any:
    """Each key-bearing provider, pointed at a fake base URL, with a fixed clock."""
    key = SecretStr(KEY)
    clock = lambda: NOW  # noqa: E731
    if name == "tavily":
        return TavilySearch(client, key, base_url="https://tavily.test", clock=clock)
    if name == "google":
        return GoogleSearch(client, key, "cx-1", base_url="https://google.test", clock=clock)
    if name == "brave":
        return BraveSearch(client, key, base_url="https://brave.test", clock=clock)
    if name == "stackexchange":
        return StackExchangeSearch(client, key, base_url="https://se.test", clock=clock)
    if name == "arxiv":
        return ArxivSearch(client, base_url="https://arxiv.test", clock=clock)
    return SearxngSearch(client, "https://searx.test/", clock=clock)


# ---------------------------------------------------------------- requests and parsing


async def test_tavily_request_and_parse(mock: Any) -> None:
    body = {"results": [{"url": "https://a.example/x", "title": "A", "content": "<b>alpha</b>"}]}
    client, rec = mock(httpx.Response(200, json=body))
    hits = await build("tavily", client).search("what is alpha", 5)
    req = rec.last
    assert req.method == "POST" and str(req.url) == "https://tavily.test/search"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    sent = json.loads(req.content)
    assert sent["query"] == "what is alpha" and sent["max_results"] == 5
    assert KEY not in req.content.decode()  # the key travels only in the header
    assert [(h.url, h.title, h.snippet, h.provider, h.rank) for h in hits] == [
        ("https://a.example/x", "A", "alpha", "tavily", 1)
    ]


async def test_google_request_and_parse(mock: Any) -> None:
    body = {
        "items": [
            {"link": "https://g.example/1", "title": "One", "snippet": "first &amp; best"},
            {"link": "https://g.example/2", "title": "Two", "snippet": "second"},
            {"link": "ftp://g.example/3", "title": "Not web"},
        ]
    }
    client, rec = mock(httpx.Response(200, json=body))
    hits = await build("google", client).search("q words", 25)
    params = rec.last.url.params
    assert rec.last.url.path == "/customsearch/v1"
    assert rec.last.headers["x-goog-api-key"] == KEY and "key" not in params
    assert KEY not in str(rec.last.url)
    assert params["cx"] == "cx-1" and params["q"] == "q words"
    assert params["num"] == "10"  # the API's maximum
    assert [h.rank for h in hits] == [1, 2]
    assert hits[0].snippet == "first & best"


async def test_brave_request_and_parse(mock: Any) -> None:
    body = {"web": {"results": [{"url": "https://b.example/", "title": "B", "description": "d"}]}}
    client, rec = mock(httpx.Response(200, json=body))
    hits = await build("brave", client).search("brave q", 3)
    assert rec.last.url.path == "/res/v1/web/search"
    assert rec.last.url.params["count"] == "3" and rec.last.url.params["q"] == "brave q"
    assert rec.last.headers["x-subscription-token"] == KEY
    assert hits[0].url == "https://b.example/" and hits[0].provider == "brave"


async def test_brave_without_web_section_is_empty(mock: Any) -> None:
    client, _ = mock(httpx.Response(200, json={"type": "search"}))
    assert await build("brave", client).search("nothing", 3) == []


async def test_stackexchange_request_and_parse(mock: Any) -> None:
    body = {
        "items": [
            {
                "link": "https://stackoverflow.com/q/1",
                "title": "How to &quot;x&quot;?",
                "body": "<p>Use <code>y</code>.</p>",
                "score": 12,
                "is_answered": True,
                "tags": ["python", "asyncio"],
            }
        ],
        "quota_remaining": 299,
    }
    client, rec = mock(httpx.Response(200, json=body))
    hits = await build("stackexchange", client).search("asyncio x", 4)
    params = rec.last.url.params
    assert rec.last.url.path == "/2.3/search/advanced"
    assert params["site"] == "stackoverflow" and params["pagesize"] == "4"
    assert params["key"] == KEY and params["filter"] == "withbody"
    assert hits[0].title == 'How to "x"?'
    assert hits[0].snippet.startswith("[12 votes; answered; tags: python, asyncio] Use y")


async def test_stackexchange_without_key_sends_none(mock: Any) -> None:
    client, rec = mock(httpx.Response(200, json={"items": []}))
    await StackExchangeSearch(client, None, base_url="https://se.test").search("q", 2)
    assert "key" not in rec.last.url.params


async def test_stackexchange_throttle_is_rate_limited(mock: Any) -> None:
    body = {
        "error_id": 502,
        "error_name": "throttle_violation",
        "error_message": f"too many requests from this IP, more requests available in 42 seconds {KEY}",
    }
    client, _ = mock(httpx.Response(400, json=body))
    with pytest.raises(RateLimited) as info:
        await build("stackexchange", client).search("q", 2)
    assert info.value.retry_after_s == 42.0


async def test_stackexchange_api_error_is_not_retryable_and_masks_key(mock: Any) -> None:
    body = {"error_id": 400, "error_name": "bad_parameter", "error_message": f"key {KEY} invalid"}
    client, _ = mock(httpx.Response(400, json=body))
    with pytest.raises(ProviderError) as info:
        await build("stackexchange", client).search("q", 2)
    assert not info.value.retryable
    assert "bad_parameter" in str(info.value) and KEY not in str(info.value)


ATOM = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <entry>
    <id>http://arxiv.org/abs/2101.00001v2</id>
    <published>2021-01-01T00:00:00Z</published>
    <title>Attention
      Is Enough</title>
    <summary>We show   that attention suffices.</summary>
    <author><name>A. One</name></author><author><name>B. Two</name></author>
    <link href="http://arxiv.org/abs/2101.00001v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2101.00001v2" rel="related"/>
  </entry>
</feed>"""


async def test_arxiv_request_and_parse(mock: Any) -> None:
    client, rec = mock(httpx.Response(200, text=ATOM))
    hits = await build("arxiv", client).search("what is attention in transformers", 3)
    params = rec.last.url.params
    assert rec.last.url.path == "/api/query"
    assert params["search_query"] == "all:attention AND all:transformers"
    assert params["max_results"] == "3"
    assert hits[0].url == "https://arxiv.org/abs/2101.00001v2"
    assert hits[0].title == "Attention Is Enough"
    assert hits[0].snippet == "A. One, B. Two (2021). We show that attention suffices."


def test_arxiv_ids_use_id_list() -> None:
    assert arxiv_query("see 2101.00001 and 1706.03762v5") == {"id_list": "2101.00001,1706.03762v5"}


async def test_arxiv_error_feed_and_bad_xml(mock: Any) -> None:
    error_feed = ATOM.replace(
        "http://arxiv.org/abs/2101.00001v2</id>", "http://arxiv.org/api/errors#x</id>"
    )
    client, _ = mock(httpx.Response(200, text=error_feed))
    with pytest.raises(ProviderError, match="query rejected") as info:
        await build("arxiv", client).search("x", 1)
    assert not info.value.retryable
    client, _ = mock(httpx.Response(200, text="<feed><entry>"))
    with pytest.raises(ProviderError, match="not a valid Atom feed"):
        await build("arxiv", client).search("x", 1)
    bomb = '<?xml version="1.0"?><!DOCTYPE f [<!ENTITY a "aaaa">]><feed>&a;</feed>'
    client, _ = mock(httpx.Response(200, text=bomb))
    with pytest.raises(ProviderError, match="refused"):
        await build("arxiv", client).search("x", 1)


# ---------------------------------------------------------------- failures, for every HTTP provider

HTTP_PROVIDERS = ["searxng", "tavily", "google", "brave", "stackexchange", "arxiv"]
KEYED = ["tavily", "google", "brave", "stackexchange"]  # the others hold no secret to leak


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
async def test_5xx_and_4xx_statuses(mock: Any, name: str) -> None:
    for status, retryable in ((502, True), (503, True), (400, False), (404, False)):
        client, _ = mock(httpx.Response(status, text="x"))
        with pytest.raises(ProviderError) as info:
            await build(name, client).search("q", 3)
        assert info.value.retryable is retryable, status


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
async def test_429_is_rate_limited_with_retry_after(mock: Any, name: str) -> None:
    client, _ = mock(httpx.Response(429, headers={"Retry-After": "17"}, text="slow down"))
    with pytest.raises(RateLimited) as info:
        await build(name, client).search("q", 3)
    assert info.value.retry_after_s == 17.0 and info.value.retryable
    assert info.value.provider == name


@pytest.mark.parametrize("name", KEYED)
async def test_500_is_retryable_and_never_shows_the_key(mock: Any, name: str) -> None:
    client, _ = mock(httpx.Response(500, text=f"internal error for key={KEY}"))
    with pytest.raises(ProviderError) as info:
        await build(name, client).search("q", 3)
    assert info.value.retryable and not isinstance(info.value, RateLimited)
    assert "HTTP 500" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value.args)


@pytest.mark.parametrize("name", KEYED)
async def test_401_is_not_retryable_and_never_shows_the_key(mock: Any, name: str) -> None:
    client, _ = mock(httpx.Response(401, json={"detail": f"bad key {KEY}"}))
    with pytest.raises(ProviderError) as info:
        await build(name, client).search("q", 3)
    assert not info.value.retryable
    assert KEY not in str(info.value)


@pytest.mark.parametrize("name", [n for n in HTTP_PROVIDERS if n != "arxiv"])
async def test_malformed_json_is_a_provider_error(mock: Any, name: str) -> None:
    client, _ = mock(httpx.Response(200, text="{not json"))
    with pytest.raises(ProviderError, match="not valid JSON") as info:
        await build(name, client).search("q", 3)
    assert not info.value.retryable


@pytest.mark.parametrize("name", ["searxng", "tavily", "google", "stackexchange"])
async def test_wrong_json_shape_is_a_provider_error(mock: Any, name: str) -> None:
    field = {"searxng": "results", "tavily": "results", "google": "items"}.get(name, "items")
    client, _ = mock(httpx.Response(200, json={field: "oops"}))
    with pytest.raises(ProviderError, match="unexpected JSON shape"):
        await build(name, client).search("q", 3)


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
async def test_timeouts_and_connection_errors_are_retryable(mock: Any, name: str) -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused {request.url}", request=request)

    for handler, text in ((timeout, "timed out"), (refused, "connection failed")):
        client, _ = mock(handler)
        with pytest.raises(ProviderError, match=text) as info:
            await build(name, client).search("q", 3)
        assert info.value.retryable and KEY not in str(info.value)


# ---------------------------------------------------------------- SearXNG over loopback


async def test_searxng_against_the_loopback_fake() -> None:
    results = [result("https://s.example/1", "One", "c1"), result("https://s.example/2", "Two")]
    async with FakeSearxng({"ray actors": results}) as fake, httpx.AsyncClient() as client:
        provider = SearxngSearch(client, fake.base_url)
        hits = await provider.search("ray actors", 1)
        assert [(h.url, h.rank, h.provider) for h in hits] == [
            ("https://s.example/1", 1, "searxng")
        ]
        assert fake.requests[-1] == {"q": "ray actors", "format": "json", "pageno": "1"}
        assert await provider.search("unknown", 5) == []

        fake.rate_limit_next("9")
        with pytest.raises(RateLimited) as info:
            await provider.search("ray actors", 3)
        assert info.value.retry_after_s == 9.0

        fake.fail_next(503)
        with pytest.raises(ProviderError) as err:
            await provider.search("ray actors", 3)
        assert err.value.retryable

        fake.malformed_next()
        with pytest.raises(ProviderError, match="not valid JSON"):
            await provider.search("ray actors", 3)
        assert len(await provider.search("ray actors", 3)) == 2  # the queue is used up


async def test_searxng_without_json_format_explains_403() -> None:
    async with FakeSearxng() as fake, httpx.AsyncClient() as client:
        fake.fail_next(403, body="Forbidden")
        with pytest.raises(ProviderError, match="format=json") as info:
            await SearxngSearch(client, fake.base_url).search("q", 3)
        assert not info.value.retryable


async def test_fake_latency_trips_the_client_timeout() -> None:
    async with FakeSearxng(latency_s=0.2) as fake, httpx.AsyncClient() as client:
        with pytest.raises(ProviderError, match="timed out") as info:
            await SearxngSearch(client, fake.base_url, timeout_s=0.05).search("q", 3)
        assert info.value.retryable


# ---------------------------------------------------------------- DuckDuckGo (ddgs injected)


async def test_duckduckgo_uses_the_injected_call() -> None:
    calls: list[tuple[str, int]] = []

    def fake(query: str, max_results: int) -> list[dict[str, Any]]:
        calls.append((query, max_results))
        return [
            {"href": "https://d.example/a", "title": "A", "body": "alpha"},
            {"href": "https://d.example/a", "title": "dup", "body": ""},
            {"title": "no url"},
            {"href": "https://d.example/b", "title": "B", "body": "beta"},
        ]

    hits = await DuckDuckGoSearch(fake).search("q", 5)
    assert calls == [("q", 5)]
    assert [(h.url, h.rank, h.provider) for h in hits] == [
        ("https://d.example/a", 1, "duckduckgo"),
        ("https://d.example/b", 2, "duckduckgo"),
    ]


async def test_duckduckgo_errors_are_mapped() -> None:
    class RatelimitException(Exception):
        pass

    class DDGSException(Exception):
        pass

    def raising(exc: Exception) -> Callable[[str, int], list[dict[str, Any]]]:
        def run(query: str, max_results: int) -> list[dict[str, Any]]:
            raise exc

        return run

    with pytest.raises(RateLimited):
        await DuckDuckGoSearch(raising(RatelimitException("202 Ratelimit"))).search("q", 3)
    assert await DuckDuckGoSearch(raising(DDGSException("No results found."))).search("q", 3) == []
    with pytest.raises(ProviderError) as info:
        await DuckDuckGoSearch(raising(DDGSException("boom"))).search("q", 3)
    assert info.value.retryable
