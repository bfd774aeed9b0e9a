"""Retry delays: exponential backoff with full jitter, a cap, and the server's ``Retry-After``.

Full jitter (a uniform draw in ``[0, backoff)``) spreads parallel researchers that failed
together so they do not retry in lock-step. The random draw is passed in, keeping the policy pure
and exact in tests. A server's ``Retry-After`` wins over our own guess, but is capped so a hostile
or confused server cannot park a run for an hour. ``after_failure`` is the one retry rule of a
call loop (the LLM router's and the search gateway's, through ``providers.breakers``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import UTC
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int
    base_delay_s: float
    max_delay_s: float
    retry_after_cap_s: float


def backoff_ceiling(policy: RetryPolicy, attempt: int) -> float:
    """The upper bound of the jittered delay after ``attempt`` attempts (1-based)."""
    exponent = max(0, attempt - 1)
    if exponent > 1000:  # 2**exponent would overflow a float; the cap applies anyway
        return policy.max_delay_s
    return min(policy.max_delay_s, policy.base_delay_s * 2.0**exponent)


def next_delay(
    policy: RetryPolicy, attempt: int, retry_after_s: float | None, rand: float
) -> float | None:
    """Seconds to wait before the next attempt, or None when ``attempt`` attempts are all spent.

    ``attempt`` counts the attempts already made (1 after the first failure); ``rand`` is in [0, 1).
    """
    if attempt >= policy.attempts:
        return None
    if retry_after_s is not None and math.isfinite(retry_after_s):
        return max(0.0, min(retry_after_s, policy.retry_after_cap_s))
    draw = min(max(rand, 0.0), 1.0)
    return draw * backoff_ceiling(policy, attempt)


@dataclass(frozen=True)
class Attempts:
    """Where one call's retry loop stands: failed attempts, and 429 waits taken on their own."""

    failures: int = 0
    rate_limit_waits: int = 0


def after_failure(
    policy: RetryPolicy,
    attempts: Attempts,
    *,
    retryable: bool,
    rate_limited: bool,
    retry_after_s: float | None,
    rand: float,
    rate_limit_once: bool = False,
) -> tuple[Attempts, float | None]:
    """The loop's state after a failed attempt and the delay before the next one (None: give up).

    With ``rate_limit_once`` (a caller with another tier to fall to) a 429 gets one wait of its
    own, not counted against ``policy.attempts``, and a second 429 gives up; otherwise a 429 is a
    retryable failure like any other. A ``Retry-After`` wins over the jittered backoff.
    """
    if rate_limited and rate_limit_once:
        if attempts.rate_limit_waits:
            return attempts, None
        waited = replace(attempts, rate_limit_waits=attempts.rate_limit_waits + 1)
        return waited, next_delay(policy, 1, retry_after_s, rand)
    failed = replace(attempts, failures=attempts.failures + 1)
    if not retryable:
        return failed, None
    return failed, next_delay(policy, failed.failures, retry_after_s, rand)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds from ``now`` (epoch seconds) given a ``Retry-After`` header; None if unusable.

    The header is either delta-seconds or an HTTP-date; a date in the past means "now" (0).
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        return _parse_http_date(text, now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _parse_http_date(text: str, now: float) -> float | None:
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; "-0000" parses as naive
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - now)
