"""General web search engines reached through their JSON APIs: SearXNG, Tavily, Google, Brave.

They differ only in where the key goes and where the results sit in the response, so each is a
few lines over ``transport``: one request through the shared client, errors mapped the same way,
hits ranked in the engine's order. Base URLs are constructor arguments so tests (and self-hosted
deployments) point them elsewhere.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import SecretStr

from deepresearch.errors import ProviderError
from deepresearch.providers.search.transport import (
    DEFAULT_TIMEOUT_S,
    Clock,
    dict_items,
    json_dict,
    ranked_hits,
    request,
    text_field,
)
from deepresearch.schemas import SearchHit


class _JsonApi:
    """Shared state of a JSON search API: the client, a base URL, an optional key, a timeout.
    An engine that needs a key subclasses it as it is, naming its ``DEFAULT_BASE_URL``."""

    name = ""
    MAX_RESULTS = 20
    DEFAULT_BASE_URL = ""  # the engine's public API; tests and self-hosted setups pass another

    def __init__(
        self,
        client: httpx.AsyncClient,
        api_key: SecretStr | None,
        *,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        self._client = client
        self._key = api_key
        self.base_url = (self.DEFAULT_BASE_URL if base_url is None else base_url).rstrip("/")
        self._timeout_s = timeout_s
        self._clock = clock

    def _secret(self) -> str:
        return self._key.get_secret_value() if self._key is not None else ""

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str | int] | None = None,
        headers: dict[str, str] | None = None,
        json_body: Any = None,
    ) -> dict[str, Any]:
        response = await request(
            self._client,
            self.name,
            method,
            self.base_url + path,
            params=params,
            headers={"Accept": "application/json", **(headers or {})},
            json_body=json_body,
            secrets=[self._secret()],
            timeout_s=self._timeout_s,
            clock=self._clock,
        )
        return json_dict(self.name, response)

    def _hits(
        self,
        value: object,
        what: str,
        limit: int,
        *,
        url: str = "url",
        snippet: str = "content",
    ) -> list[SearchHit]:
        """Ranked hits from the list ``value`` (named ``what`` in errors) of result objects."""
        items = dict_items(self.name, value, what)
        return ranked_hits(
            self.name,
            ((text_field(i, url), text_field(i, "title"), text_field(i, snippet)) for i in items),
            limit,
        )

    def _count(self, limit: int) -> int:
        """``limit`` clamped to what one request of the engine may ask for."""
        return max(1, min(limit, self.MAX_RESULTS))


class SearxngSearch(_JsonApi):
    """A SearXNG instance's ``/search?format=json`` (the instance must enable the json format)."""

    name = "searxng"

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        super().__init__(client, None, base_url=base_url, timeout_s=timeout_s, clock=clock)

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        try:
            data = await self._call(
                "GET", "/search", params={"q": query, "format": "json", "pageno": 1}
            )
        except ProviderError as exc:
            if exc.reason.startswith("HTTP 403"):
                raise ProviderError(
                    self.name, "HTTP 403: the instance does not allow format=json", False
                ) from None
            raise
        return self._hits(data.get("results"), "results", limit)


class TavilySearch(_JsonApi):
    """Tavily's ``POST /search`` with the key as a bearer token (never in the body or URL)."""

    name = "tavily"
    DEFAULT_BASE_URL = "https://api.tavily.com"

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        data = await self._call(
            "POST",
            "/search",
            headers={"Authorization": f"Bearer {self._secret()}"},
            json_body={
                "query": query,
                "max_results": self._count(limit),
                "search_depth": "basic",
            },
        )
        return self._hits(data.get("results"), "results", limit)


class GoogleSearch(_JsonApi):
    """Google Programmable Search (Custom Search JSON API): ``key`` + engine id ``cx``.

    The key goes in the ``X-goog-api-key`` header that Google's API front end accepts in place of
    the documented ``key`` query parameter, so it never appears in a URL (httpx logs, proxies).
    The API returns at most 10 results per request.
    """

    name = "google"
    MAX_RESULTS = 10
    DEFAULT_BASE_URL = "https://www.googleapis.com"

    def __init__(
        self,
        client: httpx.AsyncClient,
        api_key: SecretStr,
        engine_id: str,
        *,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        super().__init__(client, api_key, base_url=base_url, timeout_s=timeout_s, clock=clock)
        self._cx = engine_id

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        data = await self._call(
            "GET",
            "/customsearch/v1",
            params={"cx": self._cx, "q": query, "num": self._count(limit)},
            headers={"X-goog-api-key": self._secret()},
        )
        return self._hits(data.get("items"), "items", limit, url="link", snippet="snippet")


class BraveSearch(_JsonApi):
    """Brave Search API ``/res/v1/web/search`` with the ``X-Subscription-Token`` header."""

    name = "brave"
    DEFAULT_BASE_URL = "https://api.search.brave.com"

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        data = await self._call(
            "GET",
            "/res/v1/web/search",
            params={"q": query, "count": self._count(limit)},
            headers={"X-Subscription-Token": self._secret()},
        )
        web = data.get("web") or {}
        if not isinstance(web, dict):
            raise ProviderError(self.name, "unexpected JSON shape (web is not an object)", False)
        return self._hits(web.get("results"), "web.results", limit, snippet="description")
