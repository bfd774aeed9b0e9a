"""Citation verification: support scores, figure matching, the report check, rewrite or drop, and
whole in-process runs where the writer cites wrongly on purpose."""

from __future__ import annotations

import json

import pytest
from report_checks import body_of, find_unresolved
from test_actors_inprocess import coordinator

from deepresearch.llm_messages import (
    DraftFinding,
    DraftSection,
    LLMRequest,
    RewriteDraft,
    RewriteItem,
    RewriteTask,
    SourceText,
    WriteDraft,
    WriteTask,
)
from deepresearch.policies.verification import rewrite, verify
from deepresearch.policies.verification.citations import resolve
from deepresearch.policies.verification.support import (
    best_passage,
    locator,
    needs_citation,
    support,
    text_fragment,
)
from deepresearch.providers.llm.extractive import ExtractiveLLM, answer_rewrite
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.reports.markdown import Footer, render
from deepresearch.schemas import Evidence, Finding, Report, ReportSection, Source
from deepresearch.text.figures import missing_figures

P1 = "https://example.org/p1"
P2 = "https://example.org/p2"
DOC = "doc:2023 Q3 AAPL.pdf#page=4"
TABLE = "Total net sales $ 81,797 $ 82,959"
EVIDENCE = {
    P1: (Evidence(url=P1, quote="Widget sales reached 101 million units in 2024 at plant 1."),),
    P2: (Evidence(url=P2, quote="Gadget output was 7.5% higher at plant 2 in 2024."),),
    DOC: (Evidence(url=DOC, quote=TABLE, locator="p. 4"),),
}
SOURCES = (
    Source(url=P1, title="p1", location=P1),
    Source(url=P2, title="p2", location=P2),
    Source(url=DOC, title="2023 Q3 AAPL.pdf", location="2023 Q3 AAPL.pdf, p. 4"),
)


# --------------------------------------------------------------------------- the pure check


@pytest.mark.parametrize(
    ("claim", "passage", "missing"),
    [
        ("Net sales were $81.8 billion.", TABLE, []),  # a table "in millions", rounded
        ("Net sales were $81,797 million.", TABLE, []),
        ("Net sales were $82.0 billion.", TABLE, ["82.0 billion"]),  # 81.797 / 82.959: no
        ("Net sales were $80 billion.", TABLE, ["80 billion"]),
        ("Output rose 7.5%.", "up 7.5 % on the year", []),
        ("Output rose 75%.", "up 7.5 % on the year", ["75%"]),
        ("Sales were 1,234 units.", "sales of 1234 units", []),
        ("Sales were 1,234 units.", "sales of 12,340 units", ["1,234"]),
        ("In fiscal 2023, on June 25, 2022, in Q3", "nothing", []),  # years, days: not figures
    ],
)
def test_figures_must_appear_at_the_claimed_scale(
    claim: str, passage: str, missing: list[str]
) -> None:
    assert missing_figures(claim, passage) == missing


def test_support_score_and_citation_need() -> None:
    quote = EVIDENCE[P1][0].quote
    assert support("Widget sales reached 101 million units in 2024.", quote).passes(0.5)
    assert support("Widgets sold at 101 million units.", quote).score < 1.0
    wrong = support("Widget sales reached 250 million units in 2024.", quote)
    assert wrong.missing == ("250 million",) and not wrong.passes(0.0)
    assert not support("Dolphins swim in warm oceans.", quote).passes(0.5)
    assert needs_citation("Sales grew 5% in 2024.")
    assert needs_citation("The deal was announced by Microsoft yesterday.")
    assert not needs_citation("The outlook is uncertain.")


def test_best_passage_and_locators() -> None:
    text = (
        "The company makes widgets.\nRevenue rose in the quarter.\n"
        "Widget sales reached 101 million units in 2024 at plant 1.\nPlant 1 also makes gadgets."
    )
    passage = best_passage("Plant 1 sold 101 million widgets in 2024.", text)
    assert "101 million" in passage and "Revenue" not in passage
    assert locator(DOC, "2023 Q3 AAPL.pdf, p. 4", passage) == "p. 4"
    assert locator("doc:notes.txt", "notes.txt", passage) == ""
    link = locator(P1, P1, "one two three four five six seven eight nine ten, eleven")
    assert link == text_fragment(P1, "one two three four five six seven eight nine ten, eleven")
    assert link.startswith(P1 + "#:~:text=one%20two%20three%20four,")
    assert link.endswith(",eight%20nine%20ten%2C%20eleven")
    assert text_fragment(P1 + "#top", "a b").endswith("#top:~:text=a%20b")


def _report(answer: str, findings: tuple[Finding, ...], answer_citations=(P1,)) -> Report:  # type: ignore[no-untyped-def]
    return Report(
        query="q",
        title="t",
        answer=answer,
        answer_citations=answer_citations,
        sections=(ReportSection(heading="H", findings=findings),),
        sources=SOURCES,
    )


def test_unknown_citations_are_removed_and_never_printed() -> None:
    task = WriteTask(query="q", sections=(), sources=())
    draft = WriteDraft(
        answer="Widget sales reached 101 million units [99].",
        sections=(DraftSection(heading="H", findings=(DraftFinding(text="x", sources=(3, 99)),)),),
        answer_sources=(7,),
    )
    assert verify.unknown_ids(task, draft) == [3, 99, 7]
    report = _report(
        "Widget sales reached 101 million units in 2024 [https://invented.example/x].",
        (Finding(text=EVIDENCE[P1][0].quote, citations=(P1, "https://made.up/")),),
    )
    checked = verify.check_report(report, EVIDENCE, 0.5)
    assert checked.removed == ("https://invented.example/x", "https://made.up/")
    final, dropped = verify.finalize(checked, {}, EVIDENCE, SOURCES, 0.5, ["[99]"])
    assert not dropped and final.verification is not None
    assert final.verification.removed_ids == (
        "[99]",
        "https://invented.example/x",
        "https://made.up/",
    )
    md = render(final, Footer("r.md", "r1", "quick"))
    assert "invented" not in md and "made.up" not in md and "[99]" not in md
    assert find_unresolved(body_of(md), len(final.sources)) == []
    assert "unknown citations removed: 3" in md.split("\n---\n")[-1]


def test_supported_claims_pass_and_sources_keep_the_cited_places() -> None:
    report = _report(
        "Net sales were $81.8 billion.",
        (
            Finding(text=TABLE, citations=(DOC,)),
            Finding(text="Gadget output was 7.5% higher at plant 2.", citations=(P2,)),
        ),
        answer_citations=(DOC,),
    )
    checked = verify.check_report(report, EVIDENCE, 0.5)
    assert [c.ok for c in checked.checks] == [True, True, True] and not checked.failing()
    final, _ = verify.finalize(checked, {}, EVIDENCE, SOURCES, 0.5)
    assert final.verification is not None
    assert (final.verification.claims, final.verification.verified) == (3, 3)
    assert final.answer == report.answer and final.sections == tuple(
        ReportSection(
            heading="H",
            findings=tuple(
                f.model_copy(update={"evidence": EVIDENCE[f.citations[0]]})
                for f in report.sections[0].findings
            ),
        )
        for _ in (0,)
    )
    by_url = {s.url: s for s in final.sources}
    assert by_url[DOC].cited_at == ("p. 4",) and P1 not in by_url
    md = render(final, Footer("r.md", "r1", "quick"))
    assert "— cited: p. 4" in md
    assert "Claims: 3 · cited: 3 · verified: 3 · rewritten: 0 · dropped: 0" in md.split("---")[-1]


def test_a_figure_missing_from_the_cited_passage_is_rewritten_or_dropped() -> None:
    wrong = Finding(text="Widget sales reached 101 million units in 2024.", citations=(P2,))
    uncited = "Apple sold 9,999 phones."  # a figure and a name, no citation: cannot stay as is
    report = _report(uncited, (wrong,), answer_citations=())
    checked = verify.check_report(report, EVIDENCE, 0.5)
    assert checked.failing() == [0, 1]
    assert "without a citation" in checked.checks[0].reason
    assert "figure(s) not in the cited passage" in checked.checks[1].reason
    assert "101" not in checked.checks[1].reason  # the unsupported figure is never repeated
    # rewriting off: both are dropped; nothing is left, so the report says so honestly
    final, dropped = verify.finalize(checked, {}, EVIDENCE, SOURCES, 0.5)
    assert len(dropped) == 2 and final.status == "no_answer" and final.sources == ()
    assert "101 million" not in render(final, Footer("r.md", "r1", "quick"))
    # the model-free writer rewrites the finding into the passage that supports it
    task = WriteTask(
        query="q",
        sections=(),
        sources=tuple(
            SourceText(n=i + 1, url=s.url, title=s.title, location=s.location, text="")
            for i, s in enumerate(SOURCES)
        ),
    )
    rtask = rewrite.rewrite_task("q", checked, EVIDENCE, task)
    assert {c.id for c in rtask.claims} == {0, 1}
    assert {s.url for s in rtask.sources} >= {P1, P2}  # the right source is offered too
    rewrites, unknown = rewrite.rewrites_from_draft(rtask, answer_rewrite(rtask))
    assert unknown == []
    final, dropped = verify.finalize(checked, rewrites, EVIDENCE, SOURCES, 0.5)
    assert final.verification is not None and final.verification.rewritten >= 1
    finding = final.sections[0].findings[0]
    assert finding.citations == (P1,) and "101 million" in finding.text
    assert final.verification.dropped == len(dropped)


def test_rewrites_only_count_when_they_verify() -> None:
    report = _report("x", (Finding(text="Widgets hit 250 million units.", citations=(P1,)),), ())
    checked = verify.check_report(report, EVIDENCE, 0.5)
    rtask = RewriteTask(
        query="q",
        claims=(RewriteItem(id=1, text="Widgets hit 250 million units.", sources=(1,)),),
        sources=(),
    )
    still_wrong = RewriteDraft(
        claims=(RewriteItem(id=1, text="Widgets hit 250 million.", sources=(1, 9)),)
    )
    rewrites, unknown = rewrite.rewrites_from_draft(rtask, still_wrong)
    assert unknown == [1, 9]  # the rewrite task listed no sources at all
    final, dropped = verify.finalize(checked, rewrites, EVIDENCE, SOURCES, 0.5)
    assert final.verification is not None
    assert (final.verification.rewritten, final.verification.dropped) == (0, 1)
    assert final.status == "no_answer" and dropped[0].claim.text.startswith("Widgets hit 250")


# --------------------------------------------------------------------------- whole runs


def _n(task: WriteTask, url: str) -> int:
    return next(s.n for s in task.sources if s.url == url)


def wrong_writer(request: LLMRequest) -> str:
    """Cites plant 2's page for plant 1's figure, and an id that does not exist in the answer."""
    task = request.task
    assert isinstance(task, WriteTask)
    findings = (
        DraftFinding(
            text="Widget sales reached 101 million units in 2024 at plant 1.",
            sources=(_n(task, P2),),
        ),
        DraftFinding(
            text="Widget sales reached 103 million units in 2024 at plant 3.",
            sources=(_n(task, "https://example.org/p3"),),
        ),
    )
    draft = WriteDraft(
        answer="Plant 3 sold 103 million widgets in 2024 [99].",
        sections=(DraftSection(heading="Widgets", findings=findings),),
        answer_sources=(_n(task, "https://example.org/p3"),),
    )
    return draft.model_dump_json()


def fixing_rewriter(request: LLMRequest) -> str:
    """Re-cites each claim to the source whose passage states its figure."""
    task = request.task
    assert isinstance(task, RewriteTask)
    items = []
    for claim in task.claims:
        source = next(s for s in task.sources if "101 million" in s.text)
        items.append(RewriteItem(id=claim.id, text=claim.text, sources=(source.n,)))
    return RewriteDraft(claims=tuple(items)).model_dump_json()


def stubborn_rewriter(request: LLMRequest) -> str:
    task = request.task
    assert isinstance(task, RewriteTask)
    return RewriteDraft(claims=tuple(task.claims)).model_dump_json()


@pytest.mark.parametrize(
    ("rewriter", "fixed"), [(fixing_rewriter, True), (stubborn_rewriter, False)]
)
async def test_a_writer_that_cites_wrongly_is_fixed_or_dropped(rewriter, fixed) -> None:  # type: ignore[no-untyped-def]
    llm = ScriptedLLM({"writer": [wrong_writer, rewriter]}, delegate=ExtractiveLLM())
    # the rewrite path itself: the composer's 3-sentence Answer would keep more verified claims
    flags = {"verify.answer_floor": False}
    coord, sink, _, _ = coordinator("quick", llm, "How many widgets in 2024?", **flags)
    result = await coord.run()
    llm.assert_all_used()
    report = result.report
    v = report.verification
    assert v is not None and v.removed_ids == ("[99]",)
    assert (v.claims, v.cited, v.verified) == (3, 3, 2)
    assert (v.rewritten, v.dropped) == ((1, 0) if fixed else (0, 1))
    md = render(report, Footer("r.md", "r1", "quick"))
    body, footer = body_of(md), md.split("\n---\n")[-1]
    assert "[99]" not in body and find_unresolved(body, len(report.sources)) == []
    line = f"rewritten: {v.rewritten} · dropped: {v.dropped}"
    assert f"Claims: 3 · cited: 3 · verified: 2 · {line}" in footer
    numbers = resolve(report).numbering
    plant1 = [f for s in report.sections for f in s.findings if "plant 1" in f.text]
    if fixed:
        assert plant1 and plant1[0].citations == (P1,)
        assert f"at plant 1. [{numbers[P1]}]" in body
    else:
        assert not plant1 and "101 million" not in body
        assert (
            "claim_dropped",
            {"where": "finding", "reason": "1 figure(s) not in the cited passage"},
        ) in sink.events
    assert ("citation_removed", {"count": 1}) in sink.events
    assert not any("[99]" in json.dumps(payload) for _, payload in sink.events)
    assert ("rewriting", {"claims": 1}) in sink.events  # the one extra writer call, announced
    # researchers were model-free but a model wrote the report: it must not claim otherwise
    assert "without a language model" not in body
    verified = [p for t, p in sink.events if t == "citation_verified"]
    assert verified and verified[0]["verified"] == 2


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_extractive_runs_verify_every_claim(mode: str) -> None:
    coord, sink, _, _ = coordinator(mode, ExtractiveLLM(), "How many widgets in 2024?")
    result = await coord.run()
    v = result.report.verification
    assert v is not None and v.claims > 3
    assert v.claims == v.cited == v.verified and v.dropped == v.rewritten == 0
    assert v.figures == v.figures_supported > 0
    for finding in (f for s in result.report.sections for f in s.findings):
        assert finding.evidence and all(finding.text in e.quote for e in finding.evidence)
    assert all(s.cited_at for s in result.report.sources)
    assert "rewrite_fallback" not in sink.types() and "rewriting" not in sink.types()
    assert any("without a language model" in n for n in result.report.notes)


async def test_verification_can_be_turned_off() -> None:
    coord, sink, _, _ = coordinator(
        "quick", ExtractiveLLM(), "How many widgets in 2024?", **{"verify.enabled": False}
    )
    result = await coord.run()
    assert result.report.verification is None and "citation_verified" not in sink.types()


def test_a_long_quoted_table_row_keeps_every_figure_in_its_evidence() -> None:
    from deepresearch.policies.verification.support import best_passage

    cells = " ".join(f"Item {i} ({100 + i},{i:03d})" for i in range(120))  # one ~2,000-char row
    text = f"Intro sentence about margins. {cells} Closing sentence."
    quote = best_passage(cells, text, max_chars=600)
    assert cells in quote and not missing_figures(cells, quote)


def test_two_composed_tables_render_as_two_tables() -> None:
    """Consecutive table lines join into one table, but a header (its rule line follows)
    starts the next one: "Windows" and "Devices" trends are two tables, not one."""
    first = ["| Period | Windows |", "| --- | --- |", "| Q1 | 5,313 [1]"]
    second = ["| Period | Devices |", "| --- | --- |", "| Q1 | 1,448 [1]"]
    joined = verify.join_answer([*first, *second, "Devices declined."])
    assert joined == "\n".join(first) + "\n\n" + "\n".join(second) + "\n\nDevices declined."
