"""The checkpoint's format: what the Coordinator writes after every lifecycle step and reads back on
resume. One place, so the writer and the reader cannot drift apart. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deepresearch.policies.lifecycle import reducer as lc
from deepresearch.policies.verification.citations import usable_sources
from deepresearch.schemas import Request, ResearcherReport, SubTask, Usage

VERSION: Literal[1] = 1


def payload(
    request: Request,
    state: lc.LifecycleState,
    subtasks: Sequence[SubTask],
    completed: Sequence[ResearcherReport],
    usage: Usage,
    providers: Mapping[str, str],
    plan_limits: Sequence[str] = (),
    fell_back: Mapping[str, str] | None = None,
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
        "fell_back": dict(fell_back or {}),  # role -> the report's note of its first fallback
    }


@dataclass(frozen=True)
class Restored:
    state: lc.LifecycleState
    subtasks: dict[str, SubTask]  # in plan order
    reports: dict[str, ResearcherReport]  # completed work: never redone
    usage: Usage
    providers: dict[str, str]
    plan_limits: tuple[str, ...] = ()
    fell_back: dict[str, str] = field(default_factory=dict)


class CheckpointShape(BaseModel):
    """What ``payload`` writes, as a schema: a file whose hash is right but whose content is not
    a checkpoint (edited by hand, written by another program) is refused before the run starts,
    not in the crew half-way through restoring it. Unknown keys are tolerated (a newer writer)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    version: Literal[1] = VERSION
    request: Request
    lifecycle: lc.LifecycleState
    subtasks: list[SubTask] = Field(default_factory=list)
    completed: list[ResearcherReport] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    providers: dict[str, str] = Field(default_factory=dict)
    plan_limits: list[str] = Field(default_factory=list)
    fell_back: dict[str, str] = Field(default_factory=dict)


def problem(data: Mapping[str, Any]) -> str | None:
    """Why ``data`` is not a checkpoint ``restore`` can use (the first error), or None."""
    try:
        CheckpointShape.model_validate(dict(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "checkpoint"
        return f"not a checkpoint ({where}: {first['msg']})"
    return None


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
        fell_back=dict(data.get("fell_back", {})),
    )
