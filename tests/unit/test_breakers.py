"""The one breaker-and-retry loop (``providers.breakers``) the LLM router and search gateway share:
retry count, backoff and Retry-After, the 429-once mode, breaker open / half-open / closed, and
admissions freed when a call ends without a verdict. Fake clock, no sleeping."""

from __future__ import annotations

import asyncio

import pytest
from fake_clock import FakeClock

from deepresearch.errors import BudgetExceeded, CircuitOpen, ProviderError, RateLimited
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import Attempts, RetryPolicy, after_failure
from deepresearch.providers.breakers import Breakers

RETRY = RetryPolicy(attempts=3, base_delay_s=1.0, max_delay_s=4.0, retry_after_cap_s=10.0)
BREAKER = BreakerConfig(failure_threshold=3, reset_timeout_s=30.0, half_open_max_calls=1)


class Script:
    """An attempt that raises the scripted errors in turn, then answers "ok"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def make(clock: FakeClock, breaker: BreakerConfig = BREAKER, **kw: bool) -> Breakers:
    return Breakers(breaker, RETRY, clock=clock, sleep=clock.sleep, rand=lambda: 0.5, **kw)


def boom(retryable: bool = True, retry_after_s: float | None = None) -> ProviderError:
    return ProviderError("p", "boom", retryable, retry_after_s)


async def test_retryable_errors_retry_with_jittered_exponential_backoff_up_to_the_attempts() -> (
    None
):
    clock, retries = FakeClock(100.0), list[tuple[int, float]]()
    attempt = Script(boom(), boom(), boom())

    async def on_retry(failures: int, delay: float, _exc: ProviderError) -> None:
        retries.append((failures, delay))

    with pytest.raises(ProviderError):
        await make(clock, BreakerConfig(10, 30.0, 1)).call("p", attempt, on_retry=on_retry)
    assert attempt.calls == 3  # RETRY.attempts
    assert clock.slept == [0.5, 1.0]  # 0.5 x (1 s, 2 s): full jitter with rand 0.5
    assert retries == [(1, 0.5), (2, 1.0)]


async def test_retry_after_wins_capped_and_a_non_retryable_error_is_not_retried() -> None:
    clock = FakeClock(100.0)
    attempt = Script(boom(retry_after_s=60.0))
    assert await make(clock).call("p", attempt) == "ok"
    assert clock.slept == [10.0]  # the server's word, capped
    fatal = Script(boom(retryable=False))
    with pytest.raises(ProviderError):
        await make(clock).call("q", fatal)
    assert fatal.calls == 1 and clock.slept == [10.0]


async def test_429_once_mode_waits_once_outside_the_attempts_then_gives_up() -> None:
    clock = FakeClock(100.0)
    twice = Script(RateLimited("p", 3.0), RateLimited("p", 3.0))
    with pytest.raises(RateLimited):
        await make(clock, rate_limit_once=True).call("p", twice)
    assert twice.calls == 2 and clock.slept == [3.0]
    clock.slept.clear()  # without the mode a 429 is one more retryable failure
    counted = Script(RateLimited("p", 3.0), RateLimited("p", 3.0))
    assert await make(clock).call("p", counted) == "ok"
    assert clock.slept == [3.0, 3.0]


async def test_breaker_opens_at_the_threshold_then_half_open_probe_closes_it() -> None:
    clock, opened = FakeClock(100.0), list[str]()
    guard = make(clock, BreakerConfig(2, 30.0, 1))

    async def on_open() -> None:
        opened.append("p")

    fatal = Script(boom(retryable=False), boom(retryable=False))
    for _ in range(2):
        with pytest.raises(ProviderError):
            await guard.call("p", fatal, on_open=on_open)
    assert guard.status() == {"p": "open"} and opened == ["p"]
    skipped = Script()
    with pytest.raises(CircuitOpen):
        await guard.call("p", skipped)
    assert skipped.calls == 0  # refused without calling
    clock.now += 30.0
    probe = Script(boom(retryable=False))
    with pytest.raises(ProviderError):
        await guard.call("p", probe, on_open=on_open)  # a failed probe: open again
    assert guard.status() == {"p": "open"} and opened == ["p", "p"]
    clock.now += 30.0
    assert await guard.call("p", Script()) == "ok"
    assert guard.status() == {"p": "closed"}


async def test_a_call_ending_without_a_verdict_frees_its_half_open_slot() -> None:
    clock = FakeClock(100.0)
    guard = make(clock, BreakerConfig(1, 30.0, 1))
    with pytest.raises(ProviderError):
        await guard.call("p", Script(boom(retryable=False)))
    clock.now += 30.0

    async def over_budget() -> None:
        raise BudgetExceeded("usd", 1.0)

    with pytest.raises(BudgetExceeded):
        await guard.call("p", Script(), before=over_budget)
    with pytest.raises(asyncio.CancelledError):
        await guard.call("p", Script(asyncio.CancelledError()))
    assert guard.state("p").half_open_in_flight == 0 and guard.state("p").failures == 1
    assert await guard.call("p", Script()) == "ok"  # the slot was free for the next probe


def test_after_failure_is_the_pure_rule() -> None:
    tries, delay = after_failure(
        RETRY, Attempts(), retryable=True, rate_limited=False, retry_after_s=None, rand=0.5
    )
    assert (tries, delay) == (Attempts(failures=1), 0.5)
    tries, delay = after_failure(
        RETRY, Attempts(2), retryable=True, rate_limited=False, retry_after_s=None, rand=0.5
    )
    assert (tries, delay) == (Attempts(failures=3), None)  # attempts spent
    waited, delay = after_failure(
        RETRY,
        Attempts(2),
        retryable=True,
        rate_limited=True,
        retry_after_s=7.0,
        rand=0.5,
        rate_limit_once=True,
    )
    assert (waited, delay) == (Attempts(failures=2, rate_limit_waits=1), 7.0)
