"""Token buckets for run-wide rate limits (requests and tokens per minute), as pure functions.

A reservation may drive the balance negative: the caller then waits ``wait_s`` before sending,
so concurrent callers queue fairly in arrival order instead of all retrying at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Bucket:
    per_minute: float
    balance: float
    updated: float

    @classmethod
    def full(cls, per_minute: float, now: float) -> Bucket:
        return cls(per_minute, per_minute, now)


def reserve(bucket: Bucket, amount: float, now: float) -> tuple[Bucket, float]:
    """Take ``amount`` now; returns the new bucket and how long to wait before using it."""
    rate = bucket.per_minute / 60.0
    refilled = min(bucket.per_minute, bucket.balance + (now - bucket.updated) * rate)
    balance = refilled - min(amount, bucket.per_minute)  # one huge call cannot block forever
    wait = 0.0 if balance >= 0 else -balance / rate
    return replace(bucket, balance=balance, updated=now), wait
