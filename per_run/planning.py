"""The deep-mode planning call, shared by the Coordinator and the driver (``--review-plan``,
``deep-research plan``), so a reviewed agenda is exactly what the run would have planned."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from deepresearch.config.settings import Settings
from deepresearch.llm_messages import LLMReply, PlanDraft, PlanTask
from deepresearch.policies import unsourced
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import build_request, call_structured


@dataclass(frozen=True)
class Proposal:
    """The planner's agenda, cut to the researchers its chosen complexity allows; what the cut
    left out is kept so the run can say so (an event, and a line under "Gaps and limits")."""

    questions: list[str]
    dropped: list[str]
    complexity: int
    cap: int
    replies: list[LLMReply]
    kept_whole: str = ""  # why the planner researches the question whole, when it does

    def event(self) -> dict[str, JsonValue]:
        """The ``plan_capped`` event's payload."""
        return {
            "complexity": self.complexity,
            "cap": self.cap,
            "kept": len(self.questions),
            "dropped": list(self.dropped),
        }

    def limits(self) -> tuple[str, ...]:
        """One report line per sub-question the cap left unresearched."""
        why = (
            f"the plan is capped at {self.cap} sub-question(s) for complexity {self.complexity}, "
            "deep.researchers_by_complexity"
        )
        whole = (f"{WHOLE_NOTE} ({self.kept_whole.rstrip('.')}).",) if self.kept_whole else ()
        return whole + tuple(f"Not researched ({why}): {q}" for q in self.dropped)


WHOLE_NOTE = "Not split into sub-questions: researched whole, as quick mode does"


async def propose(llm: LLMProvider, query: str, settings: Settings) -> Proposal:
    """The planner's sub-questions (unique, capped by the complexity it chose) and its replies."""
    sizes = settings.deep.researchers_by_complexity
    task = PlanTask(query=query, max_subtasks=max(sizes))
    draft, replies = await call_structured(
        llm, build_request("planner", task, PlanDraft), PlanDraft
    )
    # A plan has no sources: a sub-question keeps only what asserts nothing beyond the query.
    vetted = unsourced.vet_all(draft.sub_questions, grounds=query)
    questions = [q for q in dict.fromkeys(q.strip() for q in vetted) if q]
    cap = sizes[draft.complexity - 1]
    # why the plan is the question alone: model text too, so it keeps only what the query holds
    whole = unsourced.vet(draft.kept_whole, grounds=query) if len(questions) <= 1 else ""
    return Proposal(
        questions[:cap] or [query], questions[cap:], draft.complexity, cap, list(replies), whole
    )
