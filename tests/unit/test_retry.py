"""Retry delays: full jitter, the cap, attempts spent, Retry-After parsing."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from deepresearch.config.settings import RetrySettings
from deepresearch.policies.resilience.retry import RetryPolicy, next_delay, parse_retry_after
from deepresearch.providers.breakers import retry_policy

POLICY = RetryPolicy(attempts=4, base_delay_s=0.5, max_delay_s=3.0, retry_after_cap_s=10.0)


def test_from_settings() -> None:
    policy = retry_policy(
        RetrySettings(attempts=5, base_delay_s=1.0, max_delay_s=9.0, retry_after_cap_s=4.0)
    )
    assert policy == RetryPolicy(5, 1.0, 9.0, 4.0)


@pytest.mark.parametrize(
    ("attempt", "rand", "expected"),
    [
        (1, 0.5, 0.25),  # 0.5 * 0.5
        (2, 0.5, 0.5),  # 0.5 * 1.0
        (3, 0.5, 1.0),  # 0.5 * 2.0
        (1, 0.0, 0.0),
        (3, 0.999, 0.999 * 2.0),
    ],
)
def test_full_jitter(attempt: int, rand: float, expected: float) -> None:
    assert next_delay(POLICY, attempt, None, rand) == pytest.approx(expected)


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(attempts=100, base_delay_s=0.5, max_delay_s=3.0, retry_after_cap_s=1.0)
    assert next_delay(policy, 50, None, 0.5) == pytest.approx(1.5)
    assert next_delay(policy, 99, None, 0.9999) == pytest.approx(3.0 * 0.9999)


def test_none_when_attempts_spent() -> None:
    assert next_delay(POLICY, 3, None, 0.5) is not None
    assert next_delay(POLICY, 4, None, 0.5) is None
    assert next_delay(POLICY, 5, 1.0, 0.5) is None
    single = RetryPolicy(attempts=1, base_delay_s=1.0, max_delay_s=1.0, retry_after_cap_s=1.0)
    assert next_delay(single, 1, None, 0.0) is None


def test_retry_after_wins_and_is_capped() -> None:
    assert next_delay(POLICY, 1, 7.0, 0.9) == 7.0
    assert next_delay(POLICY, 1, 3600.0, 0.9) == 10.0
    assert next_delay(POLICY, 1, -5.0, 0.9) == 0.0
    assert next_delay(POLICY, 1, 0.0, 0.9) == 0.0


def test_parse_delta_seconds() -> None:
    assert parse_retry_after("120", 0.0) == 120.0
    assert parse_retry_after("  3 ", 0.0) == 3.0
    assert parse_retry_after("-4", 0.0) == 0.0


def test_parse_http_date() -> None:
    when = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    header = format_datetime(when, usegmt=True)
    now = when.timestamp() - 30.0
    assert parse_retry_after(header, now) == pytest.approx(30.0)
    assert parse_retry_after(header, when.timestamp() + 100.0) == 0.0  # in the past


@pytest.mark.parametrize("value", [None, "", "soon", "Mon, 99 Foo 2025", "nan", "inf"])
def test_parse_garbage(value: str | None) -> None:
    assert parse_retry_after(value, 0.0) is None
