"""The lifecycle reducer: table tests for each rule, property tests that no run gets stuck or over budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deepresearch.policies.lifecycle import (
    CancelResearchers,
    Evaluate,
    Evaluated,
    LifecycleState,
    LimitReached,
    PlanReady,
    ResearcherFailed,
    ResearcherFinished,
    SpawnResearcher,
    Steer,
    Stop,
    Synthesize,
    Synthesized,
    initial,
    max_researchers,
    reduce,
    resume,
)
from deepresearch.schemas import SubTask


def tasks(*ids: str, round: int = 1) -> tuple[SubTask, ...]:
    return tuple(SubTask(id=i, question=f"q {i}", round=round) for i in ids)


def spawned(commands: list) -> list[str]:  # type: ignore[type-arg]
    return [c.subtask.id for c in commands if isinstance(c, SpawnResearcher)]


def test_plan_spawns_up_to_max_parallel() -> None:
    s, cmds = reduce(initial(2, 3), PlanReady(tasks("a", "b", "c")))
    assert s.status == "researching" and spawned(cmds) == ["a", "b"] and s.pending == tasks("c")
    assert all(c.inject == () for c in cmds)  # type: ignore[union-attr]


def test_finish_steers_running_and_injects_into_later_ones() -> None:
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b", "c")))
    s, cmds = reduce(s, ResearcherFinished("a"))
    assert Steer("b", "a") in cmds
    spawn = [c for c in cmds if isinstance(c, SpawnResearcher)]
    assert spawn == [SpawnResearcher(tasks("c")[0], ("a",))]


def test_round_end_asks_the_evaluator_then_delegates_a_new_round() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, cmds = reduce(s, ResearcherFailed("b", "boom"))
    assert cmds == [Evaluate(1)] and s.status == "evaluating"
    s, cmds = reduce(s, Evaluated("delegate", tasks("c", round=2)))
    assert s.round == 2 and spawned(cmds) == ["c"]
    assert cmds[0].inject == ("a",)  # type: ignore[union-attr]


def test_all_failed_in_first_round_stops_honestly() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFailed("a", "x"))
    s, cmds = reduce(s, ResearcherFailed("b", "y"))
    assert s.status == "failed" and isinstance(cmds[0], Stop)


def test_partial_findings_of_a_stopped_researcher_are_synthesized() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, cmds = reduce(s, ResearcherFailed("a", "step limit", partial=True))
    assert cmds == [Synthesize("failures")]


def test_all_failed_in_a_later_round_synthesizes_what_exists() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, _ = reduce(s, Evaluated("delegate", tasks("b", round=2)))
    s, cmds = reduce(s, ResearcherFailed("b", "y"))
    assert cmds == [Synthesize("failures")]


def test_round_budget_is_a_hard_limit() -> None:
    s, _ = reduce(initial(3, 2), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, _ = reduce(s, Evaluated("delegate", tasks("b", round=2)))
    s, _ = reduce(s, ResearcherFinished("b"))
    s, cmds = reduce(s, Evaluated("delegate", tasks("c", round=3)))
    assert cmds == [Synthesize("rounds")] and s.limited_by == "rounds"


def test_delegate_without_fresh_subtasks_synthesizes() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, cmds = reduce(s, Evaluated("delegate", tasks("a")))  # nothing new
    assert cmds == [Synthesize(None)]


def test_quick_mode_skips_evaluation() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, cmds = reduce(s, ResearcherFinished("a"))
    assert cmds == [Synthesize(None)]
    s, cmds = reduce(s, Synthesized())
    assert s.status == "done" and cmds == []


def test_limit_cancels_running_and_synthesizes() -> None:
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b", "c")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, cmds = reduce(s, LimitReached("time"))
    assert CancelResearchers("time limit reached") in cmds and Synthesize("time") in cmds
    s, cmds = reduce(s, ResearcherFailed("b", "cancelled"))
    assert cmds == [] and s.status == "synthesizing"


def test_limit_before_any_result_fails() -> None:
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a")))
    s, cmds = reduce(s, LimitReached("cost"))
    assert s.status == "failed" and isinstance(cmds[-1], Stop)


def test_out_of_place_events_are_ignored() -> None:
    s = initial(2, 3)
    for event in (
        ResearcherFinished("zz"),
        Evaluated("synthesize"),
        Synthesized(),
    ):
        assert reduce(s, event) == (s, [])
    s, _ = reduce(s, PlanReady(tasks("a")))
    assert reduce(s, PlanReady(tasks("b"))) == (s, [])
    assert reduce(s, ResearcherFinished("unknown")) == (s, [])


def test_resume_of_a_finished_state_writes_the_report_again() -> None:
    """A process that died after its last checkpoint but before returning still gets a report."""
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a"))
    s, _ = reduce(s, LimitReached("time"))
    s, _ = reduce(s, Synthesized())
    assert s.status == "done" and resume(s, {}) == (s, [Synthesize("time")])
    f, _ = reduce(initial(2, 3), PlanReady(tasks("a")))
    f, _ = reduce(f, ResearcherFailed("a", "x"))
    assert f.status == "failed" and resume(f, {}) == (f, [Stop("every researcher failed")])


# --------------------------------------------------------------------------- properties


@st.composite
def environments(draw: st.DrawFn) -> tuple[LifecycleState, tuple[SubTask, ...], list[int]]:
    max_parallel = draw(st.integers(1, 5))
    max_rounds = draw(st.integers(1, 4))
    n = draw(st.integers(0, 6))
    choices = draw(st.lists(st.integers(0, 1000), min_size=200, max_size=200))
    state = initial(max_parallel, max_rounds, evaluate=draw(st.booleans()))
    return state, tasks(*(f"p{i}" for i in range(n))), choices


@settings(max_examples=300, deadline=None)
@given(environments())
def test_no_event_sequence_leaves_it_stuck_or_over_budget(
    env: tuple[LifecycleState, tuple[SubTask, ...], list[int]],
) -> None:
    state, plan, choices = env
    pick = iter(choices)
    per_round = 3
    bound = max_researchers(len(plan), state.max_rounds, per_round)
    state, commands = reduce(state, PlanReady(plan))
    outstanding: list[str] = []  # researchers started and not yet reported
    awaiting: list[object] = []  # evaluate / synthesize requests not yet answered
    next_id = 0
    for _ in range(500):
        for cmd in commands:
            if isinstance(cmd, SpawnResearcher):
                outstanding.append(cmd.subtask.id)
            elif isinstance(cmd, (Evaluate, Synthesize)):
                awaiting.append(cmd)
        assert len(state.running) <= state.max_parallel
        assert state.round <= state.max_rounds
        assert state.spawned <= bound
        if state.terminal:
            break
        choice = next(pick, 0)
        if choice % 17 == 0 and choice:
            state, commands = reduce(state, LimitReached("time"))
            continue
        if outstanding and (choice % 2 == 0 or not awaiting):
            sid = outstanding.pop(choice % len(outstanding))
            event = (
                ResearcherFinished(sid)
                if choice % 3
                else ResearcherFailed(sid, "x", choice % 5 == 0)
            )
            state, commands = reduce(state, event)
            continue
        assert awaiting, f"stuck in {state.status} with nothing outstanding"
        request = awaiting.pop(0)
        if isinstance(request, Evaluate):
            new = []
            for _ in range(choice % (per_round + 1)):
                next_id += 1
                new.append(SubTask(id=f"n{next_id}", question="q", round=state.round + 1))
            action = "delegate" if choice % 4 else "synthesize"
            state, commands = reduce(state, Evaluated(action, tuple(new)))
        else:
            state, commands = reduce(state, Synthesized())
    assert state.terminal, f"not finished after 500 steps: {state.status}"
