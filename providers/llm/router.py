"""An ``LLMProvider`` that tries an ordered chain of providers (tiers) per role.

Each tier has its own circuit breaker, so a provider that keeps failing is skipped at once
instead of costing every call a timeout. A 429 waits for ``Retry-After`` (capped) once, then
falls to the next tier; other retryable errors retry per the ``RetryPolicy`` first. A structured
call (``complete_structured``) also falls through on a reply still invalid after one repair. With
``extractive`` as the last tier (the default behind a model) a run degrades instead of dying, and
each fallback is told (``notify``) and noted on the reply that answered (``LLMReply.fell_back``);
a call still in flight says so every ``heartbeat_s`` (``llm_waiting``). The reply's ``provider``
names the tier that answered, so callers can report which tier served each role. The breaker-and-retry
loop is ``providers.breakers`` (shared with the search gateway).

The run-wide ledger plugs in through ``CallHook``: ``before_call`` may wait (rate limits) or
raise ``BudgetExceeded`` (cost cap); ``after_call`` sees every successful reply with its usage.
Breaker rules are the pure ``policies.breaker``; clock, sleep and randomness are injected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, JsonValue

from deepresearch.errors import BudgetExceeded, CircuitOpen, LLMUnavailable, ProviderError
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies.resilience import breaker
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.breakers import Breakers
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import Outcome, complete_with_repair
from deepresearch.schemas import Role

T = TypeVar("T", bound=BaseModel)
HEARTBEAT_S = 10.0  # a call in flight says so this often (the progress line shows it)
Notify = Callable[[str, dict[str, JsonValue]], Awaitable[None]]


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
        endpoints: Mapping[str, str] | None = None,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        """``breaker_states``: one dict shared by the routers of every run a crew process serves,
        so a tier one run found failing (a 429, an outage) is skipped by the others too.
        ``endpoints``: each tier's server (tier key -> base URL), part of its breaker's key, so
        a server found down does not close off another run's working one of the same name.
        ``heartbeat_s``: how often a call still in flight says so (``llm_waiting``)."""
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
        self._heartbeat_s = heartbeat_s
        self._endpoints = dict(endpoints or {})
        self._last_failure: dict[str, str] = {}  # tier -> its last error (what opened a breaker)
        self.answered: dict[Role, list[str]] = {}
        self.model = self._default[0].model

    def chain(self, role: Role) -> list[LLMProvider]:
        return self._roles.get(role, self._default)

    def tiers(self) -> dict[str, list[str]]:
        """Tier keys per role (``"default"`` for roles without their own chain), for display."""
        out = {"default": [tier_key(p) for p in self._default]}
        out.update({role: [tier_key(p) for p in chain] for role, chain in self._roles.items()})
        return out

    def count_tokens(self, text: str) -> int:
        return self._default[0].count_tokens(text)

    async def complete(self, request: LLMRequest) -> LLMReply:
        """The first tier's reply that arrives (transport errors and open breakers fall through)."""
        chain = self.chain(request.role)
        failures: list[str] = []
        over_budget: BudgetExceeded | None = None
        for index, provider in enumerate(chain):
            try:
                reply = await self.call_tier(provider, request)
            except (CircuitOpen, ProviderError, BudgetExceeded) as exc:
                over_budget = exc if isinstance(exc, BudgetExceeded) else over_budget
                failures.append(
                    await self._fall(request.role, chain, index, self._why(provider, exc))
                )
                continue
            return self._answered(request.role, reply, failures)
        if over_budget is not None:
            raise over_budget
        raise LLMUnavailable(request.role, tuple(tier_key(p) for p in chain), "; ".join(failures))

    async def complete_structured(self, request: LLMRequest, output: type[T]) -> Outcome[T]:
        """A validated reply: a tier whose reply is still invalid after one repair falls to the
        next tier, as a transport error does, so a weak model costs a step, not the run. Every
        reply is returned, the invalid ones included: each was a call and is counted."""
        chain = self.chain(request.role)
        failures: list[str] = []
        replies: list[LLMReply] = []
        over_budget: BudgetExceeded | None = None
        reason = excerpt = ""
        transport = False
        for index, provider in enumerate(chain):
            tier = _Tier(self, provider)
            try:
                result, _, reason, excerpt = await complete_with_repair(tier, request, output)
            except (CircuitOpen, ProviderError, BudgetExceeded) as exc:
                replies += tier.replies
                transport = True
                over_budget = exc if isinstance(exc, BudgetExceeded) else over_budget
                failures.append(
                    await self._fall(request.role, chain, index, self._why(provider, exc))
                )
                continue
            replies += tier.replies
            if result is not None:
                replies[-1] = self._answered(request.role, replies[-1], failures)
                return result, replies, "", ""
            await self._emit(
                "llm_invalid_reply", role=request.role, tier=tier_key(provider), why=reason[:200]
            )
            why = f"invalid reply after one repair ({reason})"
            failures.append(await self._fall(request.role, chain, index, why))
        if over_budget is not None:
            raise over_budget
        if transport:
            tiers = tuple(tier_key(p) for p in chain)
            raise LLMUnavailable(request.role, tiers, "; ".join(failures))
        return None, replies, reason, excerpt

    def _why(self, provider: LLMProvider, exc: Exception) -> str:
        """A tier's failure without the provider's name (the tier already names it); an open
        circuit with the failure that opened it, when this router saw it."""
        tier = tier_key(provider)
        if isinstance(exc, CircuitOpen):
            cause = self._last_failure.get(tier)
            after = f" after {cause}" if cause else ""
            return f"circuit open{after}, retry in {exc.retry_in_s:.1f}s"
        why = exc.reason if isinstance(exc, ProviderError) else str(exc)
        self._last_failure[tier] = why
        return why

    def _answered(self, role: Role, reply: LLMReply, failures: list[str]) -> LLMReply:
        """Record the tier that answered; a reply that came after a fallback carries it."""
        seen = self.answered.setdefault(role, [])
        if reply.provider not in seen:
            seen.append(reply.provider)
        if not failures:
            return reply
        to = f"{reply.provider}:{reply.model}"
        return reply.model_copy(update={"fell_back": fallback_note(role, failures[0], to)})

    async def _fall(self, role: Role, chain: Sequence[LLMProvider], index: int, why: str) -> str:
        """Say that ``chain[index]`` failed and the next tier (if any) is tried; the failure as
        "tier: why", for the error if no tier answers and the note if one does."""
        here = tier_key(chain[index])
        if index + 1 < len(chain):
            to = tier_key(chain[index + 1])
            await self._emit("llm_fallback", role=role, **{"from": here, "to": to}, why=why[:200])
        return f"{here}: {why}"

    def breaker_key(self, provider: LLMProvider) -> str:
        tier = tier_key(provider)
        endpoint = self._endpoints.get(tier)
        return f"{tier}@{endpoint}" if endpoint else tier

    async def call_tier(self, provider: LLMProvider, request: LLMRequest) -> LLMReply:
        key = self.breaker_key(provider)
        tier = tier_key(provider)

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
                tier=tier,
                delay_s=round(delay, 3),
                error=exc.reason[:200],
            )

        async def opened() -> None:
            await self._emit("llm_breaker_open", role=request.role, tier=tier)

        reply = await self._while_waiting(
            request.role,
            tier,
            self._breakers.call(
                key,
                lambda: provider.complete(request),
                before=gate,
                on_retry=retrying,
                on_open=opened,
            ),
        )
        if self._hook is not None:
            await self._hook.after_call(request.role, reply)
        return reply

    async def _while_waiting(self, role: Role, tier: str, call: Awaitable[LLMReply]) -> LLMReply:
        """``call``, saying every ``heartbeat_s`` that it is still waited for: a local model can
        take minutes per reply, and without this the progress line stands still meanwhile."""
        if self._notify is None:
            return await call
        task = asyncio.ensure_future(call)
        started = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self._heartbeat_s)
                if done:
                    return task.result()
                waited = round(time.monotonic() - started)
                await self._emit("llm_waiting", role=role, tier=tier, elapsed_s=waited)
        finally:
            if not task.done():
                task.cancel()

    async def _emit(self, kind: str, **payload: str | int | float | bool | None) -> None:
        if self._notify is not None:
            data: dict[str, JsonValue] = dict(payload)
            await self._notify(kind, data)


class _Tier:
    """One tier as an ``LLMProvider`` whose calls go through the router's breaker, retries and
    hook, keeping every reply (the repair call's too) so none goes uncounted."""

    def __init__(self, router: Router, provider: LLMProvider) -> None:
        self._router = router
        self._provider = provider
        self.name = provider.name
        self.model = provider.model
        self.replies: list[LLMReply] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        reply = await self._router.call_tier(self._provider, request)
        self.replies.append(reply)
        return reply

    def count_tokens(self, text: str) -> int:
        return self._provider.count_tokens(text)


def fallback_note(role: str, failure: str, to: str) -> str:
    """The report's line for a role that fell back, from the first failure ("tier: why") to the
    tier that answered."""
    source, _, why = failure.partition(": ")
    return f"The {role} fell back from {source} to {to}: {why}."


__all__ = ["BreakerBoard", "CallHook", "Notify", "Router", "fallback_note", "tier_key"]
