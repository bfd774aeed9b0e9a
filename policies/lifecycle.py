"""The run lifecycle as a pure reducer: ``reduce(state, event) -> (state, commands)``.

Planning → Researching → Evaluating → (Researching …) → Synthesizing → Done, or Failed. The
Coordinator actor only feeds events in and performs the commands, so every rule about ordering,
parallelism, rounds and budgets lives here and is tested without Ray. An event that does not fit
the current status is ignored (no commands), so a late or duplicated message cannot derail a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from deepresearch.schemas import SubTask

Status = Literal["planning", "researching", "evaluating", "synthesizing", "done", "failed"]
Limit = Literal["rounds", "time", "cost", "failures"]


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class PlanReady:
    subtasks: tuple[SubTask, ...]


@dataclass(frozen=True)
class ResearcherFinished:
    subtask_id: str


@dataclass(frozen=True)
class ResearcherFailed:
    subtask_id: str
    reason: str
    partial: bool = False  # it was stopped (watchdog) but kept some findings


@dataclass(frozen=True)
class Evaluated:
    action: Literal["synthesize", "delegate"]
    new_subtasks: tuple[SubTask, ...] = ()


@dataclass(frozen=True)
class LimitReached:
    limit: Limit


@dataclass(frozen=True)
class Synthesized:
    pass


LifecycleEvent = (
    PlanReady | ResearcherFinished | ResearcherFailed | Evaluated | LimitReached | Synthesized
)


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class SpawnResearcher:
    subtask: SubTask
    inject: tuple[str, ...]  # ids of finished sub-tasks whose reports go into this one's prompt


@dataclass(frozen=True)
class Steer:
    target: str  # a running sub-task
    source: str  # the sub-task that just finished


@dataclass(frozen=True)
class Evaluate:
    round: int


@dataclass(frozen=True)
class Synthesize:
    limited_by: Limit | None = None


@dataclass(frozen=True)
class CancelResearchers:
    reason: str


@dataclass(frozen=True)
class Stop:
    reason: str


Command = SpawnResearcher | Steer | Evaluate | Synthesize | CancelResearchers | Stop


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class LifecycleState:
    max_parallel: int
    max_rounds: int
    evaluate: bool = True  # quick mode synthesizes right after its one round
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
    limited_by: Limit | None = None
    reason: str = ""

    @property
    def terminal(self) -> bool:
        return self.status in ("done", "failed")


def initial(max_parallel: int, max_rounds: int, evaluate: bool = True) -> LifecycleState:
    return LifecycleState(
        max_parallel=max(1, max_parallel), max_rounds=max(1, max_rounds), evaluate=evaluate
    )


def _fill(state: LifecycleState) -> tuple[LifecycleState, list[Command]]:
    """Start pending sub-tasks while there is room under ``max_parallel``."""
    commands: list[Command] = []
    pending, running, spawned = list(state.pending), list(state.running), state.spawned
    injected = dict(state.injected)
    while pending and len(running) < state.max_parallel:
        task = pending.pop(0)
        running.append(task.id)
        spawned += 1
        # A sub-task re-run after a resume gets exactly the reports it got the first time.
        inject = injected.setdefault(task.id, tuple(sorted(state.ok, key=_order)))
        commands.append(SpawnResearcher(task, inject))
    state = replace(
        state,
        pending=tuple(pending),
        running=tuple(running),
        spawned=spawned,
        injected=tuple(injected.items()),
    )
    return state, commands


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
        return (
            replace(state, status="synthesizing", limited_by="failures"),
            [Synthesize("failures")],
        )
    if not state.evaluate:
        return replace(state, status="synthesizing"), [Synthesize(None)]
    return replace(state, status="evaluating"), [Evaluate(state.round)]


def _researcher_done(
    state: LifecycleState, subtask_id: str, ok: bool, partial: bool = False
) -> tuple[LifecycleState, list[Command]]:
    if subtask_id not in state.running:
        return state, []
    running = tuple(i for i in state.running if i != subtask_id)
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
        case ResearcherFinished(sid):
            return _researcher_done(state, sid, True)
        case ResearcherFailed(sid, _, partial):
            return _researcher_done(state, sid, False, partial)
        case Evaluated(action, new) if state.status == "evaluating":
            known = set(state.ok) | set(state.failed)
            fresh = tuple(t for t in new if t.id not in known)
            if action == "synthesize" or not fresh:
                return replace(state, status="synthesizing"), [Synthesize(None)]
            if state.round >= state.max_rounds:
                return replace(state, status="synthesizing", limited_by="rounds"), [
                    Synthesize("rounds")
                ]
            state = replace(
                state,
                status="researching",
                round=state.round + 1,
                pending=fresh,
                round_ids=tuple(t.id for t in fresh),
            )
            return _fill(state)
        case LimitReached(limit) if state.status in ("planning", "researching", "evaluating"):
            commands: list[Command] = []
            if state.running:
                commands.append(CancelResearchers(f"{limit} limit reached"))
            if not state.ok:
                reason = f"the {limit} limit was reached before any researcher finished"
                return replace(
                    state, status="failed", limited_by=limit, reason=reason, pending=()
                ), [*commands, Stop(reason)]
            state = replace(state, status="synthesizing", limited_by=limit, pending=())
            return state, [*commands, Synthesize(limit)]
        case Synthesized() if state.status == "synthesizing":
            return replace(state, status="done"), []
        case _:
            return state, []


def resume(
    state: LifecycleState, subtasks: Mapping[str, SubTask]
) -> tuple[LifecycleState, list[Command]]:
    """Continue from a checkpointed state: researchers that were in flight start again (with the
    reports they were given the first time), and a pending evaluate or synthesize is issued again.
    ``planning`` has no plan yet: the caller plans afresh. A terminal state means the process
    ended after its last checkpoint but before the run returned: the report (never checkpointed)
    is written again from the completed reports."""
    if state.status == "done":
        return state, [Synthesize(state.limited_by)]
    if state.status == "failed":
        return state, [Stop(state.reason)]
    if state.status == "planning":
        return state, []
    if state.status == "evaluating":
        return state, [Evaluate(state.round)]
    if state.status == "synthesizing":
        return replace(state, running=()), [Synthesize(state.limited_by)]
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
    for key in ("running", "ok", "failed", "partial", "round_ids"):
        fields[key] = tuple(data.get(key, ()))
    fields["injected"] = tuple((k, tuple(v)) for k, v in data.get("injected", ()))
    return LifecycleState(**fields)


def max_researchers(first_round: int, max_rounds: int, per_round: int) -> int:
    """Upper bound on researchers one run can start: the first round plus each delegated round."""
    return first_round + max(0, max_rounds - 1) * per_round
