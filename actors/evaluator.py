"""The Evaluator (a plain class the crew's ``CrewEvaluator`` actor runs per call): after a round of
research, *synthesize* or *delegate* new sub-questions.

The model (or the extractive rule set) judges coverage of the agenda; the ordering rules and the
round budget are the lifecycle reducer's. A reply that is not valid JSON counts as *synthesize*.
"""

from __future__ import annotations

from deepresearch.llm_messages import EvaluateTask, LLMReply
from deepresearch.policies.lifecycle.evaluation import normalize, vetted
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import build_request, evaluation_or_synthesize
from deepresearch.schemas import Evaluation


class Evaluator:
    def __init__(self, llm: LLMProvider) -> None:
        self._llm = llm

    async def evaluate(self, task: EvaluateTask) -> tuple[Evaluation, list[LLMReply]]:
        decision, replies = await evaluation_or_synthesize(
            self._llm, build_request("evaluator", task, Evaluation)
        )
        return normalize(vetted(decision, task)), replies
