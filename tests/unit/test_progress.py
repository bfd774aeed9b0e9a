"""The progress reducer: percent is the share of the run's steps done, each researcher counted by
the steps it says it expects (``of``), so the bar moves evenly and never jumps or goes back."""

from __future__ import annotations

from test_actors_inprocess import settings

from deepresearch.policies.progress import ProgressState, advance, budget
from deepresearch.schemas import Event


def feed(
    *events: tuple[str, dict[str, object]], state: ProgressState | None = None
) -> ProgressState:
    state = state or ProgressState()
    for i, (t, p) in enumerate(events):
        state = advance(state, Event(seq=i + 1, ts=0.0, run_id="r", type=t, payload=p))  # type: ignore[arg-type]
    return state


def steps(sid: str, first: int, last: int, of: int) -> list[tuple[str, dict[str, object]]]:
    return [
        ("researcher_progress", {"subtask": sid, "phase": "gathering", "units": u, "of": of})
        for u in range(first, last + 1)
    ]


PLAN = ("plan_ready", {"count": 2, "target_rounds": 1, "steps": 6, "run_steps": 3, "run_done": 1})


def test_percent_is_steps_done_over_the_runs_steps() -> None:
    s = feed(PLAN, ("researcher_started", {"subtask": "t1"}), *steps("t1", 1, 3, 6))
    # planning and 3 steps of t1 done; planning, evaluation, writing and 6 + 6 researcher steps
    assert s.steps_done() == (4, 15) and s.percent == 26 and s.phase == "gathering"


def test_a_researcher_that_finishes_its_steps_does_not_jump_the_bar() -> None:
    before = feed(PLAN, ("researcher_started", {"subtask": "t1"}), *steps("t1", 1, 6, 6))
    after = feed(("researcher_finished", {"subtask": "t1"}), state=before)
    assert before.percent == after.percent == 46
    assert after.researchers_done == 1 and after.researchers_active == 0


def test_the_last_researcher_running_alone_moves_the_bar_as_fast_as_two_together() -> None:
    five = ("plan_ready", {"count": 5, "steps": 10, "run_steps": 3, "run_done": 1})
    done4 = [
        e
        for k in range(1, 5)
        for e in (*steps(f"t{k}", 1, 10, 10), ("researcher_finished", {"subtask": f"t{k}"}))
    ]
    s = feed(five, *done4)
    assert s.percent == 77  # (1 + 40) of 53 steps
    half = feed(*steps("t5", 1, 5, 10), state=s)
    assert half.percent == 86  # half of the last researcher's steps count half its share


def test_a_researcher_that_needs_more_steps_holds_the_bar_and_unsaid_ones_take_the_mean() -> None:
    s = feed(PLAN, *steps("t1", 1, 4, 4))
    assert s.steps_done() == (5, 11)  # t2 has said nothing: it is expected to take t1's 4
    more = feed(*steps("t1", 4, 4, 8), state=s)  # a reformulation: t1 now expects 8
    assert more.steps_done() == (5, 19) and more.percent == s.percent


def test_writing_stays_below_100_until_the_run_has_finished() -> None:
    s = feed(PLAN, *steps("t1", 1, 6, 6), *steps("t2", 1, 6, 6), ("evaluated", {}), ("writing", {}))
    assert s.percent == 93 and s.stage == "writing"
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
    resumed = {
        "status": "researching",
        "completed": 4,
        "count": 5,
        "steps": 10,
        "run_steps": 3,
        "run_done": 1,
    }
    fresh = feed(("run_resumed", resumed))  # the CLI: the stream from the resume on
    assert fresh.steps_done() == (41, 53) and fresh.researchers_done == 4
    # a service replays the whole log: the interrupted researcher's steps are done again
    before = feed(
        ("plan_ready", {"count": 5, "steps": 10, "run_steps": 3, "run_done": 1}),
        *[
            e
            for k in range(1, 5)
            for e in (
                ("researcher_started", {"subtask": f"t{k}"}),
                ("researcher_finished", {"subtask": f"t{k}"}),
            )
        ],
        ("researcher_started", {"subtask": "t5"}),
        *steps("t5", 1, 6, 10),
    )
    replayed = feed(("run_resumed", resumed), state=before)
    assert replayed.steps_done() == (41, 53) and replayed.researchers_active == 0
    assert replayed.percent == before.percent  # held, not shown going back


def test_budget_counts_the_planners_call_the_evaluations_and_writing() -> None:
    s = settings(**{"deep.target_rounds": 2})
    assert budget(s, deep=True, planned=True) == {"steps": 9, "run_steps": 4, "run_done": 1}
    assert budget(s, deep=True, planned=True, evaluated=1)["run_done"] == 2
    assert budget(s, deep=False, planned=False) == {"steps": 9, "run_steps": 1, "run_done": 0}
