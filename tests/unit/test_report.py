"""Rendering a Report to Markdown: layout, citations, a stable body, the no-answer case."""

from __future__ import annotations

import re

from report_checks import body_of, find_unresolved

from deepresearch.reports.markdown import (
    NO_ANSWER_LEAD,
    Footer,
    render,
    render_body,
    source_entries,
)
from deepresearch.schemas import Finding, Report, ReportSection, Source, Usage

A = "https://news.example/apple"
B = "doc:2023 Q3 AAPL.pdf#page=4"
C = "https://unused.example/"
EXTRACTIVE = (
    "Written without a language model (extractive mode): sentences are quoted from the sources."
)

SOURCES = (
    Source(url=A, title="Apple results", location=A, provider="duckduckgo"),
    Source(url=B, title="2023 Q3 AAPL.pdf", location="2023 Q3 AAPL.pdf, p. 4", provider="local"),
    Source(url=C, title="", location=C),
)


def _report(**changes: object) -> Report:
    base = Report(
        query="What was Apple's revenue?",
        title="Apple revenue",
        answer="Apple's net sales were $81.8 billion.",
        answer_citations=(B,),
        sections=(
            ReportSection(
                heading="Revenue",
                findings=(
                    Finding(text="Total net sales were $81,797 million.", citations=(B, A)),
                    Finding(text="Services grew.", citations=("https://invented.example/",)),
                ),
            ),
        ),
        sources=SOURCES,
        notes=(EXTRACTIVE,),
    )
    return base.model_copy(update=changes)


def _footer(run_id: str = "20261122-191500-ab12cd", **changes: object) -> Footer:
    fields: dict[str, object] = {
        "saved_path": f"/home/ann/research/deep-research-apple-{run_id[-6:]}.md",
        "run_id": run_id,
        "mode": "quick",
        "providers": {"planner": "extractive", "search": "local"},
        "usage": Usage(llm_calls=2, input_tokens=1200, output_tokens=80, search_calls=3, fetches=4),
        "duration_s": 12.34,
    }
    fields.update(changes)
    return Footer(**fields)  # type: ignore[arg-type]


def _section(md: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n\n(.*?)(?=\n## |\n---\n|\Z)", md, re.S | re.M)
    assert match, f"no section {heading!r} in:\n{md}"
    return match.group(1).strip()


def test_layout() -> None:
    md = render(_report(), _footer())
    headings = re.findall(r"^#{1,2} .*$", md, re.M)
    assert headings == ["# Apple revenue", "## Answer", "## Findings", "## Sources"]
    assert md.index(f"> {EXTRACTIVE}") < md.index("## Answer")
    assert _section(md, "Answer") == "Apple's net sales were $81.8 billion. [1]"
    assert _section(md, "Findings") == (
        "- Total net sales were $81,797 million. [1][2]\n- Services grew."
    )
    assert _section(md, "Sources").splitlines() == [
        "1. 2023 Q3 AAPL.pdf, p. 4",  # its id names nothing more than the file and the page
        f"2. Apple results — <{A}>",
        f"3. <{C}>",
    ]


def test_footer_holds_the_run_facts() -> None:
    md = render(_report(), _footer(notes=("Resumed once.",)))
    footer = md[md.rindex("\n---\n") :]
    assert "Report file: `/home/ann/research/deep-research-apple-ab12cd.md`" in footer
    assert "Run id: `20261122-191500-ab12cd`" in footer
    assert "Mode: quick" in footer
    assert "Providers: planner: extractive, search: local" in footer
    assert "2 LLM calls, 1,200 tokens in / 80 out, cost $0.0000, 3 searches, 4 fetches" in footer
    assert "Duration: 12.3 s" in footer
    assert "Resumed once." in footer
    assert "20261122-191500-ab12cd" not in body_of(md)


def test_every_citation_resolves() -> None:
    md = render(_report(), _footer())
    assert find_unresolved(md, len(SOURCES)) == []
    assert "invented" not in md


def test_body_is_identical_for_different_footers() -> None:
    one = render(_report(), _footer())
    two = render(
        _report(),
        _footer(run_id="20991231-235959-ffffff", mode="deep", duration_s=99.0, usage=Usage()),
    )
    assert one != two
    assert body_of(one) == body_of(two)
    assert body_of(one).endswith("\n")
    assert "## Sources" in body_of(one)


def test_round_trip_numbers_point_at_the_right_sources() -> None:
    md = render(_report(), _footer())
    sources = dict(re.findall(r"^(\d+)\. (.*)$", _section(md, "Sources"), re.M))
    finding = _section(md, "Findings").splitlines()[0]
    cited = re.findall(r"\[(\d+)\]", finding)
    assert sorted(re.split(" — |, ", sources[n])[0] for n in cited) == [
        "2023 Q3 AAPL.pdf",
        "Apple results",
    ]
    entries = source_entries(_report())
    assert [(e.n, e.url) for e in entries] == [(1, B), (2, A), (3, C)]


def test_each_source_says_each_thing_once() -> None:
    """Title, place, link and cited places, none repeated (issue: "1. 2023 Q3 AAPL.pdf — 2023 Q3
    AAPL.pdf, p. 10 (doc:2023 Q3 AAPL.pdf#page=10) — cited: p. 10")."""
    fragment = f"{A}#:~:text=Net%20sales"
    sources = (
        Source(
            url=B, title="2023 Q3 AAPL.pdf", location="2023 Q3 AAPL.pdf, p. 4", cited_at=("p. 4",)
        ),
        Source(url="doc:q/x y.pdf#page=2", title="x y.pdf", location="q/x y.pdf, p. 2"),
        Source(url="doc:r/a.pdf#page=3", title="Quarterly report", location="r/a.pdf, p. 3"),
        Source(url=A, title="Apple results", location=A, cited_at=(fragment,)),
        Source(url="https://e.example/a b<c>", title="", location="https://e.example/a b<c>"),
        Source(url="doc:x#page=1", title="Deck", location="", cited_at=("slide 1",)),
    )
    lines = [
        line.split(". ", 1)[1]
        for line in render_body(
            _report(sources=sources, answer_citations=tuple(s.url for s in sources), sections=())
        )
        .split("## Sources\n\n")[1]
        .splitlines()
    ]
    assert lines == [
        "2023 Q3 AAPL.pdf — cited: p. 4",
        "q/x y.pdf, p. 2",  # the folder is kept: the path says more than the file name
        "Quarterly report, r/a.pdf, p. 3",
        f"Apple results — <{A}> — cited: [passage 1]({fragment})",
        "<https://e.example/a%20b%3Cc%3E>",
        "Deck — `doc:x#page=1` — cited: slide 1",  # an id that names more than the title
    ]


def test_hostile_text_cannot_break_the_structure() -> None:
    report = _report(
        answer="Fine.\n## Sources\n# Title\n---\n```\nnot closed",
        sections=(
            ReportSection(
                heading="Part [1] one",
                findings=(Finding(text="## Sources\n---\nsneaky [9]", citations=(A,)),),
            ),
            ReportSection(heading="Part two", findings=(Finding(text="plain", citations=(B,)),)),
        ),
    )
    md = render(report, _footer())
    assert re.findall(r"^## .*$", md, re.M) == [
        "## Answer",
        "## Part \\[1\\] one",
        "## Part two",
        "## Sources",
    ]
    assert md.count("\n---\n") == 1
    assert find_unresolved(md, len(SOURCES)) == []
    assert "[9]" not in md


def test_no_answer_layout() -> None:
    report = Report(
        query="q?",
        title="q?",
        answer="",
        sections=(),
        sources=(),
        notes=("Every researcher failed: search was unavailable.",),
        status="no_answer",
    )
    md = render(report, _footer())
    answer = _section(md, "Answer")
    assert answer.startswith(f"**{NO_ANSWER_LEAD}**")
    assert "Why: Every researcher failed: search was unavailable." in answer
    assert "## Findings" not in md
    assert (
        _section(md, "Sources") == "_No source is cited: none that was read supported an answer._"
    )
    assert find_unresolved(md, 0) == []


def test_no_answer_with_explanation_in_answer() -> None:
    report = Report(
        query="q?",
        title="q?",
        answer="No answer could be given: the corpus had nothing on this.",
        sections=(),
        sources=(),
        status="no_answer",
    )
    answer = _section(render(report, _footer()), "Answer")
    assert NO_ANSWER_LEAD in answer
    assert "the corpus had nothing on this" in answer


def test_body_of_without_footer_is_whole_text() -> None:
    assert body_of("no rule here") == "no rule here"
