"""An ``LLMProvider`` that tries an ordered chain of providers (tiers) per role.

Each tier has its own circuit breaker, so a provider that keeps failing is skipped at once
instead of costing every call a timeout. A 429 waits for ``Retry-After`` (capped) once, then
falls to the next tier; other retryable errors retry per the ``RetryPolicy`` first. With
``extractive`` as the last tier a run degrades instead of dying. The reply's ``provider`` names
the tier that answered, so callers can report which tier served each role.

The run-wide ledger plugs in through ``CallHook``: ``before_call`` may wait (rate limits) or
raise ``BudgetExceeded`` (cost cap); ``after_call`` sees every successful reply with its usage.
Breaker rules are the pure ``policies.breaker``; clock, sleep and randomness are injected.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

from deepresearch.errors import (
    BudgetExceeded,
    CircuitOpen,
    LLMUnavailable,
    ProviderError,
    RateLimited,
)
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies import breaker
from deepresearch.policies.retry import RetryPolicy, next_delay
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import Role

Notify = Callable[[str, dict[str, str | int | float | bool | None]], Awaitable[None]]


class CallHook(Protocol):
    """What a run-wide ledger implements to see (and gate) every model call the router makes."""

    async def before_call(self, role: Role, provider: str, model: str, input_tokens: int) -> None:
        """Called before each attempt on a tier; may wait, or raise ``BudgetExceeded``."""
        ...

    async def after_call(self, role: Role, reply: LLMReply) -> None:
        """Called once per successful attempt with the reply (tokens, provider, model)."""
        ...


def tier_key(provider: LLMProvider) -> str:
    return f"{provider.name}:{provider.model}"


class Router:
    """``LLMProvider`` over per-role fallback chains; ``default`` serves roles without a chain."""

    name = "router"

    def __init__(
        self,
        default: Sequence[LLMProvider],
        breaker_config: breaker.BreakerConfig,
        retry_policy: RetryPolicy,
        *,
        roles: Mapping[Role, Sequence[LLMProvider]] | None = None,
        hook: CallHook | None = None,
        notify: Notify | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] | None = None,
    ) -> None:
        if not default:
            raise ValueError("the router needs at least one tier")
        self._default = list(default)
        self._roles = {role: list(chain) for role, chain in (roles or {}).items() if chain}
        self._breaker_cfg = breaker_config
        self._retry = retry_policy
        self._hook = hook
        self._notify = notify
        self._clock = clock
        self._sleep = sleep
        self._rand = rand or random.Random(0).random
        self._states: dict[str, breaker.BreakerState] = {}
        self.answered: dict[Role, list[str]] = {}
        self.model = self._default[0].model

    def chain(self, role: Role) -> list[LLMProvider]:
        return self._roles.get(role, self._default)

    def tiers(self) -> dict[str, list[str]]:
        """Tier keys per role (``"default"`` for roles without their own chain), for display."""
        out = {"default": [tier_key(p) for p in self._default]}
        out.update({role: [tier_key(p) for p in chain] for role, chain in self._roles.items()})
        return out

    def breaker_status(self) -> dict[str, str]:
        return {key: state.status for key, state in self._states.items()}

    def count_tokens(self, text: str) -> int:
        return self._default[0].count_tokens(text)

    async def complete(self, request: LLMRequest) -> LLMReply:
        chain = self.chain(request.role)
        errors: list[str] = []
        over_budget: BudgetExceeded | None = None
        for index, provider in enumerate(chain):
            try:
                reply = await self._try_tier(provider, request)
            except (CircuitOpen, ProviderError, BudgetExceeded) as exc:
                if isinstance(exc, BudgetExceeded):
                    over_budget = exc  # a later, free tier (extractive) may still answer
                errors.append(str(exc))
                if index + 1 < len(chain):
                    await self._emit(
                        "llm_fallback",
                        role=request.role,
                        tier=tier_key(provider),
                        next=tier_key(chain[index + 1]),
                        error=str(exc)[:200],
                    )
                continue
            seen = self.answered.setdefault(request.role, [])
            if reply.provider not in seen:
                seen.append(reply.provider)
            return reply
        if over_budget is not None:
            raise over_budget
        raise LLMUnavailable(request.role, tuple(tier_key(p) for p in chain), "; ".join(errors))

    async def _try_tier(self, provider: LLMProvider, request: LLMRequest) -> LLMReply:
        key = tier_key(provider)
        attempt = 0
        waited_for_rate_limit = False
        while True:
            state, decision = breaker.before_call(
                self._state(key), self._breaker_cfg, self._clock()
            )
            self._states[key] = state
            if isinstance(decision, breaker.Reject):
                raise CircuitOpen(key, decision.retry_in_s)
            if self._hook is not None:
                prompt = "".join(m.content for m in request.messages)
                tokens = provider.count_tokens(prompt)
                try:
                    await self._hook.before_call(
                        request.role, provider.name, provider.model, tokens
                    )
                except BaseException:
                    self._states[key] = breaker.on_cancel(
                        self._states[key], self._breaker_cfg, self._clock()
                    )
                    raise
            try:
                reply = await provider.complete(request)
            except ProviderError as exc:
                await self._record_failure(key)
                if isinstance(exc, RateLimited):
                    if waited_for_rate_limit:
                        raise
                    waited_for_rate_limit = True
                    delay = next_delay(self._retry, 1, exc.retry_after_s, self._rand())
                else:
                    attempt += 1
                    delay = (
                        next_delay(self._retry, attempt, None, self._rand())
                        if exc.retryable
                        else None
                    )
                if delay is None:
                    raise
                await self._emit(
                    "llm_retry",
                    role=request.role,
                    tier=key,
                    delay_s=round(delay, 3),
                    error=exc.reason[:200],
                )
                await self._sleep(delay)
                continue
            except BaseException:  # cancelled or a bug: no verdict on the provider
                self._states[key] = breaker.on_cancel(
                    self._states[key], self._breaker_cfg, self._clock()
                )
                raise
            self._states[key] = breaker.on_success(
                self._states[key], self._breaker_cfg, self._clock()
            )
            if self._hook is not None:
                await self._hook.after_call(request.role, reply)
            return reply

    def _state(self, key: str) -> breaker.BreakerState:
        return self._states.get(key) or breaker.BreakerState.initial()

    async def _record_failure(self, key: str) -> None:
        before = self._state(key).status
        self._states[key] = breaker.on_failure(self._state(key), self._breaker_cfg, self._clock())
        if before != "open" and self._states[key].status == "open":
            await self._emit("llm_breaker_open", tier=key)

    async def _emit(self, kind: str, **payload: str | int | float | bool | None) -> None:
        if self._notify is not None:
            await self._notify(kind, dict(payload))


__all__ = ["CallHook", "Notify", "Router", "tier_key"]
