"""The run lifecycle as a pure reducer: ``reduce(state, event) -> (state, commands)``.

Planning → Researching → Evaluating → (Researching …) → Synthesizing → Done, or Failed. The
Coordinator actor only feeds events in and performs the commands, so every rule lives here and is
tested without Ray: parallelism, injection and steering, the round budget (``round_budget``, the
one place it is computed; ``Evaluate`` hands it to the evaluator), the crash retry (once per
sub-task, on a fresh researcher), the cost cap (``Charged``), and whether the report is written
or declined (``min_sources`` usable sources). An event that does not fit the current status is
ignored (no commands), so a late or duplicated message cannot derail a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from deepresearch.policies.lifecycle.events import (
    CancelResearchers,
    Charged,
    Command,
    Decline,
    Evaluate,
    Evaluated,
    LifecycleEvent,
    Limit,
    LimitReached,
    NewRound,
    PlanReady,
    ResearcherFailed,
    ResearcherFinished,
    RetryResearcher,
    SpawnResearcher,
    Status,
    Steer,
    Stop,
    Synthesize,
    Synthesized,
)
from deepresearch.schemas import SubTask

if TYPE_CHECKING:
    from deepresearch.config.settings import Settings

__all__ = [
    "CancelResearchers",
    "Charged",
    "Command",
    "Decline",
    "Evaluate",
    "Evaluated",
    "LifecycleEvent",
    "LifecycleState",
    "Limit",
    "LimitReached",
    "NewRound",
    "PlanReady",
    "ResearcherFailed",
    "ResearcherFinished",
    "RetryResearcher",
    "SpawnResearcher",
    "Status",
    "Steer",
    "Stop",
    "Synthesize",
    "Synthesized",
    "for_run",
    "from_json",
    "initial",
    "max_researchers",
    "reduce",
    "resume",
    "round_budget",
    "to_json",
]


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class LifecycleState:
    max_parallel: int
    max_rounds: int
    evaluate: bool = True  # quick mode synthesizes right after its one round
    max_cost_usd: float | None = None  # ``Charged`` at or over it ends research
    min_sources: int = 1  # fewer usable sources than this: decline instead of writing
    status: Status = "planning"
    round: int = 1
    pending: tuple[SubTask, ...] = ()
    running: tuple[str, ...] = ()
    ok: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    partial: tuple[str, ...] = ()  # failed, but with findings worth synthesizing
    round_ids: tuple[str, ...] = ()  # sub-tasks of the current round
    injected: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (sub-task, reports injected at spawn)
    spawned: int = 0
    retried: tuple[str, ...] = ()  # sub-tasks retried after a crash (once each)
    cited: tuple[str, ...] = ()  # usable sources: cited by some researcher's findings
    limited_by: Limit | None = None
    reason: str = ""

    @property
    def terminal(self) -> bool:
        return self.status in ("done", "failed")


def initial(
    max_parallel: int,
    max_rounds: int,
    evaluate: bool = True,
    max_cost_usd: float | None = None,
    min_sources: int = 1,
) -> LifecycleState:
    return LifecycleState(
        max_parallel=max(1, max_parallel),
        max_rounds=max(1, max_rounds),
        evaluate=evaluate,
        max_cost_usd=max_cost_usd,
        min_sources=max(0, min_sources),
    )


def round_budget(target_rounds: int) -> int:
    """The rounds a deep run may take: the target plus two the evaluator may delegate."""
    return target_rounds + 2


def for_run(settings: Settings, quick: bool, evaluate: bool) -> LifecycleState:
    """A run's starting state from its settings: quick mode is one researcher and one round; a
    deep run without evaluation (a user-fixed agenda) researches its plan once."""
    return initial(
        1 if quick else settings.deep.max_parallel,
        round_budget(settings.deep.target_rounds) if evaluate else 1,
        evaluate=evaluate,
        max_cost_usd=settings.llm.max_cost_usd,
        min_sources=settings.run.min_sources,
    )


def _conclude(state: LifecycleState, limited_by: Limit | None) -> tuple[LifecycleState, Command]:
    """Research is over: write the report when enough sources back it, else decline."""
    state = replace(state, status="synthesizing", limited_by=limited_by, pending=())
    if state.cited and len(state.cited) >= state.min_sources:
        return state, Synthesize(limited_by)
    return state, Decline(limited_by)


def _fill(state: LifecycleState) -> tuple[LifecycleState, list[Command]]:
    """Start pending sub-tasks, in plan order, while there is room under ``max_parallel`` and
    each one's predecessors (``_ahead``) have ended.

    A sub-task is given the reports of the earlier rounds and of its predecessors, never of
    whichever siblings happened to finish first: its notes shape its queries, so an injection
    that followed arrival order would make the report depend on timing, and a resumed run,
    whose restarted sub-tasks finish in another order, would write another report."""
    commands: list[Command] = []
    pending, running, spawned = list(state.pending), list(state.running), state.spawned
    injected = dict(state.injected)
    ended = set(state.ok) | set(state.failed)
    while pending and len(running) < state.max_parallel:
        ahead = _ahead(state, pending[0].id)
        if not ended.issuperset(ahead):  # a slot is free, but not yet this one's turn
            break
        task = pending.pop(0)
        running.append(task.id)
        spawned += 1
        # A sub-task re-run after a resume gets exactly the reports it got the first time.
        earlier = [i for i in state.ok if i not in state.round_ids or i in ahead]
        inject = injected.setdefault(task.id, tuple(sorted(earlier, key=_order)))
        commands.append(SpawnResearcher(task, inject))
    state = replace(
        state,
        pending=tuple(pending),
        running=tuple(running),
        spawned=spawned,
        injected=tuple(injected.items()),
    )
    return state, commands


def _ahead(state: LifecycleState, subtask_id: str) -> tuple[str, ...]:
    """The sub-tasks of the round a sub-task waits for: those ``max_parallel`` or more places
    before it in plan order. With ``max_parallel`` slots it would have got a slot after as many
    had ended anyway; waiting for these ones makes what it is given the same in every run."""
    if subtask_id not in state.round_ids:
        return ()
    place = state.round_ids.index(subtask_id)
    return state.round_ids[: max(0, place - state.max_parallel + 1)]


def _order(subtask_id: str) -> tuple[int, str]:
    """Plan order of ids like ``t12`` (numeric part first), so injected notes are deterministic."""
    digits = "".join(ch for ch in subtask_id if ch.isdigit())
    return (int(digits) if digits else 0, subtask_id)


def _round_over(state: LifecycleState) -> tuple[LifecycleState, list[Command]]:
    round_ok = [i for i in state.round_ids if i in state.ok]
    if not round_ok:
        if not state.ok and not state.partial:
            reason = "every researcher failed"
            return replace(state, status="failed", reason=reason), [Stop(reason)]
        state, command = _conclude(state, "failures")
        return state, [command]
    if not state.evaluate:
        state, command = _conclude(state, None)
        return state, [command]
    return replace(state, status="evaluating"), [Evaluate(state.round, state.max_rounds)]


def _researcher_done(
    state: LifecycleState, subtask_id: str, ok: bool, partial: bool, cited: tuple[str, ...]
) -> tuple[LifecycleState, list[Command]]:
    if subtask_id not in state.running:
        return state, []
    running = tuple(i for i in state.running if i != subtask_id)
    state = replace(state, cited=tuple(dict.fromkeys((*state.cited, *cited))))
    if ok:
        state = replace(state, running=running, ok=(*state.ok, subtask_id))
    else:
        state = replace(state, running=running, failed=(*state.failed, subtask_id))
        if partial:
            state = replace(state, partial=(*state.partial, subtask_id))
    commands: list[Command] = []
    if state.status != "researching":  # a limit already moved the run on: just account for it
        return state, commands
    if ok:
        commands += [Steer(other, subtask_id) for other in running]
    state, spawn = _fill(state)
    commands += spawn
    if not state.running and not state.pending:
        state, more = _round_over(state)
        commands += more
    return state, commands


def reduce(state: LifecycleState, event: LifecycleEvent) -> tuple[LifecycleState, list[Command]]:
    if state.terminal:
        return state, []
    match event:
        case PlanReady(subtasks) if state.status == "planning":
            if not subtasks:
                reason = "the planner produced no sub-question"
                return replace(state, status="failed", reason=reason), [Stop(reason)]
            state = replace(
                state,
                status="researching",
                pending=subtasks,
                round_ids=tuple(t.id for t in subtasks),
            )
            return _fill(state)
        case ResearcherFinished(sid, cited):
            return _researcher_done(state, sid, True, False, cited)
        case ResearcherFailed(sid, _, partial, crashed, cited):
            if crashed and _may_retry(state, sid):
                inject = dict(state.injected).get(sid, ())
                return replace(state, retried=(*state.retried, sid)), [RetryResearcher(sid, inject)]
            return _researcher_done(state, sid, False, partial, cited)
        case Charged(cost) if state.max_cost_usd is not None and cost >= state.max_cost_usd:
            return _limit(state, "cost")
        case Evaluated(action, new) if state.status == "evaluating":
            return _evaluated(state, action, new)
        case LimitReached(limit):
            return _limit(state, limit)
        case Synthesized() if state.status == "synthesizing":
            return replace(state, status="done"), []
        case _:
            return state, []


def _may_retry(state: LifecycleState, subtask_id: str) -> bool:
    """Once per sub-task, and only while research goes on (a limit may have ended it)."""
    return (
        state.status == "researching"
        and subtask_id in state.running
        and subtask_id not in state.retried
    )


def _evaluated(
    state: LifecycleState, action: str, new: tuple[SubTask, ...]
) -> tuple[LifecycleState, list[Command]]:
    known = set(state.ok) | set(state.failed)
    fresh = tuple(t for t in new if t.id not in known)
    if action == "synthesize" or not fresh:
        state, command = _conclude(state, None)
        return state, [command]
    if state.round >= state.max_rounds:
        state, command = _conclude(state, "rounds")
        return state, [command]
    state = replace(
        state,
        status="researching",
        round=state.round + 1,
        pending=fresh,
        round_ids=tuple(t.id for t in fresh),
    )
    state, spawn = _fill(state)
    return state, [NewRound(state.round, fresh), *spawn]


def _limit(state: LifecycleState, limit: Limit) -> tuple[LifecycleState, list[Command]]:
    """A time, cost or round limit ends research: cancel what runs, write from what exists."""
    if state.status not in ("planning", "researching", "evaluating"):
        return state, []
    commands: list[Command] = []
    if state.running:
        commands.append(CancelResearchers(f"{limit} limit reached"))
    if not state.ok:
        reason = f"the {limit} limit was reached before any researcher finished"
        return replace(state, status="failed", limited_by=limit, reason=reason, pending=()), [
            *commands,
            Stop(reason),
        ]
    state, command = _conclude(state, limit)
    return state, [*commands, command]


def resume(
    state: LifecycleState, subtasks: Mapping[str, SubTask]
) -> tuple[LifecycleState, list[Command]]:
    """Continue from a checkpointed state: researchers that were in flight start again (with the
    reports they were given the first time), and a pending evaluate or synthesize is issued again.
    ``planning`` has no plan yet: the caller plans afresh. A terminal state means the process
    ended after its last checkpoint but before the run returned: the report (never checkpointed)
    is written again from the completed reports."""
    if state.status in ("done", "synthesizing"):
        done = state.status == "done"
        again, command = _conclude(replace(state, running=()), state.limited_by)
        return (state if done else again), [command]
    if state.status == "failed":
        return state, [Stop(state.reason)]
    if state.status == "planning":
        return state, []
    if state.status == "evaluating":
        return state, [Evaluate(state.round, state.max_rounds)]
    rerun = tuple(subtasks[i] for i in state.running if i in subtasks)
    state = replace(
        state, running=(), pending=rerun + state.pending, spawned=state.spawned - len(rerun)
    )
    state, commands = _fill(state)
    if not state.running and not state.pending:
        state, more = _round_over(state)
        commands += more
    return state, commands


def to_json(state: LifecycleState) -> dict[str, Any]:
    data = asdict(state)
    data["pending"] = [t.model_dump(mode="json") for t in state.pending]
    return data


def from_json(data: Mapping[str, Any]) -> LifecycleState:
    fields = dict(data)
    fields["pending"] = tuple(SubTask.model_validate(t) for t in data.get("pending", ()))
    for key in ("running", "ok", "failed", "partial", "round_ids", "retried", "cited"):
        fields[key] = tuple(data.get(key, ()))
    fields["injected"] = tuple((k, tuple(v)) for k, v in data.get("injected", ()))
    return LifecycleState(**fields)


def max_researchers(first_round: int, max_rounds: int, per_round: int) -> int:
    """Upper bound on researchers one run can start: the first round plus each delegated round."""
    return first_round + max(0, max_rounds - 1) * per_round
