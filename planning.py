"""The deep-mode planning call, shared by the Coordinator and the driver (``--review-plan``,
``deep-research plan``), so a reviewed agenda is exactly what the run would have planned."""

from __future__ import annotations

import asyncio
import os

from deepresearch.config.settings import Settings
from deepresearch.llm_messages import LLMReply, PlanDraft, PlanTask
from deepresearch.policies import unsourced
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import build_request, call_structured


async def propose(
    llm: LLMProvider, query: str, settings: Settings
) -> tuple[list[str], list[LLMReply]]:
    """The planner's sub-questions (unique, capped by the complexity it chose) and its replies."""
    sizes = settings.deep.researchers_by_complexity
    task = PlanTask(query=query, max_subtasks=max(sizes))
    draft, replies = await call_structured(
        llm, build_request("planner", task, PlanDraft), PlanDraft
    )
    # A plan has no sources: a sub-question keeps only what asserts nothing beyond the query.
    questions = list(dict.fromkeys(unsourced.vet_all(draft.sub_questions, grounds=query)))
    return questions[: sizes[draft.complexity - 1]] or [query], replies


def propose_now(query: str, settings: Settings, llm: LLMProvider | None = None) -> list[str]:
    """``propose`` from synchronous driver code, through the same router a run would use."""
    if llm is None:
        from deepresearch import assembly
        from deepresearch.providers.llm.registry import keys_from_env

        llm = assembly.build_llm_provider(settings, keys_from_env(os.environ))
    questions, _ = asyncio.run(propose(llm, query, settings))
    return questions
