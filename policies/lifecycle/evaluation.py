"""Evaluator rules that need no model. The rest of the order lives in ``policies.lifecycle``:

1. all researchers of a round failed → the reducer stops (or synthesizes earlier rounds) without
   asking the evaluator;
2. coverage of the agenda → the evaluator (model or extractive rule set) judges;
3. the round budget (``lifecycle.round_budget``, sent with each task) → the reducer turns a
   *delegate* past it into a limited synthesis, so the report can say the budget ended research;
4. a reply that is not valid JSON → *synthesize* (``structured.evaluation_or_synthesize``).
"""

from __future__ import annotations

from collections.abc import Sequence

from deepresearch.llm_messages import EvaluateTask
from deepresearch.policies import unsourced
from deepresearch.schemas import Evaluation, ResearcherReport, SubTask


def normalize(decision: Evaluation) -> Evaluation:
    """A *delegate* without new sub-questions cannot be acted on: it means *synthesize*."""
    if decision.action == "delegate" and not any(q.strip() for q in decision.new_subtasks):
        return Evaluation(action="synthesize", reason=f"{decision.reason} (nothing to delegate)")
    return decision


UNSUPPORTED_REASON = "the evaluator's reason stated what the findings do not; it is not shown"


def vetted(decision: Evaluation, task: EvaluateTask) -> Evaluation:
    """The decision with its reason and new sub-questions cut to what the agenda and the findings
    support (``policies.unsourced``): they are shown in events and become report headings."""
    grounds = unsourced.grounds_of(task.query, task.agenda, task.summaries)
    return decision.model_copy(
        update={
            "reason": unsourced.vet(decision.reason, grounds, UNSUPPORTED_REASON),
            "new_subtasks": tuple(unsourced.vet_all(decision.new_subtasks, grounds)),
        }
    )


def evaluate_task(
    query: str, reports: Sequence[ResearcherReport], round_no: int, max_rounds: int
) -> EvaluateTask:
    """What the evaluator sees after a round: the agenda so far, its summaries, what failed, and
    the round budget (the reducer's), so the evaluator knows when its round is the last."""
    return EvaluateTask(
        query=query,
        agenda=tuple(r.question for r in reports),
        summaries=tuple(r.summary if r.status == "ok" else "" for r in reports),
        failed=tuple(r.question for r in reports if r.status != "ok"),
        round=round_no,
        max_rounds=max_rounds,
    )


def new_subtasks(
    decision: Evaluation, existing: Sequence[SubTask], round_no: int
) -> tuple[SubTask, ...]:
    """The delegated questions not asked before, numbered after the existing sub-tasks."""
    asked = {t.question for t in existing}
    fresh = [q for q in dict.fromkeys(decision.new_subtasks) if q.strip() and q not in asked]
    return tuple(
        SubTask(id=f"t{len(existing) + i + 1}", question=q, round=round_no + 1)
        for i, q in enumerate(fresh)
    )
