"""Every breaker transition, driven by a fake clock (plain floats)."""

from __future__ import annotations

from deepresearch.config.settings import BreakerSettings
from deepresearch.policies.resilience.breaker import (
    Allow,
    BreakerConfig,
    BreakerState,
    Reject,
    adopt,
    before_call,
    on_cancel,
    on_failure,
    on_success,
    open_for,
    posted,
    still_open,
)
from deepresearch.providers.breakers import breaker_config

CFG = BreakerConfig(failure_threshold=3, reset_timeout_s=10.0, half_open_max_calls=1)


def _fail_n(state: BreakerState, n: int, now: float = 0.0) -> BreakerState:
    for _ in range(n):
        state = on_failure(state, CFG, now)
    return state


def _opened_at(now: float) -> BreakerState:
    return _fail_n(BreakerState.initial(), CFG.failure_threshold, now)


def test_from_settings_copies_fields() -> None:
    cfg = breaker_config(
        BreakerSettings(failure_threshold=7, reset_timeout_s=2.5, half_open_max_calls=2)
    )
    assert cfg == BreakerConfig(7, 2.5, 2)


def test_initial_state_is_closed_and_allows() -> None:
    state = BreakerState.initial()
    assert state == BreakerState("closed", 0, None, 0)
    new, decision = before_call(state, CFG, 123.0)
    assert decision == Allow()
    assert new == state


def test_failures_below_threshold_stay_closed() -> None:
    state = _fail_n(BreakerState.initial(), CFG.failure_threshold - 1)
    assert state.status == "closed"
    assert state.failures == 2
    assert isinstance(before_call(state, CFG, 0.0)[1], Allow)


def test_success_resets_consecutive_failures() -> None:
    state = _fail_n(BreakerState.initial(), 2)
    state = on_success(state, CFG, 1.0)
    assert state == BreakerState.initial()
    state = _fail_n(state, 2)
    assert state.status == "closed"  # not 4 consecutive: the success broke the run


def test_threshold_opens_and_rejects_with_remaining_time() -> None:
    state = _opened_at(100.0)
    assert state.status == "open"
    assert state.opened_at == 100.0
    state, decision = before_call(state, CFG, 104.0)
    assert decision == Reject(retry_in_s=6.0)
    assert state.status == "open"


def test_open_becomes_half_open_after_timeout_and_admits_one_probe() -> None:
    state = _opened_at(100.0)
    state, decision = before_call(state, CFG, 110.0)
    assert decision == Allow()
    assert state.status == "half_open"
    assert state.half_open_in_flight == 1
    state, second = before_call(state, CFG, 110.5)
    assert isinstance(second, Reject)
    assert second.retry_in_s > 0
    assert state.half_open_in_flight == 1


def test_half_open_admits_up_to_max_calls() -> None:
    cfg = BreakerConfig(failure_threshold=1, reset_timeout_s=5.0, half_open_max_calls=3)
    state = on_failure(BreakerState.initial(), cfg, 0.0)
    decisions = []
    for i in range(4):
        state, decision = before_call(state, cfg, 5.0 + i * 0.1)
        decisions.append(decision)
    assert [isinstance(d, Allow) for d in decisions] == [True, True, True, False]
    assert state.half_open_in_flight == 3


def test_half_open_success_closes() -> None:
    state, _ = before_call(_opened_at(0.0), CFG, 10.0)
    state = on_success(state, CFG, 11.0)
    assert state == BreakerState.initial()
    assert isinstance(before_call(state, CFG, 11.0)[1], Allow)


def test_half_open_failure_reopens_with_new_opened_at() -> None:
    state, _ = before_call(_opened_at(0.0), CFG, 10.0)
    state = on_failure(state, CFG, 12.0)
    assert state.status == "open"
    assert state.opened_at == 12.0
    assert state.half_open_in_flight == 0
    _, decision = before_call(state, CFG, 13.0)
    assert decision == Reject(retry_in_s=9.0)


def test_late_success_while_open_keeps_it_open() -> None:
    state = _opened_at(0.0)
    assert on_success(state, CFG, 1.0) == state


def test_failure_while_open_does_not_extend_timeout() -> None:
    state = on_failure(_opened_at(0.0), CFG, 5.0)
    assert state.status == "open"
    assert state.opened_at == 0.0


def test_cancelled_probe_frees_its_slot() -> None:
    state, _ = before_call(_opened_at(0.0), CFG, 10.0)
    state = on_cancel(state, CFG, 10.5)
    assert state.half_open_in_flight == 0
    assert isinstance(before_call(state, CFG, 10.6)[1], Allow)


def test_lost_probe_expires_after_reset_timeout() -> None:
    state, _ = before_call(_opened_at(0.0), CFG, 10.0)
    _, rejected = before_call(state, CFG, 19.0)
    assert isinstance(rejected, Reject)
    state, decision = before_call(state, CFG, 20.0)
    assert decision == Allow()
    assert state.half_open_in_flight == 1


def test_state_is_immutable_value() -> None:
    state = BreakerState.initial()
    on_failure(state, CFG, 0.0)
    assert state.failures == 0


def test_a_breaker_another_process_opened_refuses_here_for_as_long() -> None:
    state = adopt(BreakerState.initial(), 4.0, CFG, 100.0)
    assert state.status == "open" and open_for(state, CFG, 100.0) == 4.0
    assert isinstance(before_call(state, CFG, 103.9)[1], Reject)
    assert isinstance(before_call(state, CFG, 104.0)[1], Allow)  # then half-open, as anywhere
    ours = _opened_at(100.0)  # open here for 10 s: a shorter opening elsewhere changes nothing
    assert adopt(ours, 4.0, CFG, 100.0) is ours
    assert adopt(BreakerState.initial(), 0.0, CFG, 100.0) == BreakerState.initial()


def test_the_board_keeps_openings_until_they_lapse_or_close() -> None:
    board = posted({}, "openai:m", 10.0, 100.0)
    assert still_open(board, 104.0) == {"openai:m": 6.0}
    board = posted(board, "gemini:g", 5.0, 104.0)
    assert still_open(board, 108.0) == {"openai:m": 2.0, "gemini:g": 1.0}
    assert still_open(board, 110.0) == {}  # both lapsed
    assert posted(posted({}, "openai:m", 10.0, 0.0), "openai:m", 0.0, 1.0) == {}  # it closed
    longer = posted(posted({}, "k", 10.0, 0.0), "k", 2.0, 1.0)
    assert still_open(longer, 1.0) == {"k": 9.0}  # a shorter report never shortens it
