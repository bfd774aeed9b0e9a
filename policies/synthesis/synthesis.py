"""Pure steps around the writer call: what the writer sees, and how its draft becomes a Report.

Sources are numbered across all researcher reports (same URL, same number) before the writer sees
them; the writer cites those numbers, and any number that names no source read in this run is
dropped here, so the rendered report can never cite something that was not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepresearch.llm_messages import SourceText, WriteDraft, WriteTask
from deepresearch.policies import unsourced
from deepresearch.schemas import (
    Finding,
    Report,
    ReportSection,
    ResearcherReport,
    Source,
    SubTask,
)
from deepresearch.text.names import names_entity
from deepresearch.text.question import analyze, periods_of

EXTRACTIVE_NOTE = (
    "Written without a language model (extractive mode): every statement below is a sentence or "
    "table row quoted from the cited source; figure lines and tables in the Answer hold nothing "
    "but a cited table row's label, unit, column headers and cells."
)
NO_CITED_FINDINGS = (
    "No answer could be given: the writer's draft cited none of the sources that were read, so "
    "none of it could be verified."
)
SEARCH_LIMITED_NOTE = (
    "Search was limited: at least one search provider was unavailable during the run."
)


def merged_sources(reports: Sequence[ResearcherReport]) -> list[Source]:
    """Every source the researchers cited, once, in first-seen order."""
    seen: dict[str, Source] = {}
    for report in reports:
        for source in report.sources:
            seen.setdefault(source.url, source)
    return list(seen.values())


def write_task(
    query: str, reports: Sequence[ResearcherReport], snippet_chars: int = 400
) -> WriteTask:
    ok = [r for r in reports if r.findings]  # partial findings of a stopped researcher count too
    sources = merged_sources(ok)
    quotes: dict[str, str] = {}
    for report in ok:
        for finding in report.findings:
            for url in finding.citations:
                quotes.setdefault(url, finding.text[:snippet_chars])
    texts = tuple(
        SourceText(
            n=i + 1,
            url=s.url,
            title=s.label,
            location=s.location,
            text=quotes.get(s.url, ""),
            domain=s.domain,
        )
        for i, s in enumerate(sources)
    )
    sections = tuple(ReportSection(heading=r.question, findings=r.findings) for r in ok)
    return WriteTask(query=query, sections=sections, sources=texts)


def report_from_draft(
    task: WriteTask, draft: WriteDraft, title: str, notes: Sequence[str]
) -> tuple[Report, int]:
    """The Report the draft describes, with citations mapped back to URLs; also the dropped count."""
    by_n = {s.n: s for s in task.sources}
    dropped = 0
    sections: list[ReportSection] = []
    # A heading cites nothing: it keeps only what the query and the sub-questions state.
    grounds = unsourced.grounds_of(task.query, [s.heading for s in task.sections])
    for i, section in enumerate(draft.sections):
        fallback = task.sections[i].heading if i < len(task.sections) else "Further findings"
        heading = unsourced.vet(section.heading, grounds, fallback)
        findings: list[Finding] = []
        for item in section.findings:
            urls = tuple(dict.fromkeys(by_n[n].url for n in item.sources if n in by_n))
            dropped += len(item.sources) - len(urls)
            if urls and item.text.strip():
                findings.append(Finding(text=item.text.strip(), citations=urls))
        if findings:
            sections.append(ReportSection(heading=heading, findings=tuple(findings)))
    answer_urls = tuple(dict.fromkeys(by_n[n].url for n in draft.answer_sources if n in by_n))
    dropped += len(draft.answer_sources) - len(answer_urls)
    cited = {u for s in sections for f in s.findings for u in f.citations}
    answer_urls = tuple(u for u in answer_urls if u in cited)
    sources = tuple(
        Source(url=s.url, title=s.title, location=s.location)
        for s in task.sources
        if s.url in cited
    )
    report = Report(
        query=task.query,
        title=title,
        # Without a cited finding nothing of the draft can be verified: product wording instead.
        answer=draft.answer.strip() if sections else NO_CITED_FINDINGS,
        sections=tuple(sections),
        sources=sources,
        notes=tuple(notes),
        answer_citations=answer_urls,
        status="completed" if sections else "no_answer",
    )
    return report, dropped


def title_for(query: str, limit: int = 120) -> str:
    text = " ".join(query.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_LIMIT_TEXT = {
    "rounds": "The evaluator still saw gaps when the round budget ran out; coverage may be incomplete.",
    "time": "The run's time limit ended research early; this report is built from what was read by then.",
    "cost": "The cost limit ended research early; this report is built from what was read by then.",
    "failures": "The last research round failed; this report is built from earlier rounds.",
}


def limit_notes(limited_by: str | None, reports: Sequence[ResearcherReport]) -> tuple[str, ...]:
    """The "gaps and limits" lines: which limit ended the run and which sub-questions failed."""
    lines: list[str] = []
    if limited_by is not None:
        lines.append(_LIMIT_TEXT.get(limited_by, f"Stopped by the {limited_by} limit."))
    for r in reports:
        if r.status != "ok":
            kept = f" ({len(r.findings)} partial findings kept)" if r.findings else ""
            lines.append(f"Not fully answered: {r.question} — {r.error or 'failed'}{kept}.")
    return tuple(lines)


UNREAD_LISTED = 10  # unreadable files named one by one; the rest are counted (events list all)


def unread_notes(warnings: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """A "gaps and limits" line per corpus file that could not be read, with why: its text was
    never searched, so an Answer that says "no information" may be wrong about that file. The
    run's ``warning`` events hold every one of them; the report names the first few."""
    unread = [text for kind, text in warnings if kind == "extract_failed"]
    lines = [f"Not read, so not searched: {text.rstrip('.')}." for text in unread[:UNREAD_LISTED]]
    if len(unread) > UNREAD_LISTED:
        more = len(unread) - UNREAD_LISTED
        lines.append(f"{more} more files could not be read (the run's warning events list them).")
    return tuple(lines)


def uncovered_notes(query: str, reports: Sequence[ResearcherReport]) -> tuple[str, ...]:
    """A "gaps and limits" line per name or period of the query that nothing kept states (no
    finding, no passage backing one, no source's title or author): "compare Intel and AMD" over
    filings of Intel only answers for Intel; "the quarter ended December 28, 2024" over filings
    up to 2023 is answered, if at all, by other quarters' figures, each with its own date. The
    reader is told so rather than left to notice."""
    said = [
        text
        for r in reports
        for text in (
            *(f.text for f in r.findings),
            *(e.quote for f in r.findings for e in f.evidence),
            *(s.label for s in r.sources),
        )
    ]
    if not said:
        return ()
    told = "\n".join(said)
    q = analyze(query)
    stated = periods_of(told)
    dates = {p.date for p in stated if p.date}
    years = {p.year for p in stated if p.year}
    names = [
        f"No finding and no source's title names {name}: this report may not answer for it."
        for name in q.entities
        if not names_entity(name, told)
    ]
    periods = [
        f"No finding and no source's title states {p.text}: the figures in this report are of "
        "the periods they state."
        for p in q.periods
        if (p.date not in dates if p.date else p.year is not None and p.year not in years)
    ]
    return tuple(names + periods)


def steering_note(report: ResearcherReport) -> str:
    """The short note a running researcher gets when a sibling finishes."""
    return f"A sibling finished '{report.question}': {report.summary[:300]}"


def only_extractive(
    reports: Sequence[ResearcherReport], providers: Mapping[str, str], llm_name: str
) -> bool:
    """True when no language model answered any call of the run (``providers``: the tier that
    answered each coordinator role): the report must say so."""
    answered = {p for r in reports for p in r.answered_by}
    answered |= {v for k, v in providers.items() if k != "search"}
    return answered <= {"extractive"} and (bool(answered) or llm_name == "extractive")


ROLE_ORDER = ("planner", "researcher", "evaluator", "writer")


def composer_note(model_verified: int, composer_verified: int) -> str:
    """Why a model-run report carries the extractive composer's Answer."""
    return (
        f"The model's Answer kept {model_verified} verified claim(s), the extractive composer's "
        f"{composer_verified}: this report is the composer's, quoted from the findings."
    )


def fallback_notes(
    coordinator: Mapping[str, str], reports: Sequence[ResearcherReport]
) -> tuple[str, ...]:
    """One note per role whose model call fell to a later tier (from, to, why), in the order
    the roles work: the coordinator's roles' own, the researchers' first."""
    notes = dict(coordinator)
    researchers = [n for r in reports for n in r.fell_back]
    if researchers:
        notes.setdefault("researcher", researchers[0])
    return tuple(notes[role] for role in ROLE_ORDER if notes.get(role))


def failed_report(subtask: SubTask, reason: str) -> ResearcherReport:
    """The report of a sub-task whose researcher failed, was cancelled or timed out."""
    return ResearcherReport(
        subtask_id=subtask.id, question=subtask.question, status="failed", error=reason
    )


def model_failure(reports: Sequence[ResearcherReport]) -> str | None:
    """The error when every researcher failed because no model tier answered, else None.

    That is a failed run (exit 1, resumable once the model answers again), as when deep mode's
    planner cannot reach the model, not a question the sources could not answer (no_answer)."""
    if reports and all(r.status == "failed" and r.model_unavailable for r in reports):
        return reports[0].error
    return None
