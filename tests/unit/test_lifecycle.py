"""The lifecycle reducer: table tests for each rule, property tests that no run gets stuck or over budget."""

from __future__ import annotations

from call_bounds import call_bounds
from hypothesis import given, settings
from hypothesis import strategies as st

from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.policies.lifecycle import checkpoint
from deepresearch.policies.lifecycle.reducer import (
    CancelResearchers,
    Charged,
    Command,
    Decline,
    Evaluate,
    Evaluated,
    LifecycleState,
    LimitReached,
    NewRound,
    PlanReady,
    ResearcherFailed,
    ResearcherFinished,
    RetryResearcher,
    SpawnResearcher,
    Steer,
    Stop,
    Synthesize,
    Synthesized,
    for_run,
    initial,
    max_researchers,
    reduce,
    resume,
    round_budget,
)
from deepresearch.schemas import Finding, Request, ResearcherReport, SubTask, Usage

CITED = ("https://example.org/source",)  # a source the finished researcher's findings cite


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
    s, cmds = reduce(s, ResearcherFinished("a", CITED))
    assert Steer("b", "a") in cmds
    spawn = [c for c in cmds if isinstance(c, SpawnResearcher)]
    assert spawn == [SpawnResearcher(tasks("c")[0], ("a",))]


def test_round_end_asks_the_evaluator_then_delegates_a_new_round() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, cmds = reduce(s, ResearcherFailed("b", "boom"))
    assert cmds == [Evaluate(1, 3)] and s.status == "evaluating"
    s, cmds = reduce(s, Evaluated("delegate", tasks("c", round=2)))
    assert s.round == 2 and spawned(cmds) == ["c"]
    assert cmds[0] == NewRound(2, tasks("c", round=2))  # registered before its researchers start
    assert cmds[1].inject == ("a",)  # type: ignore[union-attr]


def test_all_failed_in_first_round_stops_honestly() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFailed("a", "x"))
    s, cmds = reduce(s, ResearcherFailed("b", "y"))
    assert s.status == "failed" and isinstance(cmds[0], Stop)


def test_partial_findings_of_a_stopped_researcher_are_synthesized() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, cmds = reduce(s, ResearcherFailed("a", "step limit", partial=True, cited=CITED))
    assert cmds == [Synthesize("failures")]


def test_all_failed_in_a_later_round_synthesizes_what_exists() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, _ = reduce(s, Evaluated("delegate", tasks("b", round=2)))
    s, cmds = reduce(s, ResearcherFailed("b", "y"))
    assert cmds == [Synthesize("failures")]


def test_round_budget_is_a_hard_limit() -> None:
    s, _ = reduce(initial(3, 2), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, _ = reduce(s, Evaluated("delegate", tasks("b", round=2)))
    s, _ = reduce(s, ResearcherFinished("b", CITED))
    s, cmds = reduce(s, Evaluated("delegate", tasks("c", round=3)))
    assert cmds == [Synthesize("rounds")] and s.limited_by == "rounds"


def test_delegate_without_fresh_subtasks_synthesizes() -> None:
    s, _ = reduce(initial(3, 3), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, cmds = reduce(s, Evaluated("delegate", tasks("a")))  # nothing new
    assert cmds == [Synthesize(None)]


def test_quick_mode_skips_evaluation() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, cmds = reduce(s, ResearcherFinished("a", CITED))
    assert cmds == [Synthesize(None)]
    s, cmds = reduce(s, Synthesized())
    assert s.status == "done" and cmds == []


def test_limit_cancels_running_and_synthesizes() -> None:
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b", "c")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
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
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, _ = reduce(s, LimitReached("time"))
    s, _ = reduce(s, Synthesized())
    assert s.status == "done" and resume(s, {}) == (s, [Synthesize("time")])
    f, _ = reduce(initial(2, 3), PlanReady(tasks("a")))
    f, _ = reduce(f, ResearcherFailed("a", "x"))
    assert f.status == "failed" and resume(f, {}) == (f, [Stop("every researcher failed")])


# --------------------------------------------------------------------------- rules moved in from the coordinator


def test_a_crashed_researcher_is_retried_once_with_the_same_injected_reports() -> None:
    s, _ = reduce(initial(1, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))  # b starts with a's report injected
    s, cmds = reduce(s, ResearcherFailed("b", "actor died", crashed=True))
    assert cmds == [RetryResearcher("b", ("a",))]
    assert s.running == ("b",) and s.retried == ("b",) and "b" not in s.failed
    s, cmds = reduce(s, ResearcherFailed("b", "actor died again", crashed=True))
    assert "b" in s.failed and not any(isinstance(c, RetryResearcher) for c in cmds)
    assert s.status == "evaluating"  # the round is over: a is usable, b stays failed


def test_no_retry_once_research_has_ended_or_for_an_ordinary_failure() -> None:
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b")))
    s, cmds = reduce(s, ResearcherFailed("a", "no sources"))
    assert cmds == [] and "a" in s.failed and s.retried == ()
    s, _ = reduce(s, ResearcherFinished("c-unknown", CITED))
    s, _ = reduce(initial(2, 3), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, _ = reduce(s, LimitReached("time"))
    s, cmds = reduce(s, ResearcherFailed("b", "cancelled", crashed=True))
    assert cmds == [] and s.retried == () and s.status == "synthesizing"


def test_the_cost_cap_ends_research_when_the_spend_reaches_it() -> None:
    s, _ = reduce(initial(1, 3, max_cost_usd=1.0), PlanReady(tasks("a", "b")))
    assert reduce(s, Charged(0.99)) == (s, [])
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    s, cmds = reduce(s, Charged(1.0))
    assert cmds == [CancelResearchers("cost limit reached"), Synthesize("cost")]
    assert s.limited_by == "cost" and s.pending == ()
    assert reduce(s, Charged(5.0)) == (s, [])  # the writer's spend does not stop the writer


def test_the_cost_cap_before_any_result_stops_honestly_and_no_cap_never_stops() -> None:
    s, _ = reduce(initial(1, 3, max_cost_usd=0.5), PlanReady(tasks("a")))
    s, cmds = reduce(s, Charged(0.6))
    assert s.status == "failed" and s.limited_by == "cost" and isinstance(cmds[-1], Stop)
    free, _ = reduce(initial(1, 3), PlanReady(tasks("a")))
    assert reduce(free, Charged(1e9)) == (free, [])


def test_too_few_usable_sources_decline_instead_of_writing() -> None:
    s, _ = reduce(initial(2, 1, evaluate=False, min_sources=2), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a", ("https://x/1",)))
    s, cmds = reduce(s, ResearcherFinished("b", ("https://x/1",)))  # the same source twice
    assert cmds == [Decline(None)] and s.status == "synthesizing"
    assert reduce(s, Synthesized())[0].status == "done"
    s, _ = reduce(initial(2, 1, evaluate=False, min_sources=2), PlanReady(tasks("a", "b")))
    s, _ = reduce(s, ResearcherFinished("a", ("https://x/1",)))
    s, cmds = reduce(s, ResearcherFinished("b", ("https://x/2",)))
    assert cmds == [Synthesize(None)] and s.cited == ("https://x/1", "https://x/2")
    nothing, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    assert reduce(nothing, ResearcherFinished("a"))[1] == [Decline(None)]  # ok, but cites nothing


def test_resume_decides_write_or_decline_again_from_the_checkpointed_sources() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a"))
    assert resume(s, {})[1] == [Decline(None)]
    w, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    w, _ = reduce(w, ResearcherFinished("a", CITED))
    assert resume(w, {})[1] == [Synthesize(None)]


def test_an_older_checkpoint_without_cited_sources_gets_them_from_its_reports() -> None:
    s, _ = reduce(initial(1, 1, evaluate=False), PlanReady(tasks("a")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))
    finding = Finding(text="Sales rose.", citations=CITED)
    report = ResearcherReport(subtask_id="a", question="q a", findings=[finding])
    data = checkpoint.payload(Request(run_id="r", query="q"), s, tasks("a"), [report], Usage(), {})
    del data["lifecycle"]["cited"]
    assert checkpoint.restore(data).state == s


def test_the_round_budget_is_computed_once_and_handed_to_the_evaluator() -> None:
    flags = {"deep.target_rounds": 2, "deep.max_parallel": 4, "llm.max_cost_usd": 3.0}
    cfg = load_settings(None, overrides_from_flags(flags), env={})
    deep = for_run(cfg, quick=False, evaluate=True)
    assert deep.max_rounds == round_budget(2) == 4 and deep.max_parallel == 4
    assert deep.max_cost_usd == 3.0 and deep.min_sources == cfg.run.min_sources
    quick = for_run(cfg, quick=True, evaluate=False)
    assert (quick.max_parallel, quick.max_rounds, quick.evaluate) == (1, 1, False)
    fixed_agenda = for_run(cfg, quick=False, evaluate=False)
    assert fixed_agenda.max_rounds == 1 and fixed_agenda.max_parallel == 4
    s, _ = reduce(deep, PlanReady(tasks("a")))
    assert reduce(s, ResearcherFinished("a", CITED))[1] == [Evaluate(1, 4)]
    # the static call bounds use the same budget: more rounds, more researchers
    assert call_bounds(cfg, "deep").researchers == max_researchers(
        max(cfg.deep.researchers_by_complexity), 4, 3
    )


# --------------------------------------------------------------------------- properties

Env = tuple[LifecycleState, tuple[SubTask, ...], list[int]]


@st.composite
def environments(draw: st.DrawFn) -> Env:
    max_parallel = draw(st.integers(1, 5))
    max_rounds = draw(st.integers(1, 4))
    n = draw(st.integers(0, 6))
    choices = draw(st.lists(st.integers(0, 1000), min_size=200, max_size=200))
    cap = draw(st.one_of(st.none(), st.floats(0.5, 20.0)))
    state = initial(
        max_parallel,
        max_rounds,
        evaluate=draw(st.booleans()),
        max_cost_usd=cap,
        min_sources=draw(st.integers(0, 3)),
    )
    return state, tasks(*(f"p{i}" for i in range(n))), choices


def outcome(sid: str, choice: int) -> ResearcherFinished | ResearcherFailed:
    """A researcher's outcome: finished or failed, crashed or not, citing zero to two sources
    (drawn from a small set, so distinct sources are counted, not citations)."""
    cited = tuple(f"https://s/{(choice + k) % 4}" for k in range(choice % 3))
    if choice % 3:
        return ResearcherFinished(sid, cited)
    return ResearcherFailed(sid, "x", choice % 5 == 0, crashed=choice % 7 < 3, cited=cited)


def check_step(state: LifecycleState, before: LifecycleState, cmds: list[Command]) -> None:
    """What must hold after every step, whatever the event was."""
    assert len(state.running) <= state.max_parallel
    assert state.round <= state.max_rounds
    assert len(set(state.retried)) == len(state.retried)  # a sub-task is retried at most once
    for cmd in cmds:
        if isinstance(cmd, RetryResearcher):
            assert cmd.subtask_id in before.running and cmd.subtask_id not in before.retried
            assert state.status == "researching"
        if isinstance(cmd, Synthesize):  # written only from enough distinct usable sources
            assert state.cited and len(state.cited) >= state.min_sources
        if isinstance(cmd, Decline):
            assert not state.cited or len(state.cited) < state.min_sources
        if isinstance(cmd, Evaluate):
            assert cmd.max_rounds == state.max_rounds and cmd.round == state.round
    if state.status in ("synthesizing", "done", "failed"):  # research is over: nothing starts
        assert not any(isinstance(c, SpawnResearcher | RetryResearcher | NewRound) for c in cmds)


@settings(max_examples=400, deadline=None)
@given(environments())
def test_no_event_sequence_leaves_it_stuck_or_over_budget(env: Env) -> None:
    state, plan, choices = env
    pick = iter(choices)
    per_round = 3
    bound = max_researchers(len(plan), state.max_rounds, per_round)
    before = state
    state, commands = reduce(state, PlanReady(plan))
    outstanding: list[str] = []  # researchers started and not yet reported
    awaiting: list[object] = []  # evaluate / synthesize / decline requests not yet answered
    spent = 0.0
    next_id = 0
    for _ in range(600):
        check_step(state, before, commands)
        for cmd in commands:
            if isinstance(cmd, SpawnResearcher):
                outstanding.append(cmd.subtask.id)
            elif isinstance(cmd, RetryResearcher):
                outstanding.append(cmd.subtask_id)  # a fresh researcher for the same sub-task
            elif isinstance(cmd, Evaluate | Synthesize | Decline):
                awaiting.append(cmd)
        assert state.spawned <= bound
        if state.terminal:
            break
        before = state
        choice = next(pick, 0)
        if choice % 17 == 0 and choice:
            state, commands = reduce(state, LimitReached("time"))
            continue
        if choice % 13 == 0 and choice:
            spent += choice / 100
            cap = state.max_cost_usd
            state, commands = reduce(state, Charged(spent))
            if cap is not None and spent >= cap and before.status in ("researching", "evaluating"):
                assert state.status in ("synthesizing", "failed") and state.limited_by == "cost"
            if cap is None or spent < cap:
                assert (state, commands) == (before, [])
            continue
        if outstanding and (choice % 2 == 0 or not awaiting):
            sid = outstanding.pop(choice % len(outstanding))
            state, commands = reduce(state, outcome(sid, choice))
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
    assert state.terminal, f"not finished after 600 steps: {state.status}"


# --------------------------------------------------------------------------- order independence


def spawns(commands: list) -> dict[str, tuple[str, ...]]:  # type: ignore[type-arg]
    return {c.subtask.id: c.inject for c in commands if isinstance(c, SpawnResearcher)}


def finish_in(order: tuple[str, ...], max_parallel: int = 2) -> dict[str, tuple[str, ...]]:
    """Every sub-task of a five-item plan, each finishing as soon as it runs and ``order``
    allows; what each was started with."""
    s, cmds = reduce(initial(max_parallel, 1, evaluate=False), PlanReady(tasks(*"abcde")))
    given = spawns(cmds)
    for sid in order:
        assert sid in s.running, (sid, s.running)
        s, cmds = reduce(s, ResearcherFinished(sid, CITED))
        given.update(spawns(cmds))
    assert s.status == "synthesizing"
    return given


def test_what_a_later_sub_task_is_given_does_not_depend_on_who_finished_first() -> None:
    """A sibling's report steers the queries of the sub-tasks started after it: were it the
    first to finish rather than a fixed one, a run (and its resume) would depend on timing."""
    assert (
        finish_in(tuple("abcde"))
        == finish_in(tuple("acbed"))
        == {
            "a": (),
            "b": (),
            "c": ("a",),
            "d": ("a", "b"),
            "e": ("a", "b", "c"),
        }
    )


def test_a_free_slot_waits_for_the_sub_task_whose_report_the_next_one_is_given() -> None:
    s, _ = reduce(initial(2, 1, evaluate=False), PlanReady(tasks("a", "b", "c")))
    s, cmds = reduce(s, ResearcherFinished("b", CITED))
    assert spawned(cmds) == [] and s.running == ("a",)  # c is given a's report: it waits
    s, cmds = reduce(s, ResearcherFinished("a", CITED))
    assert spawns(cmds) == {"c": ("a",)}


def checkpoint_of(s: LifecycleState) -> dict[str, object]:
    return checkpoint.payload(Request(run_id="r", query="q"), s, tasks(*"abcde"), [], Usage(), {})


def test_a_resume_gives_the_sub_tasks_left_what_the_uninterrupted_run_gave_them() -> None:
    s, _ = reduce(initial(2, 1, evaluate=False), PlanReady(tasks(*"abcde")))
    s, _ = reduce(s, ResearcherFinished("a", CITED))  # c starts; b and c are in flight
    plan = {t.id: t for t in tasks(*"abcde")}
    s, cmds = resume(checkpoint.restore(checkpoint_of(s)).state, plan)
    given = spawns(cmds)
    for sid in ("c", "b", "d", "e"):  # restarted c (its prior work reused) ends before b
        s, cmds = reduce(s, ResearcherFinished(sid, CITED))
        given.update(spawns(cmds))
    assert given == {"b": (), "c": ("a",), "d": ("a", "b"), "e": ("a", "b", "c")}
