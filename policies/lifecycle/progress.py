"""Progress arithmetic from the event stream: a pure reducer the console (or a service) renders.

Percent is the share of the run's time done, estimated in step-times: a step is one model, search
or scraping-batch call of a researcher (its query plan, each search, each batch of fetches, its
report), or one of the run's own (planning, each planned round's evaluation, writing), and each
takes about one step-time. Researchers run side by side in ``slots`` (``deep.max_parallel``), so
their share of the run is the span of that schedule, not the sum of their steps: with 5 sub-tasks
and 2 slots they run in waves of 2, 2 and 1, and the last one, running alone, takes a third of
the research time though it is a fifth of its steps. Queued sub-tasks start in the first slot that
frees (the lifecycle's order), so what is left is the span of the running researchers' remaining
steps and the queue behind them, and what is done is the whole span less that. Each researcher
says how many steps it expects (``of``, known once it has planned its queries and scored its
hits; before that the mean of its siblings', or the plan's estimate). The percent never reaches
100 before the run has finished and never goes backwards (a researcher that learns it needs more
steps, or is redone, holds the bar); past the planned rounds (``exploring``) no percent is known.
A resumed run's stream counts the sub-tasks its checkpoint had completed, and their sources
(``run_resumed``), and redoes the others' steps (a resumed researcher goes quickly through what it had done). ``phase``
follows the researchers' steps (gathering, scraping, ...) for the live line; ``stage`` is the
run's coarse step (starting, planning, researching, exploring, writing, done), whose changes are
few enough to print as plain lines off a terminal.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from deepresearch.config.settings import ResearcherSettings, Settings
from deepresearch.policies.search.batches import batch_count
from deepresearch.schemas import Event

# A researcher's steps before anyone said: its query plan, four searches, three scraping
# batches and its report (the default ``researcher`` config; ``plan_ready`` gives the real one).
DEFAULT_STEPS = 9


def researcher_steps(queries: int, batches: int) -> int:
    """A researcher's steps: its query plan, a search per query, its scraping batches, its report."""
    return 2 + queries + batches


def expected_steps(rs: ResearcherSettings, queries: int | None = None) -> int:
    """A researcher's expected steps under its settings (its planned ``queries`` once known):
    what ``plan_ready`` tells the reducer and what the researcher then says (``of``)."""
    batches = batch_count(rs.max_sources, rs.batch_sizes, rs.max_sources)
    return researcher_steps(rs.queries if queries is None else queries, batches)


def budget(
    settings: Settings, deep: bool, planned: bool, evaluated: int = 0, slots: int = 1
) -> dict[str, int]:
    """What ``plan_ready`` (and ``run_resumed``) tell the reducer: a researcher's expected steps
    under ``settings``, the run's own steps (planning when a model ``planned``, one evaluation per
    planned round when ``deep``, writing), how many of those are done (``evaluated`` rounds) and
    how many researchers run at once (``slots``: the lifecycle's ``max_parallel``)."""
    rs = settings.researcher
    evaluations = settings.deep.target_rounds if deep else 0
    planning = 1 if planned else 0
    return {
        "steps": expected_steps(rs),
        "run_steps": planning + evaluations + 1,
        "run_done": planning + min(evaluations, evaluated),
        "slots": max(1, slots),
    }


def span(running: Sequence[int], queued: Sequence[int], slots: int) -> int:
    """Step-times until the researchers are done: the ``running`` ones go on for their remaining
    steps, and each ``queued`` one, in order, starts in the first of ``slots`` that frees."""
    loads = [*running, *[0] * max(0, slots - len(running))] or [0]
    heapq.heapify(loads)
    for steps in queued:
        heapq.heappush(loads, heapq.heappop(loads) + steps)
    return max(loads)


@dataclass(frozen=True)
class Share:
    """One sub-task's research: steps done and expected (0: not said yet)."""

    done: int = 0
    of: int = 0
    finished: bool = False


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True)
class ProgressState:
    phase: str = "starting"
    stage: str = "starting"
    planned: int = 1  # researchers planned, every round so far
    steps: int = DEFAULT_STEPS  # a researcher's expected steps, until it says
    slots: int = 0  # researchers run at once (0: not said, all of them)
    run_steps: int = 1  # the run's own steps: planning, evaluations, writing
    run_done: int = 0
    shares: dict[str, Share] = field(default_factory=dict)  # by sub-task id
    high: int = 0  # the highest percent so far: the bar never goes back
    researchers_active: int = 0
    researchers_done: int = 0
    sources: int = 0
    finished: bool = False
    round: int = 1
    target_rounds: int = 1
    tokens: int = 0
    cost_usd: float = 0.0
    waiting: str = ""  # a model call in flight for a while: "researcher on openai:m 40 s"

    @property
    def percent(self) -> int:
        if self.finished:
            return 100
        return self.high

    @property
    def percent_known(self) -> bool:
        """Exploring rounds were not planned, so their share of the run is unknown."""
        return self.finished or self.phase != "exploring"

    def time_done(self) -> tuple[int, int]:
        """(step-times done, step-times in all) as known now: the run's own steps, one after the
        other, and the span of its researchers' steps in ``slots``."""
        said = [s.of for s in self.shares.values() if s.of]
        guess = round(sum(said) / len(said)) if said else self.steps
        expected = [max(s.of or guess, s.done) for s in self.shares.values()]
        left = [of - s.done for of, s in zip(expected, self.shares.values(), strict=True)]
        running = [n for n, s in zip(left, self.shares.values(), strict=True) if not s.finished]
        queued = [guess] * max(0, self.planned - len(self.shares))
        slots = self.slots or len(expected) + len(queued)
        all_steps = span([], [*expected, *queued], slots)
        to_go = span(running, queued, max(slots, len(running)))
        return self.run_done + max(0, all_steps - to_go), self.run_steps + all_steps


def _shown(state: ProgressState) -> ProgressState:
    done, total = state.time_done()
    percent = min(99, 100 * done // max(1, total))
    return replace(state, high=max(state.high, percent))


def _share(state: ProgressState, sid: str, share: Share) -> ProgressState:
    return replace(state, shares={**state.shares, sid: share})


def advance(state: ProgressState, event: Event) -> ProgressState:
    return _shown(_advance(state, event))


def _advance(state: ProgressState, event: Event) -> ProgressState:
    if event.type == "llm_waiting":
        p = event.payload
        said = f"{p.get('role', 'model')} on {p.get('tier', 'the model')} {_int(p.get('elapsed_s'), 0)} s"
        return replace(state, waiting=said)
    if state.waiting and event.type in _ENDS_A_WAIT:
        state = replace(state, waiting="")
    p = event.payload
    sid = p.get("subtask")
    sid = sid if isinstance(sid, str) else ""
    match event.type:
        case "run_started":
            return replace(state, phase="planning", stage="planning")
        case "run_resumed":
            return _resumed(state, p)
        case "plan_ready":
            n = _int(p.get("count"), 1)
            return replace(
                _with_budget(state, p),
                phase="researching",
                stage="researching",
                planned=n,
                target_rounds=_int(p.get("target_rounds"), 1),
            )
        case "round_started":
            r = _int(p.get("round"), state.round + 1)
            # The budget grows when the evaluator delegates (researchers and an evaluation);
            # past the planned rounds we explore.
            stage = "exploring" if r > state.target_rounds else "researching"
            extra = _int(p.get("count"), 0)
            return replace(
                state,
                planned=state.planned + extra,
                run_steps=state.run_steps + (1 if r > state.target_rounds else 0),
                round=r,
                phase=stage,
                stage=stage,
            )
        case "evaluated":
            return replace(state, run_done=min(state.run_steps - 1, state.run_done + 1))
        case "researcher_started":
            state = _share(state, sid, Share())  # a retry starts its steps again
            return replace(state, researchers_active=state.researchers_active + 1)
        case "researcher_progress":
            phase = p.get("phase")
            if state.phase == "exploring" or not isinstance(phase, str):
                phase = state.phase
            old = state.shares.get(sid, Share())
            done = _int(p.get("units"), old.done + 1)
            share = replace(old, done=done, of=max(done, _int(p.get("of"), old.of)))
            return replace(_share(state, sid, share), phase=phase)
        case "source_read" | "source_reused":
            return replace(state, sources=state.sources + 1)
        case "researcher_finished" | "researcher_failed":
            tokens, cost = p.get("tokens", 0), p.get("cost_usd", 0.0)
            old = state.shares.get(sid, Share())
            state = _share(state, sid, replace(old, finished=True))
            return replace(
                state,
                tokens=state.tokens + _int(tokens, 0),
                cost_usd=state.cost_usd + (cost if isinstance(cost, int | float) else 0.0),
                researchers_active=max(0, state.researchers_active - 1),
                researchers_done=state.researchers_done + (0 if old.finished else 1),
            )
        case "writing":
            return replace(state, phase="writing", stage="writing")
        case "run_finished":
            return replace(state, phase="done", stage="done", finished=True, researchers_active=0)
        case _:
            return state


# What a run says once a call it waited for has answered (a researcher moves on, a plan, an
# evaluation or the report arrives); the next wait says itself again within a heartbeat.
_ENDS_A_WAIT = frozenset(
    {
        "plan_ready",
        "evaluated",
        "researcher_progress",
        "researcher_finished",
        "researcher_failed",
        "source_read",
        "writing",
        "run_finished",
    }
)


def _with_budget(state: ProgressState, p: dict[str, Any]) -> ProgressState:
    """``state`` with what ``plan_ready`` or ``run_resumed`` says of the run's steps (``budget``)."""
    return replace(
        state,
        steps=_int(p.get("steps"), state.steps),
        slots=_int(p.get("slots"), state.slots),
        run_steps=_int(p.get("run_steps"), state.run_steps),
        run_done=_int(p.get("run_done"), state.run_done),
    )


def _resumed(state: ProgressState, p: dict[str, Any]) -> ProgressState:
    """A resumed run: sub-tasks its checkpoint did not complete start their steps again, and a
    stream read from the resume on (the CLI) learns the plan and what was completed from here."""
    shares = {k: s for k, s in state.shares.items() if s.finished}
    completed = _int(p.get("completed"), len(shares))
    for k in range(len(shares), completed):  # completed before this stream began
        shares[f"#{k}"] = Share(finished=True)
    return replace(
        _with_budget(state, p),
        phase="researching",
        stage="researching",
        shares=shares,
        planned=_int(p.get("count"), state.planned),
        researchers_active=0,
        researchers_done=len(shares),
        # the sources the checkpoint kept; a replayed log has counted them (and more) already
        sources=max(state.sources, _int(p.get("sources"), 0)),
    )
