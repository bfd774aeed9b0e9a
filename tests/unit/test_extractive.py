"""The model-free provider: deterministic, verbatim, diverse, correctly cited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepresearch.errors import ConfigError
from deepresearch.llm_messages import (
    EvaluateTask,
    FindingsDraft,
    FindingsTask,
    LLMRequest,
    PlanDraft,
    PlanTask,
    QueriesTask,
    QueryList,
    SourceText,
    Task,
    WriteDraft,
    WriteTask,
)
from deepresearch.providers.llm.extractive import NO_PASSAGE, ExtractiveLLM
from deepresearch.providers.llm.registry import KNOWN_LLM_PROVIDERS, build_llm
from deepresearch.providers.llm.rules import search_queries
from deepresearch.schemas import Finding, ReportSection

PDF = Path(__file__).resolve().parents[3] / "shared/data/sec-10q/docs/2023 Q3 AAPL.pdf"

TABLE_PAGE = """Apple Inc.
CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)
Three Months Ended Nine Months Ended
July 1,
2023
June 25,
2022
Net sales:
Products $ 60,584 $ 63,355 $ 230,901 $ 245,241
Services 21,213 19,604 62,886 58,941
Total net sales 81,797 82,959 293,787 304,182
Gross margin 36,413 35,885 128,721 132,687
See accompanying Notes to Condensed Consolidated Financial Statements.
Apple Inc. | Q3 2023 Form 10-Q | 1
"""

PROSE_PAGE = """Business Seasonality
The Company's total net sales decreased 1% or $1.2 billion during the third quarter of 2023
compared to the same quarter in 2022. Services net sales increased due to higher advertising.
The weather in Cupertino was pleasant throughout the period and nobody complained about it.
Apple Inc. | Q3 2023 Form 10-Q | 15
"""


def src(n: int, text: str, url: str | None = None) -> SourceText:
    return SourceText(n=n, url=url or f"doc:s{n}", title=f"S{n}", location=f"p. {n}", text=text)


async def run(task: Task, role: str = "researcher") -> str:
    reply = await ExtractiveLLM().complete(LLMRequest(role=role, task=task))  # type: ignore[arg-type]
    assert reply.estimated_tokens and reply.provider == "extractive" and reply.output_tokens > 0
    return reply.text


async def findings(task: FindingsTask) -> FindingsDraft:
    return FindingsDraft.model_validate_json(await run(task))


Q = "What was Apple's total net sales for the quarter ended July 1, 2023?"


async def test_findings_deterministic_same_bytes() -> None:
    task = FindingsTask(question=Q, sources=(src(1, TABLE_PAGE), src(2, PROSE_PAGE)))
    assert await run(task) == await run(task)


async def test_figures_kept_verbatim_and_cited() -> None:
    task = FindingsTask(question=Q, sources=(src(1, PROSE_PAGE), src(2, TABLE_PAGE)))
    draft = await findings(task)
    texts = {f.text: f.sources for f in draft.findings}
    assert texts["Total net sales 81,797 82,959 293,787 304,182"] == (2,)
    prose = next(t for t in texts if t.startswith("The Company's total net sales decreased"))
    assert "1% or $1.2 billion" in prose and texts[prose] == (1,)
    assert not any("Form 10-Q |" in t for t in texts)  # footers dropped
    assert not any("Cupertino" in t for t in texts)  # irrelevant sentence not selected
    assert "[" not in draft.summary and draft.summary


async def test_no_relevant_passage() -> None:
    task = FindingsTask(question="Who won the 1998 chess olympiad?", sources=(src(1, TABLE_PAGE),))
    draft = await findings(task)
    assert draft.findings == () and draft.summary.startswith(NO_PASSAGE)


async def test_mmr_drops_near_duplicates() -> None:
    dup = "Total net sales were $81.8 billion in the third quarter of 2023, down 1% from last year."
    near = dup.replace("from last", "from the last")
    other = "Services net sales were $21.2 billion in the third quarter of 2023, a record."
    task = FindingsTask(
        question="What were total net sales in the third quarter of 2023?",
        sources=(src(1, dup), src(2, near), src(3, other)),
    )
    draft = await findings(task)
    got = [f.text for f in draft.findings]
    assert sum(1 for t in got if t.startswith("Total net sales were")) == 1
    assert other in got


async def test_source_diversity_cap() -> None:
    # a paragraph each: sentences of one paragraph would be one finding (``in_context``)
    many = "\n\n".join(
        f"Revenue of segment {c} grew {i + 3}% to ${i + 10}.{i} billion in 2023 on demand."
        for i, c in enumerate("ABCDEFGH")
    )
    few = "\n\n".join(
        f"Revenue in region {c} grew {i + 2}% to ${i + 5}.5 billion in 2023 on pricing."
        for i, c in enumerate("WXYZ")
    )
    task = FindingsTask(
        question="How much did revenue grow in 2023?",
        sources=(src(1, many), src(2, few)),
        max_findings=6,
    )
    draft = await findings(task)
    assert len(draft.findings) == 6
    per = [f.sources[0] for f in draft.findings]
    assert per.count(1) <= 3 and per.count(2) <= 3


@pytest.mark.skipif(not PDF.exists(), reason="sample 10-Q not present")
async def test_real_10q_selects_total_net_sales() -> None:
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(PDF))
    pages = [3, 16, 17]
    sources = tuple(
        src(i + 1, doc[p].get_textpage().get_text_range(), f"doc:aapl#page={p + 1}")
        for i, p in enumerate(pages)
    )
    draft = await findings(FindingsTask(question=Q, sources=sources))
    top = draft.findings[:3]
    assert any("Total net sales" in f.text and "81,797" in f.text for f in top)
    assert "81,797" in draft.summary


async def test_queries_decomposition() -> None:
    text = await run(
        QueriesTask(question="What were the revenues of Apple and Microsoft in Q3 2023?")
    )
    queries = QueryList.model_validate_json(text).queries
    assert queries == (
        "revenues Apple Microsoft Q3 2023",
        "revenues Apple Q3 2023",
        "revenues Microsoft Q3 2023",
    )


def test_query_rules_general() -> None:
    q = search_queries(Q, 3)
    # the cleaned question, then what it is about without its framing words
    assert q == [
        "Apple total net sales quarter ended July 1, 2023",
        "Apple total net sales July 1, 2023",
    ]
    comp = search_queries("Compare Apple's net income with Microsoft's in 2022", 3)
    assert "Microsoft net income 2022" in comp and "Apple net income 2022" in comp
    periods = search_queries("What was Intel revenue in 2022 and 2023?", 5)
    assert periods[1:] == ["Intel revenue 2022", "Intel revenue 2023"]
    vs = search_queries("Apple vs Microsoft revenue in fiscal 2023", 5)
    assert "Microsoft revenue fiscal 2023" in vs
    assert len(search_queries("tea, coffee, cocoa and mate health effects", 2)) == 2


async def test_plan_complexity() -> None:
    """A split plan is the whole question first (researched as quick mode does), then its
    parts; a question that does not split is planned alone, with why."""
    one = PlanDraft.model_validate_json(await run(PlanTask(query=Q), "planner"))
    assert one.complexity == 1 and one.sub_questions == (Q,) and one.kept_whole
    compared = "Compare Apple's net income with Microsoft's in 2022"
    two = PlanDraft.model_validate_json(await run(PlanTask(query=compared), "planner"))
    assert two.complexity == 2 and not two.kept_whole
    assert two.sub_questions == (
        compared,
        "What was Apple's net income in 2022?",
        "What was Microsoft's net income in 2022?",
    )
    four = PlanDraft.model_validate_json(
        await run(
            PlanTask(query="What were Apple's and Intel's revenues in 2022 and 2023?"), "planner"
        )
    )
    assert four.complexity == 3 and len(four.sub_questions) == 5
    assert all(("2022" in s) != ("2023" in s) for s in four.sub_questions[1:])


async def test_evaluator_rule() -> None:
    ok = EvaluateTask(query="q 2023", agenda=("a", "b"), summaries=("s1", "s2"), max_rounds=3)
    assert json.loads(await run(ok, "evaluator"))["action"] == "synthesize"
    gap = EvaluateTask(
        query="Apple revenue in Q3 2023",
        agenda=("What was Apple's revenue?", "What was Intel's revenue?"),
        summaries=("Revenue was $81.8 billion.", f"{NO_PASSAGE} for: x"),
        round=1,
        max_rounds=3,
        max_new_subtasks=2,
    )
    ev = json.loads(await run(gap, "evaluator"))
    assert ev["action"] == "delegate"  # a whole question, never a keyword string as a heading
    assert ev["new_subtasks"] == ["What do the sources say about Intel revenue Q3 2023?"]
    assert "Intel" in ev["reason"]
    late = gap.model_copy(update={"round": 3})  # the last round of the budget it was sent
    assert json.loads(await run(late, "evaluator"))["action"] == "synthesize"
    longer = gap.model_copy(update={"round": 3, "max_rounds": 4})  # not the last: delegate
    assert json.loads(await run(longer, "evaluator"))["action"] == "delegate"


async def test_write_maps_citations_to_numbers() -> None:
    task = WriteTask(
        query="What were Apple's total net sales in Q3 2023?",
        sections=(
            ReportSection(
                heading="Apple net sales",
                findings=(
                    Finding(text="Total net sales 81,797 82,959", citations=("doc:b", "doc:a")),
                    Finding(text="Uncited claim", citations=("doc:unknown",)),
                ),
            ),
            ReportSection(
                heading="Services",
                findings=(Finding(text="Services net sales rose 8%.", citations=("doc:c",)),),
            ),
        ),
        sources=(src(1, "", "doc:a"), src(2, "", "doc:b"), src(3, "", "doc:c")),
    )
    text = await run(task, "writer")
    assert text == await run(task, "writer")
    draft = WriteDraft.model_validate_json(text)
    assert [s.heading for s in draft.sections] == ["Apple net sales", "Services"]
    assert draft.sections[0].findings[0].sources == (1, 2)
    assert len(draft.sections[0].findings) == 1
    assert draft.sections[1].findings[0].sources == (3,)
    assert draft.answer.startswith("Total net sales 81,797 82,959 [1][2].")


def test_registry() -> None:
    assert isinstance(build_llm("extractive"), ExtractiveLLM)
    assert KNOWN_LLM_PROVIDERS == ("extractive", "openai", "gemini")
    with pytest.raises(ConfigError) as err:
        build_llm("nope")
    assert err.value.key == "llm.provider" and "unknown provider 'nope'" in str(err.value)
