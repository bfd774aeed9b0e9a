"""Injected provider latency, for benchmarks and tests that need slow providers without a network.

``simulate.latency_s`` in config makes every search, fetch and LLM call of a run take that long,
so the parallel benchmark can compare wall time with the critical path those delays imply.

``simulate.latency_mode`` says how the provider's own work relates to the delay:

- ``floor`` (default): a call takes ``max(latency, its own work)``. This models a remote
  provider, whose compute happens during its response time: the extractive "model" or the local
  BM25 index does its work, then the call waits out the rest of the delay.
- ``added``: the delay is slept first and the work done after it, so local compute adds to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Literal, TypeVar

from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.search.base import Fetcher, SearchProvider
from deepresearch.schemas import FetchedDoc, SearchHit

T = TypeVar("T")
LatencyMode = Literal["floor", "added"]


async def delayed(delay_s: float, mode: LatencyMode, call: Awaitable[T]) -> T:
    """``call``'s result, no sooner than ``delay_s`` after now (a failure too: a provider that
    fails takes its time as well). Cancellation is never held up."""
    loop = asyncio.get_running_loop()
    if mode == "added":
        await asyncio.sleep(delay_s)
        return await call
    deadline = loop.time() + delay_s
    try:
        result = await call
    except Exception:
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        raise
    await asyncio.sleep(max(0.0, deadline - loop.time()))
    return result


class SlowLLM:
    def __init__(self, inner: LLMProvider, delay_s: float, mode: LatencyMode = "floor") -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.mode: LatencyMode = mode
        self.name = inner.name
        self.model = inner.model

    async def complete(self, request: LLMRequest) -> LLMReply:
        return await delayed(self.delay_s, self.mode, self.inner.complete(request))

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


class SlowSearch:
    def __init__(self, inner: SearchProvider, delay_s: float, mode: LatencyMode = "floor") -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.mode: LatencyMode = mode
        self.name = inner.name

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        return await delayed(self.delay_s, self.mode, self.inner.search(query, limit))


class SlowFetcher:
    def __init__(self, inner: Fetcher, delay_s: float, mode: LatencyMode = "floor") -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.mode: LatencyMode = mode

    def handles(self, url: str) -> bool:
        return self.inner.handles(url)

    async def fetch(self, url: str) -> FetchedDoc:
        return await delayed(self.delay_s, self.mode, self.inner.fetch(url))
