"""The planner's cap (``deep.researchers_by_complexity``) never drops an agenda item silently: the
run emits ``plan_capped`` and the report lists each item it did not research under "Gaps and
limits", also after a resume."""

from __future__ import annotations

import re

from test_actors_inprocess import coordinator, settings

from deepresearch.llm_messages import PlanDraft
from deepresearch.per_run import planning
from deepresearch.policies.lifecycle import checkpoint
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.reports.markdown import Footer, render
from deepresearch.schemas import Evaluation

AGENDA = (
    "What were widget sales in 2024?",
    "What was gadget output in 2024?",
    "How many plants made widgets in 2024?",
    "What did a widget cost in 2024?",
    "What was gadget output in 2024?",  # a duplicate is not an item the cap dropped
)


def planner(complexity: int) -> ScriptedLLM:
    draft = PlanDraft(complexity=complexity, sub_questions=AGENDA)  # type: ignore[arg-type]
    synthesize = Evaluation(action="synthesize", reason="enough").model_dump_json()
    return ScriptedLLM(
        {"planner": [draft.model_dump_json()], "evaluator": [synthesize] * 3},
        delegate=ExtractiveLLM(),
    )


async def test_propose_keeps_what_the_cap_drops() -> None:
    s = settings(**{"deep.researchers_by_complexity": [2, 3, 5]})
    proposal = await planning.propose(planner(1), "Widgets and gadgets in 2024", s)
    assert proposal.questions == list(AGENDA[:2])
    assert proposal.dropped == list(AGENDA[2:4])
    assert proposal.event() == {"complexity": 1, "cap": 2, "kept": 2, "dropped": list(AGENDA[2:4])}
    assert len(proposal.limits()) == 2 and AGENDA[2] in proposal.limits()[0]
    assert "deep.researchers_by_complexity" in proposal.limits()[0]
    full = await planning.propose(planner(3), "Widgets and gadgets in 2024", s)
    assert full.questions == list(AGENDA[:4]) and full.dropped == [] and full.limits() == ()


async def test_a_capped_plan_is_said_in_an_event_and_in_the_report() -> None:
    coord, sink, _, spawner = coordinator(
        "deep",
        planner(1),
        "Widget sales, gadget output, plant count and widget price in 2024",
        **{"deep.researchers_by_complexity": [2, 3, 5], "deep.max_parallel": 2},
    )
    result = await coord.run()
    capped = [p for t, p in sink.events if t == "plan_capped"]
    assert capped == [{"complexity": 1, "cap": 2, "kept": 2, "dropped": list(AGENDA[2:4])}]
    researched = {r._task.question for r in spawner.spawned}
    assert not researched & set(AGENDA[2:4])
    lines = [line for line in result.report.limits if line.startswith("Not researched")]
    assert [line.rsplit(": ", 1)[1] for line in lines] == list(AGENDA[2:4])
    gaps = render(result.report, Footer("r.md", "r1", "deep")).split("## Gaps and limits")[1]
    assert AGENDA[2] in gaps and AGENDA[3] in gaps
    # Resume starts after planning: the dropped items come back from the checkpoint.
    assert sink.checkpoints[-1]["plan_limits"] == list(result.report.limits[:2])
    restored = checkpoint.restore(sink.checkpoints[-1])
    assert restored.plan_limits == tuple(lines)


async def test_an_uncapped_plan_says_nothing() -> None:
    coord, sink, _, _ = coordinator(
        "deep", planner(3), "Widget sales in 2024", **{"deep.max_parallel": 2}
    )
    result = await coord.run()
    assert "plan_capped" not in sink.types()
    assert not any(line.startswith("Not researched") for line in result.report.limits)


async def test_the_shown_plan_names_each_company_and_period_without_token_artifacts() -> None:
    query = (
        "How did Initech's and Globex's revenue and gross margin compare in their 2023 Q3 10-Q "
        "filings?"
    )
    proposal = await planning.propose(ExtractiveLLM(), query, settings())
    # The whole question first, then one per company; "revenue and gross margin" stays
    # together (whether "margin" is shared cannot be told without a model), still whole.
    assert proposal.questions == [
        query,
        "What was Initech's revenue and gross margin in its 2023 Q3 10-Q filings?",
        "What was Globex's revenue and gross margin in its 2023 Q3 10-Q filings?",
    ]
    assert proposal.dropped == []
    assert not any(re.search(r"\d -\w", q) for q in proposal.questions)  # no "10 -Q"
