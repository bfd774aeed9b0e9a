"""An ``LLMProvider`` that tries an ordered chain of providers (tiers) per role.

Each tier has its own circuit breaker, so a provider that keeps failing is skipped at once
instead of costing every call a timeout. A 429 waits for ``Retry-After`` (capped) once, then
falls to the next tier; other retryable errors retry per the ``RetryPolicy`` first. With
``extractive`` as the last tier a run degrades instead of dying. The reply's ``provider`` names
the tier that answered, so callers can report which tier served each role. The breaker-and-retry
loop is ``providers.breakers`` (shared with the search gateway).

The run-wide ledger plugs in through ``CallHook``: ``before_call`` may wait (rate limits) or
raise ``BudgetExceeded`` (cost cap); ``after_call`` sees every successful reply with its usage.
Breaker rules are the pure ``policies.breaker``; clock, sleep and randomness are injected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from deepresearch.errors import BudgetExceeded, CircuitOpen, LLMUnavailable, ProviderError
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies.resilience import breaker
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.breakers import Breakers
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import Role

Notify = Callable[[str, dict[str, str | int | float | bool | None]], Awaitable[None]]


class CallHook(Protocol):
    """What a run-wide ledger implements to see (and gate) every model call the router makes."""

    async def before_call(
        self, role: Role, provider: str, model: str, input_tokens: int
    ) -> Mapping[str, float] | None:
        """Called before each attempt on a tier; may wait, or raise ``BudgetExceeded``. May
        return the tiers other processes found failing (tier key -> seconds still open)."""
        ...

    async def after_call(self, role: Role, reply: LLMReply) -> None:
        """Called once per successful attempt with the reply (tokens, provider, model)."""
        ...


@runtime_checkable
class BreakerBoard(Protocol):
    """A hook that also shares breakers between processes: it is told of each tier's opening
    (seconds open) and closing (0), without waiting, and ``before_call`` returns the others'."""

    def breaker_changed(self, key: str, open_s: float) -> None: ...


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
        breaker_states: dict[str, breaker.BreakerState] | None = None,
    ) -> None:
        """``breaker_states``: one dict shared by the routers of every run a crew process serves,
        so a tier one run found failing (a 429, an outage) is skipped by the others too."""
        if not default:
            raise ValueError("the router needs at least one tier")
        self._default = list(default)
        self._roles = {role: list(chain) for role, chain in (roles or {}).items() if chain}
        self._breakers = Breakers(
            breaker_config,
            retry_policy,
            clock=clock,
            sleep=sleep,
            rand=rand,
            rate_limit_once=True,
            states=breaker_states,
            publish=hook.breaker_changed if isinstance(hook, BreakerBoard) else None,
        )
        self._hook = hook
        self._notify = notify
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
        return self._breakers.status()

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

        async def gate() -> None:
            if self._hook is not None:
                tokens = provider.count_tokens("".join(m.content for m in request.messages))
                crew = await self._hook.before_call(
                    request.role, provider.name, provider.model, tokens
                )
                if crew:  # learnt with the reply the call waits for anyway: no extra trip
                    self._breakers.learn(crew)
                    self._breakers.refuse_if_open(key)

        async def retrying(_failures: int, delay: float, exc: ProviderError) -> None:
            await self._emit(
                "llm_retry",
                role=request.role,
                tier=key,
                delay_s=round(delay, 3),
                error=exc.reason[:200],
            )

        async def opened() -> None:
            await self._emit("llm_breaker_open", tier=key)

        reply = await self._breakers.call(
            key, lambda: provider.complete(request), before=gate, on_retry=retrying, on_open=opened
        )
        if self._hook is not None:
            await self._hook.after_call(request.role, reply)
        return reply

    async def _emit(self, kind: str, **payload: str | int | float | bool | None) -> None:
        if self._notify is not None:
            await self._notify(kind, dict(payload))


__all__ = ["BreakerBoard", "CallHook", "Notify", "Router", "tier_key"]
