"""The lifecycle reducer's vocabulary: the events fed into it and the commands it returns.

Small frozen dataclasses, so a decision is a value a test compares and a checkpoint never holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
    cited: tuple[str, ...] = ()  # sources its findings cite (usable for the report)


@dataclass(frozen=True)
class ResearcherFailed:
    subtask_id: str
    reason: str
    partial: bool = False  # it was stopped (watchdog) but kept some findings
    crashed: bool = False  # its process died: worth one retry on a fresh researcher
    cited: tuple[str, ...] = ()


@dataclass(frozen=True)
class Charged:
    """The run's total spend so far, sent whenever it grows."""

    cost_usd: float


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
    PlanReady
    | ResearcherFinished
    | ResearcherFailed
    | Charged
    | Evaluated
    | LimitReached
    | Synthesized
)


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class SpawnResearcher:
    subtask: SubTask
    inject: tuple[str, ...]  # ids of finished sub-tasks whose reports go into this one's prompt


@dataclass(frozen=True)
class RetryResearcher:
    subtask_id: str  # still running: its first researcher's process died
    inject: tuple[str, ...]  # the reports it was given the first time


@dataclass(frozen=True)
class NewRound:
    round: int
    subtasks: tuple[SubTask, ...]  # the delegated sub-tasks the round researches


@dataclass(frozen=True)
class Steer:
    target: str  # a running sub-task
    source: str  # the sub-task that just finished


@dataclass(frozen=True)
class Evaluate:
    round: int
    max_rounds: int  # the round budget: the evaluator's last round is this one


@dataclass(frozen=True)
class Synthesize:
    """Write the report from the findings."""

    limited_by: Limit | None = None


@dataclass(frozen=True)
class Decline:
    """Too few usable sources: the honest could-not-research report, no answer."""

    limited_by: Limit | None = None


@dataclass(frozen=True)
class CancelResearchers:
    reason: str


@dataclass(frozen=True)
class Stop:
    reason: str


Command = (
    SpawnResearcher
    | RetryResearcher
    | NewRound
    | Steer
    | Evaluate
    | Synthesize
    | Decline
    | CancelResearchers
    | Stop
)
