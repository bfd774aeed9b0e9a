"""Upper bounds on the work one run can do, derived from its settings alone (a test helper).

No run can loop forever: researchers are bounded by the lifecycle (first round plus delegated
rounds), each researcher by its watchdog (steps), and each structured call by one repair and one
retry. ``call_bounds`` adds these up; a test drives adversarial runs and checks the totals.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepresearch.config.settings import Settings
from deepresearch.policies.lifecycle.reducer import max_researchers, round_budget

CALLS_PER_STRUCTURED = 2  # the first call and one retry with the validation error
NEW_SUBTASKS_PER_ROUND = 3  # EvaluateTask.max_new_subtasks


@dataclass(frozen=True)
class CallBounds:
    researchers: int
    llm: int
    search: int
    fetch: int


def call_bounds(settings: Settings, mode: str) -> CallBounds:
    rs = settings.researcher
    if mode == "quick":
        researchers, rounds = 1, 1
    else:
        rounds = round_budget(settings.deep.target_rounds)
        first = max(settings.deep.researchers_by_complexity)
        researchers = max_researchers(first, rounds, NEW_SUBTASKS_PER_ROUND)
    # Per researcher: steps cap LLM + search + fetch together; the final report call may run
    # after the watchdog stopped gathering, so it is counted on top.
    per_researcher_llm = min(rs.max_steps, CALLS_PER_STRUCTURED) + CALLS_PER_STRUCTURED
    coordinator_llm = CALLS_PER_STRUCTURED * (
        1 + rounds + 1
    )  # planner, evaluator per round, writer
    return CallBounds(
        researchers=researchers,
        llm=researchers * per_researcher_llm + coordinator_llm,
        search=researchers * min(rs.tool_budget, rs.max_steps),
        fetch=researchers * min(rs.max_sources, rs.max_steps),
    )
