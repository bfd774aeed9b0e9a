"""Per-provider circuit breakers and the retry loop around one call, for LLM tiers and search.

The LLM router and the search gateway both guard every provider call the same way: ask the
breaker (``policies.breaker``) whether the call may start, wait for any rate limit or budget,
call, then record the verdict and, on a retryable failure, sleep for the delay ``policies.retry``
decides and try again. This is that loop, once; the rules stay pure in those two policies, and
the clock, sleep and random source are injected so tests run without waiting.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TypeVar

from deepresearch.config.settings import BreakerSettings, RetrySettings
from deepresearch.errors import CircuitOpen, ProviderError, RateLimited
from deepresearch.policies.resilience import breaker
from deepresearch.policies.resilience.retry import Attempts, RetryPolicy, after_failure

T = TypeVar("T")
OnRetry = Callable[[int, float, ProviderError], Awaitable[None]]  # failures so far, delay, error


def breaker_config(settings: BreakerSettings) -> breaker.BreakerConfig:
    """The breaker rule's parameters from a config section. Here, not in the pure policy, so the
    resilience rules import nothing of the package and sit on its lowest floor."""
    return breaker.BreakerConfig(
        failure_threshold=settings.failure_threshold,
        reset_timeout_s=settings.reset_timeout_s,
        half_open_max_calls=settings.half_open_max_calls,
    )


def retry_policy(settings: RetrySettings) -> RetryPolicy:
    """The retry rule's parameters from a config section (see ``breaker_config``)."""
    return RetryPolicy(
        attempts=settings.attempts,
        base_delay_s=settings.base_delay_s,
        max_delay_s=settings.max_delay_s,
        retry_after_cap_s=settings.retry_after_cap_s,
    )


class Breakers:
    """One breaker per key (a provider or an LLM tier) and the guarded call.

    ``rate_limit_once``: a 429 waits once on its own and then gives up, for a caller that has a
    next tier to fall to (``policies.retry.after_failure``). ``publish`` hears each opening (key,
    seconds open) and each closing (key, 0), for other processes to ``learn`` (the crew ledger).
    """

    def __init__(
        self,
        config: breaker.BreakerConfig,
        retry: RetryPolicy,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] | None = None,
        rate_limit_once: bool = False,
        states: dict[str, breaker.BreakerState] | None = None,
        publish: Callable[[str, float], None] | None = None,
    ) -> None:
        self.config = config
        self.retry = retry
        self._clock = clock
        self._sleep = sleep
        self._rand = rand or random.Random(0).random
        self._rate_limit_once = rate_limit_once
        # ``states`` may be shared: the search gateways of every run a crew serves pass one dict,
        # so one provider's failures inform them all.
        self.states: dict[str, breaker.BreakerState] = {} if states is None else states
        self._publish = publish

    def ensure(self, keys: Iterable[str]) -> None:
        """A closed breaker for each of ``keys`` that has none yet (shared states are kept)."""
        for key in keys:
            self.states.setdefault(key, breaker.BreakerState.initial())

    def status(self) -> dict[str, str]:
        return {key: state.status for key, state in self.states.items()}

    def state(self, key: str) -> breaker.BreakerState:
        return self.states.get(key) or breaker.BreakerState.initial()

    def learn(self, crew: Mapping[str, float]) -> None:
        """Take in the breakers other processes opened (key -> seconds still open)."""
        now = self._clock()
        for key, open_s in crew.items():
            self.states[key] = breaker.adopt(self.state(key), open_s, self.config, now)

    def refuse_if_open(self, key: str) -> None:
        """``CircuitOpen`` when ``key`` is open (e.g. just learnt from another process)."""
        wait = breaker.open_for(self.state(key), self.config, self._clock())
        if wait > 0:
            raise CircuitOpen(key, wait)

    async def call(
        self,
        key: str,
        attempt: Callable[[], Awaitable[T]],
        *,
        before: Callable[[], Awaitable[None]] | None = None,
        on_retry: OnRetry | None = None,
        on_open: Callable[[], Awaitable[None]] | None = None,
    ) -> T:
        """``attempt()`` under ``key``'s breaker, retried per the policy.

        Raises ``CircuitOpen`` when the breaker refuses, and the last ``ProviderError`` when the
        retries are spent or the error is not retryable. ``before`` runs after each admission
        (rate limits, budgets); it or the attempt ending without a verdict (cancelled, a bug)
        frees the admission instead of counting a failure.
        """
        tries = Attempts()
        while True:
            state, decision = breaker.before_call(self.state(key), self.config, self._clock())
            self.states[key] = state
            if isinstance(decision, breaker.Reject):
                raise CircuitOpen(key, decision.retry_in_s)
            try:
                if before is not None:
                    await before()
                result = await attempt()
            except ProviderError as exc:
                if self._failed(key) and on_open is not None:
                    await on_open()
                tries, delay = after_failure(
                    self.retry,
                    tries,
                    retryable=exc.retryable,
                    rate_limited=isinstance(exc, RateLimited),
                    retry_after_s=exc.retry_after_s,
                    rand=self._rand(),
                    rate_limit_once=self._rate_limit_once,
                )
                if delay is None:
                    raise
                if on_retry is not None:
                    await on_retry(tries.failures, delay, exc)
                await self._sleep(delay)
                continue
            except BaseException:
                self.states[key] = breaker.on_cancel(self.state(key), self.config, self._clock())
                raise
            was = self.state(key).status
            self.states[key] = breaker.on_success(self.state(key), self.config, self._clock())
            if was == "half_open" and self._publish is not None:
                self._publish(key, 0.0)  # it recovered: the others may try it again
            return result

    def _failed(self, key: str) -> bool:
        """Record a failure; True when it opened the breaker."""
        before = self.state(key).status
        self.states[key] = breaker.on_failure(self.state(key), self.config, self._clock())
        opened = before != "open" and self.states[key].status == "open"
        if opened and self._publish is not None:
            self._publish(key, self.config.reset_timeout_s)
        return opened


__all__ = ["Breakers", "OnRetry"]
