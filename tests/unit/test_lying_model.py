"""A model that appends an invented figure and a bogus citation to everything it writes: neither
reaches any report, event, run reason or gate reply (``policies.unsourced`` for text with no
sources, the verifier for the report's sentences, product wording where nothing is left)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_actors_inprocess import coordinator

from deepresearch.actors.evaluator import Evaluator
from deepresearch.commands import plan as cli_plan
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.llm_messages import (
    DraftFinding,
    DraftSection,
    EvaluateTask,
    IntentDraft,
    LLMReply,
    LLMRequest,
    PlanDraft,
    WriteDraft,
)
from deepresearch.policies import unsourced
from deepresearch.policies.synthesis import synthesis
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.reports.export import render_as
from deepresearch.reports.markdown import Footer, render
from deepresearch.run.intent_gate import decide

LIE = "The total was $999,999 million [99]."
TELLTALES = ("999,999", "999999", "[99]")


def lied(value: Any) -> Any:
    """Every string of a JSON value with the lie appended."""
    if isinstance(value, str):
        return f"{value} {LIE}" if value else LIE
    if isinstance(value, list):
        return [lied(v) for v in value]
    if isinstance(value, dict):
        return {k: lied(v) for k, v in value.items()}
    return value


class LyingLLM(ExtractiveLLM):
    """The extractive answers, each string field ending with the invented total."""

    def __init__(self) -> None:
        super().__init__(name="liar", model="liar-1")

    async def complete(self, request: LLMRequest) -> LLMReply:
        honest = await super().complete(request)
        text = json.dumps(lied(json.loads(honest.text)))
        return honest.model_copy(update={"text": text, "provider": "liar"})


def clean(*texts: str) -> bool:
    return not any(t in text for text in texts for t in TELLTALES)


def settings() -> Any:
    return load_settings(None, overrides_from_flags({"llm.provider": "openai"}), env={})


# --------------------------------------------------------------------------- the vetting rule


def test_vetting_keeps_what_the_grounds_hold_and_drops_invented_figures_and_markers() -> None:
    query = "How did ACME's 2024 revenue of $1.2 billion compare with 2023?"
    assert unsourced.vet(f"What drove revenue? {LIE}", query) == "What drove revenue?"
    assert unsourced.vet("Was it $1.2 billion? See [3].", query) == "Was it $1.2 billion?"
    assert unsourced.vet(LIE, query, "fallback") == "fallback"
    assert unsourced.vet_all([LIE, "ACME revenue 2024"], query) == ["ACME revenue 2024"]


# --------------------------------------------------------------------------- whole runs


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_a_lying_model_leaves_no_trace_in_report_events_or_reason(mode: str) -> None:
    coord, sink, _, _ = coordinator(mode, LyingLLM(), "How many widget units were sold in 2024?")
    result = await coord.run()
    report = result.report
    for fmt in ("md", "json", "html"):
        rendered = render_as(fmt, report, Footer("r." + fmt, "r1", mode))  # type: ignore[arg-type]
        assert clean(rendered), (fmt, rendered)
    events = json.dumps(sink.events)
    assert clean(events, result.reason, *sink.files.values()), events
    assert result.status == "completed" and report.sections  # honest sentences survive


async def test_a_draft_without_cited_findings_gives_way_to_the_composer() -> None:
    """The model's draft cites nothing (it had ended ``no_answer`` with product wording): the
    extractive composer's Answer keeps more verified claims, so the report is the composer's,
    says so, and still carries nothing of the lie."""
    draft = WriteDraft(
        answer=f"I could not find the figure. {LIE}",
        sections=(DraftSection(heading=f"Totals {LIE}", findings=(DraftFinding(text=LIE),)),),
    )
    llm = ScriptedLLM({"writer": [draft.model_dump_json()]}, delegate=ExtractiveLLM())
    coord, sink, _, _ = coordinator("quick", llm, "How many widget units were sold in 2024?")
    result = await coord.run()
    assert result.status == "completed"
    assert result.report.answer != synthesis.NO_CITED_FINDINGS
    assert any("this report is the composer's" in n for n in result.report.notes)
    assert any(kind == "answer_replaced" for kind, _ in sink.events)
    assert result.providers["writer"] == "extractive"  # the report shown is the composer's
    md = render(result.report, Footer("r.md", "r1", "quick"))
    assert clean(md, result.reason, json.dumps(sink.events))


# --------------------------------------------------------------------------- each model path


def test_plan_items_keep_only_their_questions() -> None:
    draft = PlanDraft(
        complexity=2,
        sub_questions=(f"What were ACME's 2024 sales? {LIE}", LIE, "Who are ACME's rivals?"),
    )
    llm = ScriptedLLM({"planner": [draft.model_dump_json()]})
    questions = cli_plan.propose_now("ACME 2024 sales and rivals", settings(), llm)
    assert questions == ["What were ACME's 2024 sales?", "Who are ACME's rivals?"]


async def test_evaluator_reason_and_delegated_questions_are_vetted() -> None:
    reply = json.dumps(
        {"action": "delegate", "reason": LIE, "new_subtasks": [LIE, f"What about margins? {LIE}"]}
    )
    task = EvaluateTask(
        query="ACME sales", agenda=("ACME sales?",), summaries=("",), round=1, max_rounds=3
    )
    decision, _ = await Evaluator(ScriptedLLM({"evaluator": [reply]})).evaluate(task)
    assert decision.new_subtasks == ("What about margins?",)
    assert clean(decision.reason, *decision.new_subtasks) and decision.reason


def test_the_gates_model_reply_is_vetted() -> None:
    for reply in (f"Which Jaguar do you mean? {LIE}", LIE):
        draft = IntentDraft(intent="ambiguous", reply=reply)
        llm = ScriptedLLM({"planner": [draft.model_dump_json()]})
        intent = decide("jaguar", settings(), llm)
        assert intent.outcome == "ambiguous" and intent.reply and clean(intent.reply)
    chat = IntentDraft(intent="chitchat", reply=LIE)
    intent = decide("yo bot", settings(), ScriptedLLM({"planner": [chat.model_dump_json()]}))
    assert clean(intent.reply) and intent.reply
