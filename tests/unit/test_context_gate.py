"""The context gate cuts a batch to what fits; a researcher that read nothing takes one source."""

from __future__ import annotations

from deepresearch.policies.synthesis.context import gate


def test_the_issues_8k_case_takes_two_of_three() -> None:
    # 0.55 x 8192 = 4505; 16 prompt tokens + 3 x 1500 = 4516 used to admit nothing
    decision = gate(16, [], 3, 8192, 0.55)
    assert (decision.admit, decision.take, decision.limit_tokens) == (True, 2, 4505)


def test_nothing_read_yet_always_takes_one() -> None:
    decision = gate(900, [], 3, 1000, 0.5)
    assert (decision.admit, decision.take) == (True, 1)


def test_after_reading_a_full_window_stops() -> None:
    decision = gate(480, [400], 2, 1000, 0.5)
    assert (decision.admit, decision.take) == (False, 0)


def test_a_batch_that_fits_is_taken_whole() -> None:
    decision = gate(100, [200, 200], 3, 32000, 0.55)
    assert (decision.admit, decision.take) == (True, 3)
