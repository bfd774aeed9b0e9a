"""Evaluator rules that need no model. The rest of the order lives in ``policies.lifecycle``:

1. all researchers of a round failed → the reducer stops (or synthesizes earlier rounds) without
   asking the evaluator;
2. coverage of the agenda → the evaluator (model or extractive rule set) judges;
3. the round budget ``target_rounds + 2`` → the reducer turns a *delegate* past it into a limited
   synthesis, so the report can say the budget ended the research;
4. a reply that is not valid JSON → *synthesize* (``structured.evaluation_or_synthesize``).
"""

from __future__ import annotations

from deepresearch.schemas import Evaluation


def round_budget(target_rounds: int) -> int:
    return target_rounds + 2


def normalize(decision: Evaluation) -> Evaluation:
    """A *delegate* without new sub-questions cannot be acted on: it means *synthesize*."""
    if decision.action == "delegate" and not any(q.strip() for q in decision.new_subtasks):
        return Evaluation(action="synthesize", reason=f"{decision.reason} (nothing to delegate)")
    return decision
