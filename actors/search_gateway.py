"""The SearchGateway (a plain class; the crew's ``CrewGateway`` actor holds one per run): every
search goes through here.

One place holds each provider's circuit breaker, retry policy and rate limit for the whole run, so
a provider that keeps failing is skipped by every researcher at once instead of each one
rediscovering it, and a rate limit is shared by every researcher. The breaker, retry and merge
rules are pure (``policies.breaker``, ``policies.retry``, ``policies.merge``); the loop that
performs them is ``providers.breakers`` (shared with the LLM router), with an injected clock,
sleep and random source.

A chain is a fallback chain (the first provider that answers wins), except when it mixes sources
on this machine (``local``, ``grep``) with web providers: then every healthy provider is asked and
the lists are merged, because the corpus and the web answer different parts of a question.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from aiolimiter import AsyncLimiter

from deepresearch.errors import CircuitOpen, DeepResearchError, ProviderError, SearchUnavailable
from deepresearch.per_run.event_log import EventSink
from deepresearch.policies.resilience import breaker
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.policies.search.merge import merge_hits
from deepresearch.policies.urls import hit_url_problem
from deepresearch.providers.breakers import Breakers
from deepresearch.providers.search.base import SearchProvider
from deepresearch.schemas import SearchHit, SearchResult

ProviderFactory = Callable[[], Awaitable[Sequence[SearchProvider]]]


@dataclass
class SharedLimits:
    """Breaker states and rate limiters by provider name, shared by the gateways of every run the
    crew serves: one provider's failures (a 429, an outage) inform every run at once."""

    breakers: dict[str, breaker.BreakerState] = field(default_factory=dict)
    limiters: dict[str, AsyncLimiter] = field(default_factory=dict)


OFFLINE_PROVIDERS = frozenset({"local", "grep"})  # sources that never leave this machine


def merges(names: Sequence[str]) -> bool:
    """Whether a chain is searched as one merged pool (offline and web mixed) or as a fallback."""
    offline = [n for n in names if n in OFFLINE_PROVIDERS]
    return bool(offline) and len(offline) < len(names)


def partial_failures(provider: SearchProvider) -> tuple[str, ...]:
    """What a fan-out provider (``security``) could not reach on its last call, through wrappers."""
    current: object = provider
    while current is not None:
        failures = getattr(current, "last_failures", None)
        if failures:
            return tuple(str(f) for f in failures)
        current = getattr(current, "inner", None)
    return ()


class SearchGateway:
    """``providers`` is the chain, or an async factory that builds it on the first search (so
    HTTP clients and indexes are made inside the actor's running loop)."""

    def __init__(
        self,
        providers: Sequence[SearchProvider] | ProviderFactory,
        breaker_config: breaker.BreakerConfig,
        retry_policy: RetryPolicy,
        sink: EventSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] | None = None,
        *,
        rate_limits: Mapping[str, float] | None = None,
        rate_period_s: float = 60.0,
        shared: SharedLimits | None = None,
    ) -> None:
        self._factory: ProviderFactory | None = None
        self._providers: list[SearchProvider] = []
        if callable(providers):
            self._factory = providers
        elif not providers:
            raise ValueError("the gateway needs at least one search provider")
        else:
            self._providers = list(providers)
        shared = shared or SharedLimits()  # breakers shared by every run's gateway
        self._breakers = Breakers(
            breaker_config,
            retry_policy,
            clock=clock,
            sleep=sleep,
            rand=rand,
            states=shared.breakers,
        )
        self._breakers.ensure(p.name for p in self._providers)
        self._sink = sink
        self._calls = 0
        self._rates = dict(rate_limits or {})
        self._rate_period_s = rate_period_s
        self._limiters = shared.limiters
        self._building = asyncio.Lock()

    async def _emit(self, type: str, **payload: str | int | float | bool | None) -> None:
        if self._sink is not None:
            await self._sink.emit(type, dict(payload))

    async def _chain(self) -> list[SearchProvider]:
        if self._providers or self._factory is None:
            return self._providers
        async with self._building:
            if not self._providers:
                try:
                    built = list(await self._factory())
                except DeepResearchError as exc:  # e.g. an index that cannot be opened
                    raise SearchUnavailable((), f"cannot build search providers: {exc}") from exc
                if not built:
                    raise SearchUnavailable((), "no search provider configured")
                self._breakers.ensure(p.name for p in built)
                self._providers = built
        return self._providers

    async def search(self, query: str, limit: int) -> SearchResult:
        """Hits for ``query``: merged from every healthy provider when the chain mixes offline
        and web sources, otherwise from the first provider of the chain that answers."""
        chain = await self._chain()
        if merges([p.name for p in chain]):
            return await self._search_merged(chain, query, limit)
        errors: list[str] = []
        for provider in chain:
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
                query=query,
                hits=tuple(merge_hits([hits], limit)),
                provider=provider.name,
                errors=tuple(errors),
            )
        raise SearchUnavailable(tuple(p.name for p in chain), "; ".join(errors))

    async def _search_merged(
        self, chain: Sequence[SearchProvider], query: str, limit: int
    ) -> SearchResult:
        outcomes = await asyncio.gather(
            *(self._call(p, query, limit) for p in chain), return_exceptions=True
        )
        lists: list[list[SearchHit]] = []
        answered: list[str] = []
        errors: list[str] = []
        for provider, outcome in zip(chain, outcomes, strict=True):
            if isinstance(outcome, CircuitOpen):
                errors.append(str(outcome))
            elif isinstance(outcome, ProviderError):
                errors.append(str(outcome))
                await self._emit("search_fallback", provider=provider.name, error=outcome.reason)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                lists.append(outcome)  # chain order: ties go to the earlier provider
                answered.append(provider.name)
        if not answered:
            raise SearchUnavailable(tuple(p.name for p in chain), "; ".join(errors))
        return SearchResult(
            query=query,
            hits=tuple(merge_hits(lists, limit)),
            provider="+".join(answered),
            errors=tuple(errors),
        )

    async def _throttle(self, name: str) -> None:
        """Wait for the provider's rate limit (a leaky bucket shared by every researcher)."""
        per_period = self._rates.get(name)
        if per_period is None:
            return
        limiter = self._limiters.get(name)
        if limiter is None:
            limiter = self._limiters[name] = AsyncLimiter(per_period, self._rate_period_s)
        if not limiter.has_capacity():
            await self._emit("search_throttled", provider=name)
        await limiter.acquire()

    async def _call(self, provider: SearchProvider, query: str, limit: int) -> list[SearchHit]:
        name = provider.name

        async def gate() -> None:
            await self._throttle(name)
            self._calls += 1

        async def retrying(attempt: int, delay: float, _exc: ProviderError) -> None:
            await self._emit(
                "search_retry", provider=name, attempt=attempt, delay_s=round(delay, 3)
            )

        async def opened() -> None:
            await self._emit("breaker_open", provider=name)

        hits = await self._breakers.call(
            name,
            lambda: provider.search(query, limit),
            before=gate,
            on_retry=retrying,
            on_open=opened,
        )
        failures = partial_failures(provider)
        if failures:
            await self._emit("search_partial", provider=name, failures="; ".join(failures))
        return await self._usable(name, hits)

    async def _usable(self, name: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """The hits whose URL parses safely: a malformed one (``http://a..b/``) is skipped here,
        once for every researcher, and logged, instead of failing whoever would fetch it."""
        kept: list[SearchHit] = []
        for hit in hits:
            problem = hit_url_problem(hit.url)
            if problem is None:
                kept.append(hit)
            else:
                await self._emit("hit_skipped", provider=name, url=hit.url[:300], reason=problem)
        return kept

    async def calls(self) -> int:
        return self._calls
