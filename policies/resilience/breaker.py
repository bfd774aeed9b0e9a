"""Circuit breaker as a pure state machine with an injected clock.

A provider that keeps failing costs every caller a timeout; the breaker turns that into an immediate
``Reject`` until ``reset_timeout_s`` has passed, then lets a few probe calls through (half-open).
The state is a frozen value and ``now`` is a plain float, so every transition is testable without
sleeps and the owning actor just stores the returned state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

Status = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class BreakerConfig:
    failure_threshold: int
    reset_timeout_s: float
    half_open_max_calls: int


@dataclass(frozen=True)
class BreakerState:
    status: Status
    failures: int
    opened_at: float | None
    half_open_in_flight: int

    @classmethod
    def initial(cls) -> BreakerState:
        return cls(status="closed", failures=0, opened_at=None, half_open_in_flight=0)


@dataclass(frozen=True)
class Allow:
    """The call may go ahead; report its outcome with ``on_success`` / ``on_failure``."""


@dataclass(frozen=True)
class Reject:
    """The call must not be made; try again in ``retry_in_s`` seconds."""

    retry_in_s: float


Decision = Allow | Reject


def _remaining(state: BreakerState, cfg: BreakerConfig, now: float) -> float:
    opened = state.opened_at if state.opened_at is not None else now
    return max(0.0, opened + cfg.reset_timeout_s - now)


def before_call(
    state: BreakerState, cfg: BreakerConfig, now: float
) -> tuple[BreakerState, Decision]:
    """Decide whether a call may start; an admitted half-open probe is counted as in flight.

    In ``half_open`` the state's ``opened_at`` is when the breaker went half-open; probes still
    unanswered a full ``reset_timeout_s`` later are presumed lost (a cancelled caller never reports)
    so the breaker cannot stay stuck refusing everything.
    """
    if state.status == "closed":
        return state, Allow()
    if state.status == "open":
        remaining = _remaining(state, cfg, now)
        if remaining > 0:
            return state, Reject(retry_in_s=remaining)
        state = replace(state, status="half_open", opened_at=now, half_open_in_flight=0)
    if state.half_open_in_flight >= cfg.half_open_max_calls:
        remaining = _remaining(state, cfg, now)
        if remaining > 0:
            return state, Reject(retry_in_s=remaining)
        state = replace(state, opened_at=now, half_open_in_flight=0)
    return replace(state, half_open_in_flight=state.half_open_in_flight + 1), Allow()


def on_success(state: BreakerState, cfg: BreakerConfig, now: float) -> BreakerState:
    """Any success closes the breaker and clears the failure count."""
    del cfg, now
    if state.status == "open":
        # A call admitted before the breaker opened finished late: it proves nothing about now.
        return state
    return BreakerState.initial()


def on_failure(state: BreakerState, cfg: BreakerConfig, now: float) -> BreakerState:
    """Count consecutive failures; open at the threshold; a failed probe re-opens at once."""
    if state.status == "half_open":
        return BreakerState(
            status="open", failures=state.failures + 1, opened_at=now, half_open_in_flight=0
        )
    if state.status == "open":
        return replace(state, failures=state.failures + 1)
    failures = state.failures + 1
    if failures >= cfg.failure_threshold:
        return BreakerState(status="open", failures=failures, opened_at=now, half_open_in_flight=0)
    return replace(state, failures=failures)


def on_cancel(state: BreakerState, cfg: BreakerConfig, now: float) -> BreakerState:
    """An admitted call ended without a verdict (cancelled): free its half-open slot."""
    del cfg, now
    if state.status == "half_open" and state.half_open_in_flight > 0:
        return replace(state, half_open_in_flight=state.half_open_in_flight - 1)
    return state


# ---------------------------------------------------------------- sharing across processes
# Every crew process keeps its own breaker states; the crew ledger keeps a board of the tiers
# some process found failing (key -> when, on the ledger's clock, it may be tried again). A
# process posts its own openings and closings, and learns the others' from the ledger's replies
# as seconds still open, so no two processes' clocks need to agree.


def open_for(state: BreakerState, cfg: BreakerConfig, now: float) -> float:
    """Seconds this breaker still refuses calls (0 when it does not)."""
    return _remaining(state, cfg, now) if state.status == "open" else 0.0


def adopt(state: BreakerState, open_s: float, cfg: BreakerConfig, now: float) -> BreakerState:
    """Another process opened this breaker for ``open_s`` more seconds: refuse here too, for as
    long (a longer opening of our own stays). Then it goes half-open here as everywhere."""
    if open_s <= 0 or open_for(state, cfg, now) >= open_s:
        return state
    return BreakerState(
        status="open",
        failures=max(state.failures, cfg.failure_threshold),
        opened_at=now + open_s - cfg.reset_timeout_s,
        half_open_in_flight=0,
    )


def posted(board: Mapping[str, float], key: str, open_s: float, now: float) -> dict[str, float]:
    """The board once a process said ``key`` opened for ``open_s`` seconds (0: it closed)."""
    out = {k: until for k, until in board.items() if until > now}
    if open_s > 0:
        out[key] = max(out.get(key, now), now + open_s)
    else:
        out.pop(key, None)
    return out


def still_open(board: Mapping[str, float], now: float) -> dict[str, float]:
    """What the board tells a process: each open key and its seconds still open."""
    return {k: round(until - now, 3) for k, until in board.items() if until > now}
