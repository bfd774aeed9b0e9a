from __future__ import annotations

from deepresearch.policies.progress import ProgressState, advance
from deepresearch.schemas import Event


def feed(*events: tuple[str, dict[str, object]]) -> ProgressState:
    state = ProgressState()
    for i, (t, p) in enumerate(events):
        state = advance(state, Event(seq=i + 1, ts=0.0, run_id="r", type=t, payload=p))  # type: ignore[arg-type]
    return state


def test_percent_is_units_over_budget() -> None:
    s = feed(
        ("plan_ready", {"count": 2, "target_rounds": 1}),
        *[("researcher_progress", {"phase": "gathering"})] * 5,
    )
    assert s.planned_units == 20 and s.percent == 25 and s.phase == "gathering"


def test_a_finished_researcher_counts_its_whole_share() -> None:
    s = feed(
        ("plan_ready", {"count": 2}),
        ("researcher_started", {}),
        ("researcher_progress", {"phase": "reporting"}),
        ("researcher_finished", {}),
    )
    assert s.percent == 50 and s.researchers_active == 0


def test_delegation_grows_the_budget_and_exploring_past_planned_rounds() -> None:
    s = feed(
        ("plan_ready", {"count": 2, "target_rounds": 1}),
        ("researcher_finished", {}),
        ("researcher_finished", {}),
    )
    assert s.percent == 99  # never 100 before the end
    s2 = advance(
        s, Event(seq=9, ts=0, run_id="r", type="round_started", payload={"round": 2, "count": 2})
    )
    assert s2.planned_units == 40 and s2.percent == 50 and s2.phase == "exploring"
    s3 = advance(
        s2,
        Event(seq=10, ts=0, run_id="r", type="researcher_progress", payload={"phase": "scraping"}),
    )
    assert s3.phase == "exploring"
    done = advance(s3, Event(seq=11, ts=0, run_id="r", type="run_finished", payload={}))
    assert done.percent == 100 and done.phase == "done"


def test_planned_round_is_not_exploring() -> None:
    s = feed(
        ("plan_ready", {"count": 1, "target_rounds": 2}),
        ("round_started", {"round": 2, "count": 1}),
    )
    assert s.phase == "researching"
