"""The checkpoint's format: what the Coordinator writes after every lifecycle step and reads back on
resume. One place, so the writer and the reader cannot drift apart. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from deepresearch.policies import lifecycle as lc
from deepresearch.policies.sufficiency import usable_sources
from deepresearch.schemas import Request, ResearcherReport, SubTask, Usage

VERSION = 1


def payload(
    request: Request,
    state: lc.LifecycleState,
    subtasks: Sequence[SubTask],
    completed: Sequence[ResearcherReport],
    usage: Usage,
    providers: Mapping[str, str],
    plan_limits: Sequence[str] = (),
) -> dict[str, Any]:
    return {
        "version": VERSION,
        "request": request.model_dump(mode="json"),
        "lifecycle": lc.to_json(state),
        "subtasks": [t.model_dump(mode="json") for t in subtasks],
        "completed": [r.model_dump(mode="json") for r in completed],
        "usage": usage.model_dump(mode="json"),
        "providers": dict(providers),
        "plan_limits": list(plan_limits),  # agenda items the planner's cap left out
    }


@dataclass(frozen=True)
class Restored:
    state: lc.LifecycleState
    subtasks: dict[str, SubTask]  # in plan order
    reports: dict[str, ResearcherReport]  # completed work: never redone
    usage: Usage
    providers: dict[str, str]
    plan_limits: tuple[str, ...] = ()


def completed_ids(data: Mapping[str, Any] | None) -> set[str]:
    """The ids of the sub-tasks a checkpoint holds finished reports of (none without one)."""
    return {str(r.get("subtask_id")) for r in (data or {}).get("completed", [])}


def restore(data: Mapping[str, Any]) -> Restored:
    tasks = [SubTask.model_validate(t) for t in data.get("subtasks", [])]
    reports = [ResearcherReport.model_validate(r) for r in data.get("completed", [])]
    state = lc.from_json(data["lifecycle"])
    if "cited" not in data["lifecycle"]:  # written before the reducer counted usable sources
        state = replace(state, cited=tuple(usable_sources(reports)))
    return Restored(
        state=state,
        subtasks={t.id: t for t in tasks},
        reports={r.subtask_id: r for r in reports},
        usage=Usage.model_validate(data.get("usage", {})),
        providers=dict(data.get("providers", {})),
        plan_limits=tuple(data.get("plan_limits", [])),
    )
