"""Injected provider latency, for benchmarks and tests that need slow providers without a network.

``simulate.latency_s`` in config wraps every search, fetch and LLM call of a run in a fixed delay,
so the parallel benchmark can compare wall time with the critical path those delays imply.
"""

from __future__ import annotations

import asyncio

from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.search.base import Fetcher, SearchProvider
from deepresearch.schemas import FetchedDoc, LLMReply, LLMRequest, SearchHit


class SlowLLM:
    def __init__(self, inner: LLMProvider, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.name = inner.name
        self.model = inner.model

    async def complete(self, request: LLMRequest) -> LLMReply:
        await asyncio.sleep(self.delay_s)
        return await self.inner.complete(request)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


class SlowSearch:
    def __init__(self, inner: SearchProvider, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.name = inner.name

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        await asyncio.sleep(self.delay_s)
        return await self.inner.search(query, limit)


class SlowFetcher:
    def __init__(self, inner: Fetcher, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s

    def handles(self, url: str) -> bool:
        return self.inner.handles(url)

    async def fetch(self, url: str) -> FetchedDoc:
        await asyncio.sleep(self.delay_s)
        return await self.inner.fetch(url)
