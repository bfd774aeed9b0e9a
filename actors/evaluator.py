"""The Evaluator actor: after a round of research, *synthesize* or *delegate* new sub-questions.

Its rules that need no model live in ``policies.evaluation``; the model (or the extractive rule set)
judges coverage. A reply that is not valid JSON counts as *synthesize* (documented rule).
"""

from __future__ import annotations

from deepresearch.policies.evaluation import pre_decide
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import build_request, evaluation_or_synthesize
from deepresearch.schemas import EvaluateTask, Evaluation, LLMReply


class Evaluator:
    def __init__(self, llm: LLMProvider, max_rounds: int) -> None:
        self._llm = llm
        self._max_rounds = max_rounds

    async def evaluate(self, task: EvaluateTask) -> tuple[Evaluation, list[LLMReply]]:
        ruled = pre_decide(task, self._max_rounds)
        if ruled is not None:
            return ruled, []
        decision, replies = await evaluation_or_synthesize(
            self._llm, build_request("evaluator", task, Evaluation)
        )
        if decision.action == "delegate" and not decision.new_subtasks:
            decision = Evaluation(
                action="synthesize", reason=f"{decision.reason} (nothing to delegate)"
            )
        return decision, replies
