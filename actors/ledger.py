"""The Ledger: LLM rate limits and one run's cost cap, and the crew's ledger actor over many runs.

Every router in every actor process calls ``before_call`` and ``after_call`` here (the router's
``CallHook``), so limits hold across all researchers and nodes instead of per-researcher guesses.
The crew's ``CrewLedger`` keeps one ``Ledger`` per run (its spending and cap, released when the
run ends) over one set of rate-limit buckets shared by every run: a provider's limit is the
cluster's, whichever run makes the call. It also keeps the crew's board of open model-tier
breakers: a process posts its tiers' openings (``breaker_changed``, without waiting) and learns
the others' from every ``before_call`` reply, the round trip each call makes anyway.
A call to a priced model is refused with ``BudgetExceeded`` once the cap is spent; the router then
falls to a free tier (e.g. ``extractive``) if the chain has one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from deepresearch.config.settings import LLMRateLimit, ModelPrice
from deepresearch.errors import BudgetExceeded
from deepresearch.llm_messages import LLMReply
from deepresearch.policies.resilience import breaker
from deepresearch.policies.resilience.ratelimit import Bucket, reserve
from deepresearch.providers.llm.pricing import find_price, reply_cost
from deepresearch.schemas import Role

if TYPE_CHECKING:
    from deepresearch.per_run.run_context import LedgerTerms


class Ledger:
    def __init__(
        self,
        rate_limits: Mapping[str, LLMRateLimit],
        max_cost_usd: float | None,
        prices: Mapping[str, ModelPrice],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        buckets: dict[tuple[str, str], Bucket] | None = None,  # shared with other runs' ledgers
    ) -> None:
        self._limits = dict(rate_limits)
        self._cap = max_cost_usd
        self._prices = dict(prices)
        self._clock = clock
        self._sleep = sleep
        self._buckets = {} if buckets is None else buckets
        self._spent = 0.0
        self._calls = 0
        self._waited = 0.0

    def _take(self, provider: str, kind: str, per_minute: int | None, amount: float) -> float:
        if not per_minute:
            return 0.0
        now = self._clock()
        key = (provider, kind)
        bucket = self._buckets.get(key) or Bucket.full(per_minute, now)
        self._buckets[key], wait = reserve(bucket, amount, now)
        return wait

    async def before_call(self, role: Role, provider: str, model: str, input_tokens: int) -> None:
        if self._cap is not None and self._spent >= self._cap and find_price(model, self._prices):
            raise BudgetExceeded("cost", self._cap)
        limit = self._limits.get(provider)
        if limit is None:
            return
        wait = max(
            self._take(provider, "requests", limit.requests_per_minute, 1),
            self._take(provider, "tokens", limit.tokens_per_minute, input_tokens),
        )
        if wait > 0:
            self._waited += wait
            await self._sleep(wait)

    async def after_call(self, role: Role, reply: LLMReply) -> None:
        self._calls += 1
        self._spent += reply_cost(reply, self._prices).usd

    async def totals(self) -> dict[str, float]:
        return {"spent_usd": round(self._spent, 6), "calls": self._calls, "waited_s": self._waited}


class CrewLedger:
    """The crew's ledger actor: per-run spending keyed by run id, rate limits shared by all."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self._runs: dict[str, Ledger] = {}
        self._board: dict[str, float] = {}  # tier key -> when its breaker may be tried again

    def _run(self, run_id: str, terms: LedgerTerms) -> Ledger:
        ledger = self._runs.get(run_id)
        if ledger is None:  # first call of the run (or after this actor was replaced)
            ledger = Ledger(
                terms.rate_limits,
                terms.max_cost_usd,
                terms.prices,
                clock=self._clock,
                buckets=self._buckets,
            )
            self._runs[run_id] = ledger
        return ledger

    async def before_call(
        self,
        run_id: str,
        terms: LedgerTerms,
        role: Role,
        provider: str,
        model: str,
        input_tokens: int,
    ) -> dict[str, float]:
        """Gate the call; answer with the tiers some process found failing (seconds open)."""
        await self._run(run_id, terms).before_call(role, provider, model, input_tokens)
        return breaker.still_open(self._board, self._clock())

    async def breaker_changed(self, key: str, open_s: float) -> None:
        self._board = breaker.posted(self._board, key, open_s, self._clock())

    async def after_call(
        self, run_id: str, terms: LedgerTerms, role: Role, reply: LLMReply
    ) -> None:
        await self._run(run_id, terms).after_call(role, reply)

    async def totals(self, run_id: str) -> dict[str, float]:
        ledger = self._runs.get(run_id)
        return await ledger.totals() if ledger is not None else {}

    async def release(self, run_id: str) -> None:
        self._runs.pop(run_id, None)

    async def held(self) -> list[str]:
        return sorted(self._runs)
