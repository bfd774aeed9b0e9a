"""Progress arithmetic from the event stream: a pure reducer the console (or a service) renders.

Percent is tool-call units done over the budget: ``UNITS_PER_RESEARCHER`` per planned researcher.
It never reaches 100 before the run has finished, and never goes backwards; past the planned rounds
(``exploring``) no percent is known. ``phase`` follows the researchers' steps (gathering, scraping,
...) for the live line; ``stage`` is the run's coarse step (starting, planning, researching,
exploring, writing, done), whose changes are few enough to print as plain lines off a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from deepresearch.schemas import Event

UNITS_PER_RESEARCHER = 10


@dataclass(frozen=True)
class ProgressState:
    phase: str = "starting"
    stage: str = "starting"
    planned_units: int = UNITS_PER_RESEARCHER
    done_units: int = 0
    researchers_active: int = 0
    researchers_done: int = 0
    sources: int = 0
    finished: bool = False
    round: int = 1
    target_rounds: int = 1
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def percent(self) -> int:
        if self.finished:
            return 100
        return min(99, int(100 * self.done_units / max(1, self.planned_units)))

    @property
    def percent_known(self) -> bool:
        """Exploring rounds were not planned, so their share of the run is unknown."""
        return self.finished or self.phase != "exploring"


def advance(state: ProgressState, event: Event) -> ProgressState:
    p = event.payload
    match event.type:
        case "run_started":
            return replace(state, phase="planning", stage="planning")
        case "run_resumed":
            return replace(state, phase="researching", stage="researching")
        case "plan_ready":
            count, target = p.get("count", 1), p.get("target_rounds", 1)
            n = count if isinstance(count, int) else 1
            return replace(
                state,
                phase="researching",
                stage="researching",
                planned_units=n * UNITS_PER_RESEARCHER,
                target_rounds=target if isinstance(target, int) else 1,
            )
        case "round_started":
            count, round_no = p.get("count", 0), p.get("round", state.round + 1)
            extra = (count if isinstance(count, int) else 0) * UNITS_PER_RESEARCHER
            r = round_no if isinstance(round_no, int) else state.round + 1
            # The budget grows when the evaluator delegates; past the planned rounds we explore.
            stage = "exploring" if r > state.target_rounds else "researching"
            return replace(
                state, planned_units=state.planned_units + extra, round=r, phase=stage, stage=stage
            )
        case "researcher_started":
            return replace(state, researchers_active=state.researchers_active + 1)
        case "researcher_progress":
            phase = p.get("phase")
            if state.phase == "exploring" or not isinstance(phase, str):
                phase = state.phase
            return replace(
                state,
                phase=phase,
                done_units=min(state.planned_units, state.done_units + 1),
            )
        case "source_read" | "source_reused":
            return replace(state, sources=state.sources + 1)
        case "researcher_finished" | "researcher_failed":
            tokens, cost = p.get("tokens", 0), p.get("cost_usd", 0.0)
            state = replace(
                state,
                tokens=state.tokens + (tokens if isinstance(tokens, int) else 0),
                cost_usd=state.cost_usd + (cost if isinstance(cost, int | float) else 0.0),
            )
            done = state.researchers_done + 1
            floor = min(state.planned_units, done * UNITS_PER_RESEARCHER)
            return replace(
                state,
                researchers_active=max(0, state.researchers_active - 1),
                researchers_done=done,
                done_units=max(state.done_units, floor),
            )
        case "writing":
            return replace(state, phase="writing", stage="writing")
        case "run_finished":
            return replace(state, phase="done", stage="done", finished=True, researchers_active=0)
        case _:
            return state
