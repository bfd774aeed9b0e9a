"""The SearchGateway actor: every search goes through here.

One place holds each provider's circuit breaker and retry policy for the whole run, so a provider
that keeps failing is skipped by every researcher at once instead of each one rediscovering it.
The breaker and retry rules are pure (``policies.breaker``, ``policies.retry``); this shell only
performs their decisions, with an injected clock, sleep and random source.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence

from deepresearch.actors.event_log import EventSink
from deepresearch.errors import CircuitOpen, ProviderError, SearchUnavailable
from deepresearch.policies import breaker
from deepresearch.policies.retry import RetryPolicy, next_delay
from deepresearch.policies.urls import normalize_url
from deepresearch.providers.search.base import SearchProvider
from deepresearch.schemas import SearchHit, SearchResult


class SearchGateway:
    def __init__(
        self,
        providers: Sequence[SearchProvider],
        breaker_config: breaker.BreakerConfig,
        retry_policy: RetryPolicy,
        sink: EventSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] | None = None,
    ) -> None:
        if not providers:
            raise ValueError("the gateway needs at least one search provider")
        self._providers = list(providers)
        self._breaker_cfg = breaker_config
        self._retry = retry_policy
        self._states = {p.name: breaker.BreakerState.initial() for p in self._providers}
        self._sink = sink
        self._clock = clock
        self._sleep = sleep
        self._rand = rand or random.Random(0).random
        self._calls = 0

    async def _emit(self, type: str, **payload: str | int | float | bool | None) -> None:
        if self._sink is not None:
            await self._sink.emit(type, dict(payload))

    async def search(self, query: str, limit: int) -> SearchResult:
        """Hits from the first provider of the chain that answers; the others are fallbacks."""
        errors: list[str] = []
        for provider in self._providers:
            try:
                hits = await self._call(provider, query, limit)
            except CircuitOpen as exc:
                errors.append(str(exc))
                continue
            except ProviderError as exc:
                errors.append(str(exc))
                await self._emit("search_fallback", provider=provider.name, error=exc.reason)
                continue
            return SearchResult(
                query=query, hits=_dedupe(hits, limit), provider=provider.name, errors=tuple(errors)
            )
        raise SearchUnavailable(tuple(p.name for p in self._providers), "; ".join(errors))

    async def _call(self, provider: SearchProvider, query: str, limit: int) -> list[SearchHit]:
        attempt = 0
        while True:
            state, decision = breaker.before_call(
                self._states[provider.name], self._breaker_cfg, self._clock()
            )
            self._states[provider.name] = state
            if isinstance(decision, breaker.Reject):
                raise CircuitOpen(provider.name, decision.retry_in_s)
            attempt += 1
            self._calls += 1
            try:
                hits = await provider.search(query, limit)
            except ProviderError as exc:
                await self._record_failure(provider.name)
                delay = (
                    next_delay(self._retry, attempt, exc.retry_after_s, self._rand())
                    if exc.retryable
                    else None
                )
                if delay is None:
                    raise
                await self._emit(
                    "search_retry", provider=provider.name, attempt=attempt, delay_s=round(delay, 3)
                )
                await self._sleep(delay)
                continue
            self._states[provider.name] = breaker.on_success(
                self._states[provider.name], self._breaker_cfg, self._clock()
            )
            return hits

    async def _record_failure(self, name: str) -> None:
        before = self._states[name].status
        self._states[name] = breaker.on_failure(
            self._states[name], self._breaker_cfg, self._clock()
        )
        if before != "open" and self._states[name].status == "open":
            await self._emit("breaker_open", provider=name)

    async def breaker_status(self) -> dict[str, str]:
        return {name: state.status for name, state in self._states.items()}

    async def calls(self) -> int:
        return self._calls


def _dedupe(hits: Sequence[SearchHit], limit: int) -> tuple[SearchHit, ...]:
    seen: set[str] = set()
    out: list[SearchHit] = []
    for hit in sorted(hits, key=lambda h: h.rank):
        key = normalize_url(hit.url)
        if key in seen:
            continue
        seen.add(key)
        out.append(hit.model_copy(update={"url": key, "rank": len(out) + 1}))
        if len(out) >= limit:
            break
    return tuple(out)
