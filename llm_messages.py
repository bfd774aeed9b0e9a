"""What a model role is asked and answers: the typed tasks, the drafts they come back as, and the
request/reply envelope every provider speaks.

Split from ``schemas`` (which holds the run's own messages): a model-free provider (extractive) or
a scripted fake answers the same typed task a real model gets as a rendered prompt.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from deepresearch.schemas import Message, ReportSection, Role


class SourceText(Message):
    """A source as shown to a model: numbered within one task."""

    n: int
    url: str
    title: str
    location: str
    text: str
    domain: str = "generic"  # the kind of document it is (``deepresearch.domains``)


class QueriesTask(Message):
    kind: Literal["queries"] = "queries"
    question: str
    notes: tuple[str, ...] = ()  # injected reports / steering, newest last
    max_queries: int = 3


class FindingsTask(Message):
    kind: Literal["findings"] = "findings"
    question: str
    sources: tuple[SourceText, ...]
    notes: tuple[str, ...] = ()
    max_findings: int = 12


class PlanTask(Message):
    kind: Literal["plan"] = "plan"
    query: str
    max_subtasks: int = 5


class EvaluateTask(Message):
    kind: Literal["evaluate"] = "evaluate"
    query: str
    agenda: tuple[str, ...]
    summaries: tuple[str, ...]
    failed: tuple[str, ...] = ()
    round: int = 1
    max_rounds: int  # the round budget (``lifecycle.round_budget``): no delegating in the last
    max_new_subtasks: int = 3


class WriteTask(Message):
    kind: Literal["write"] = "write"
    query: str
    sections: tuple[ReportSection, ...]  # one per sub-task, findings cite by URL
    sources: tuple[SourceText, ...]  # numbered; ``n`` is the number a draft finding cites


class IntentTask(Message):
    """The intent gate's question to a model about a query the rules left undecided."""

    kind: Literal["intent"] = "intent"
    query: str


class RewriteItem(Message):
    """One sentence of a draft: its id within the task, its text and the source numbers it cites."""

    id: int
    text: str
    sources: tuple[int, ...] = ()


class RewriteTask(Message):
    """Sentences the verifier found unsupported by their cited passages, to be rewritten once."""

    kind: Literal["rewrite"] = "rewrite"
    query: str
    claims: tuple[RewriteItem, ...]
    sources: tuple[SourceText, ...]  # numbered as in the WriteTask; text = the cited passages


Task = Annotated[
    QueriesTask | FindingsTask | PlanTask | EvaluateTask | WriteTask | IntentTask | RewriteTask,
    Field(discriminator="kind"),
]


class QueryList(Message):
    queries: tuple[str, ...]


class DraftFinding(Message):
    text: str
    sources: tuple[int, ...] = ()  # numbers of the task's SourceText entries
    section: str = ""  # the headings above it in its source ("Legal Proceedings"), if known


class FindingsDraft(Message):
    summary: str
    findings: tuple[DraftFinding, ...]


class PlanDraft(Message):
    complexity: Literal[1, 2, 3] = 1
    sub_questions: tuple[str, ...]
    kept_whole: str = ""  # why the question was not split, when the plan is the question alone


class IntentDraft(Message):
    intent: Literal["research", "chitchat", "harmful", "ambiguous"] = "research"
    reply: str = ""  # a short reply to small talk, or the clarification question


class DraftSection(Message):
    heading: str
    findings: tuple[DraftFinding, ...]


class WriteDraft(Message):
    answer: str  # plain prose, no markers
    sections: tuple[DraftSection, ...]
    answer_sources: tuple[int, ...] = ()  # task source numbers backing the answer


class RewriteDraft(Message):
    """The rewritten sentences; an empty ``text`` (or a missing id) means: drop the sentence."""

    claims: tuple[RewriteItem, ...]


class ChatMessage(Message):
    role: Literal["system", "user", "assistant"]
    content: str


#: Tokens each task kind may generate: what its reply needs, so a slow local model is not held
#: to a 2,048-token reply it never needed (``llm.max_output_tokens`` overrides per kind).
OUTPUT_CAPS: dict[str, int] = {
    "queries": 256,
    "intent": 256,
    "plan": 768,
    "evaluate": 384,
    "findings": 1536,
    "write": 2048,
    "rewrite": 2048,  # the answer's sentences again: as long as the write
}


class LLMRequest(Message):
    """One model call. ``messages`` is the rendered prompt for real models; ``task`` carries the same
    content typed, so a model-free provider (extractive) or a scripted fake can answer it too."""

    role: Role
    task: Task
    messages: tuple[ChatMessage, ...] = ()
    output_name: str = ""
    output_schema: dict[str, Any] = Field(default_factory=dict)
    max_output_tokens: int = 2048


class LLMReply(Message):
    text: str
    provider: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_tokens: bool = False
    fell_back: str = ""  # the router's note when an earlier tier failed: "The writer fell back..."
