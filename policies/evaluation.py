"""Evaluator rules that need no model, applied in order before the model is asked.

1. Every researcher of the round failed: stop (the run ends with an honest no-answer report).
2. The round budget (``target_rounds + 2``) is a hard limit: synthesize from what exists.
Coverage of the agenda is the model's judgement (or the extractive rule set's).
"""

from __future__ import annotations

from deepresearch.schemas import EvaluateTask, Evaluation

ALL_FAILED = "every researcher of the round failed"
ROUND_BUDGET = "round budget reached"


def round_budget(target_rounds: int) -> int:
    return target_rounds + 2


def pre_decide(task: EvaluateTask, max_rounds: int) -> Evaluation | None:
    if task.failed and len(task.failed) >= len(task.agenda):
        return Evaluation(action="synthesize", reason=ALL_FAILED)
    if task.round >= max_rounds:
        return Evaluation(action="synthesize", reason=ROUND_BUDGET)
    return None
