"""The progress reducer: percent is the share of the run's time done, in step-times, researchers
counted by the span of their steps in ``slots`` (``max_parallel``), so a sub-task queued behind
the others counts as a wave of its own; the bar never jumps, goes back or reaches 100 early."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_actors_inprocess import settings as config

from deepresearch.policies.lifecycle.progress import ProgressState, advance, budget, span
from deepresearch.schemas import Event

Events = list[tuple[str, dict[str, object]]]


def feed(
    *events: tuple[str, dict[str, object]], state: ProgressState | None = None
) -> ProgressState:
    state = state or ProgressState()
    for i, (t, p) in enumerate(events):
        state = advance(state, Event(seq=i + 1, ts=0.0, run_id="r", type=t, payload=p))  # type: ignore[arg-type]
    return state


def steps(sid: str, first: int, last: int, of: int) -> Events:
    return [
        ("researcher_progress", {"subtask": sid, "phase": "gathering", "units": u, "of": of})
        for u in range(first, last + 1)
    ]


def started(*sids: str) -> Events:
    return [("researcher_started", {"subtask": s}) for s in sids]


PLAN = ("plan_ready", {"count": 2, "target_rounds": 1, "steps": 6, "run_steps": 3, "run_done": 1})
FIVE = ("plan_ready", {"count": 5, "steps": 10, "run_steps": 3, "run_done": 1, "slots": 2})


def test_researchers_side_by_side_count_their_time_once() -> None:
    both = feed(PLAN, *started("t1", "t2"), *steps("t1", 1, 3, 6), *steps("t2", 1, 3, 6))
    # planning and half of the researchers' 6 step-times done, of planning, 6, evaluation, writing
    assert both.time_done() == (4, 9) and both.percent == 44 and both.phase == "gathering"
    ahead = feed(PLAN, *started("t1", "t2"), *steps("t1", 1, 3, 6))
    assert ahead.time_done() == (1, 9)  # t2 has all its 6 steps to go: so has the run


def test_five_sub_tasks_in_two_slots_run_in_three_waves() -> None:
    done4 = [
        e
        for k in range(1, 5)
        for e in (*steps(f"t{k}", 1, 10, 10), ("researcher_finished", {"subtask": f"t{k}"}))
    ]
    s = feed(FIVE, *done4)
    # two waves of three done: (planning + 20) of (planning + 30 + evaluation + writing), not 80%
    assert s.time_done() == (21, 33) and s.percent == 63
    half = feed(*steps("t5", 1, 5, 10), state=s)
    assert half.percent == 78  # the last one alone: its 5 steps are 5 step-times of the run
    assert feed(*steps("t5", 6, 10, 10), state=half).percent == 93


def test_a_queued_sub_task_waits_for_the_first_slot_that_frees() -> None:
    assert span([], [10] * 5, 2) == 30 and span([], [10] * 5, 5) == 10
    assert span([2, 8], [10], 2) == 12  # starts when the 2 ends, not when the 8 does
    assert span([3], [], 4) == 3 and span([], [], 0) == 0
    uneven = feed(FIVE, *steps("t1", 1, 8, 10), *steps("t2", 1, 2, 10))
    # the 8 and 2 behind: t1's slot frees first and takes t3, then t4 (t2's) and t5
    assert uneven.time_done() == (1 + 30 - span([2, 8], [10] * 3, 2), 33)


def test_a_researcher_that_finishes_its_steps_does_not_jump_the_bar() -> None:
    before = feed(PLAN, *started("t1", "t2"), *steps("t1", 1, 6, 6), *steps("t2", 1, 4, 6))
    after = feed(("researcher_finished", {"subtask": "t1"}), state=before)
    assert before.percent == after.percent == 55  # (1 + 4) of 9: t2 still has 2 to go
    assert after.researchers_done == 1 and after.researchers_active == 1


def test_a_researcher_that_needs_more_steps_holds_the_bar_and_unsaid_ones_take_the_mean() -> None:
    s = feed(PLAN, *started("t1", "t2"), *steps("t1", 1, 4, 4))
    assert s.time_done() == (1, 7)  # t2 has said nothing: it is expected to take t1's 4
    more = feed(*steps("t1", 4, 4, 8), state=s)  # a reformulation: t1 now expects 8
    assert more.time_done() == (1, 11) and more.percent == s.percent


def test_writing_stays_below_100_until_the_run_has_finished() -> None:
    s = feed(PLAN, *steps("t1", 1, 6, 6), *steps("t2", 1, 6, 6), ("evaluated", {}), ("writing", {}))
    assert s.percent == 88 and s.stage == "writing"
    assert feed(("run_finished", {}), state=s).percent == 100


def test_delegation_grows_the_budget_and_exploring_past_planned_rounds() -> None:
    s = feed(
        PLAN, ("researcher_finished", {"subtask": "t1"}), ("researcher_finished", {"subtask": "t2"})
    )
    s2 = feed(("round_started", {"round": 2, "count": 2}), state=s)
    assert s2.planned == 4 and s2.phase == "exploring" and not s2.percent_known
    s3 = feed(*steps("t3", 1, 1, 6), state=s2)
    assert s3.phase == "exploring" and s3.percent >= s.percent  # never back
    done = feed(("run_finished", {}), state=s3)
    assert done.percent == 100 and done.phase == "done"


def test_planned_round_is_not_exploring() -> None:
    s = feed(
        ("plan_ready", {"count": 1, "target_rounds": 2}),
        ("round_started", {"round": 2, "count": 1}),
    )
    assert s.phase == "researching"


def test_a_resumed_stream_counts_what_the_checkpoint_completed() -> None:
    resumed = {"status": "researching", "completed": 4, **FIVE[1]}
    fresh = feed(("run_resumed", resumed))  # the CLI: the stream from the resume on
    assert fresh.time_done() == (21, 33) and fresh.researchers_done == 4
    # a service replays the whole log: the interrupted researcher's steps are done again
    before = feed(
        FIVE,
        *[
            e
            for k in range(1, 5)
            for e in (*started(f"t{k}"), ("researcher_finished", {"subtask": f"t{k}"}))
        ],
        *started("t5"),
        *steps("t5", 1, 6, 10),
    )
    replayed = feed(("run_resumed", resumed), state=before)
    assert replayed.time_done() == (21, 33) and replayed.researchers_active == 0
    assert replayed.percent == before.percent == 81  # held, not shown going back


def test_a_resumed_stream_counts_the_sources_the_checkpoint_kept() -> None:
    resumed = {"status": "researching", "completed": 2, "sources": 5, **FIVE[1]}
    assert feed(("run_resumed", resumed)).sources == 5  # the CLI: not "sources 0" again
    before = feed(FIVE, *[("source_read", {"subtask": "t1"})] * 7)
    assert feed(("run_resumed", resumed), state=before).sources == 7  # a replay: never back


def test_budget_counts_the_planners_call_the_evaluations_writing_and_slots() -> None:
    s = config(**{"deep.target_rounds": 2})
    assert budget(s, deep=True, planned=True, slots=2) == {
        "steps": 9,
        "run_steps": 4,
        "run_done": 1,
        "slots": 2,
    }
    assert budget(s, deep=True, planned=True, evaluated=1)["run_done"] == 2
    assert budget(s, deep=False, planned=False) == {
        "steps": 9,
        "run_steps": 1,
        "run_done": 0,
        "slots": 1,
    }


def simulate(lengths: list[int], slots: int, estimate: int) -> list[tuple[int, Events]]:
    """A run where every step takes one tick: planning, the researchers FIFO in ``slots`` (each
    says its steps with its first one), evaluation, writing; the events of each tick."""
    plan = {"count": len(lengths), "steps": estimate, "run_steps": 3, "run_done": 1}
    first: Events = [("run_started", {}), ("plan_ready", {**plan, "slots": slots})]
    ticks: list[tuple[int, Events]] = []
    queue, running, t = list(range(len(lengths))), dict[int, int](), 1
    while queue or running:
        events: Events = first if t == 1 else []
        for k in list(running):
            running[k] += 1
            events += steps(f"t{k}", running[k], running[k], lengths[k])
            if running[k] == lengths[k]:
                del running[k]
                events.append(("researcher_finished", {"subtask": f"t{k}"}))
        while queue and len(running) < slots:
            k = queue.pop(0)
            running[k] = 0
            events += started(f"t{k}")
        ticks.append((t, events))
        t += 1
    # the last researcher finished at t - 1: evaluation takes a tick, writing another
    return [*ticks, (t, [("evaluated", {}), ("writing", {})]), (t + 1, [("run_finished", {})])]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(3, 12), min_size=1, max_size=7),
    st.integers(1, 4),
    st.integers(3, 12),
    st.booleans(),
)
def test_percent_is_the_share_of_the_runs_time(
    lengths: list[int], slots: int, estimate: int, equal: bool
) -> None:
    lengths = [estimate] * len(lengths) if equal else lengths
    ticks = simulate(lengths, slots, estimate)
    total = ticks[-1][0]
    state, shown, said = ProgressState(), 0, set[str]()
    for t, events in ticks:
        state = feed(*events, state=state)
        said |= {str(p["subtask"]) for e, p in events if e == "researcher_progress"}
        assert state.percent >= shown and (state.percent < 100) == (t < total)
        shown = state.percent
        if t < total and (equal or len(said) == len(lengths)):
            # every researcher's steps known: what is done and what is left are the run's time
            assert state.time_done() == (t, total)
            assert state.percent >= 100 * t // total
            assert state.percent == 100 * t // total or not equal  # an early guess may run ahead


def test_quick_mode_one_researcher_counts_its_steps() -> None:
    quick = ("plan_ready", {"count": 1, "steps": 9, "run_steps": 1, "run_done": 0, "slots": 1})
    s = feed(quick, *started("t1"), *steps("t1", 1, 4, 8))
    assert s.time_done() == (4, 9) and s.percent == 44  # 4 of its 8 steps and writing
