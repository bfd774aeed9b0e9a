"""Follow-up runs: which earlier work a new run may reuse, as pure functions (no I/O, no Ray).

A follow-up inherits the texts an earlier run read and the reports its researchers wrote. These
rules decide how much of that is kept and loaded (caps, so a long thread cannot grow without
bound), which planned sub-question is already answered by an earlier report (only what is new is
researched), and which earlier reports go to the researchers as notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from deepresearch.config.trust import FollowUpSettings
from deepresearch.policies.follow_up.subject import in_context
from deepresearch.policies.urls import normalize_url
from deepresearch.schemas import (
    FetchedDoc,
    FollowUpSeed,
    Request,
    ResearcherReport,
    SubTask,
    Usage,
)

_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
# Words that do not change what is asked: "What was X?" and "what is the X" ask the same thing.
# Fewer than ``text.terms.STOPWORDS`` on purpose: "not", "more", "before" change what is asked.
_WORDS_ASKING_NOTHING = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "for",
        "to",
        "and",
        "or",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "what",
        "which",
        "how",
        "did",
        "does",
        "do",
        "s",
        "its",
        "it",
        "this",
        "that",
    ]
)
SNIPPET_TYPE = "text/x-search-snippet"  # a fetch that failed: a follow-up should try it again


def injection_note(report: ResearcherReport, cap: int) -> str:
    """An earlier researcher's report as a note for a later one (of this run or a follow-up),
    capped in size."""
    lines = [f"Earlier finding on '{report.question}': {report.summary}"]
    lines += [f"- {f.text}" for f in report.findings]
    return "\n".join(lines)[:cap]


def normalize_question(text: str) -> str:
    """Lower-case words, punctuation dropped: the form two questions are compared in."""
    return " ".join(_WORD.findall(text.lower()))


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _WORDS_ASKING_NOTHING)


def similarity(a: str, b: str) -> float:
    """1.0 for the same normalized text; otherwise the Jaccard overlap of the content words.

    Deliberately conservative: numbers and names count as words, so "sales in 2023" and "sales
    in 2024" never match (their overlap is below any sensible threshold)."""
    if normalize_question(a) == normalize_question(b):
        return 1.0
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def matching_report(
    question: str, earlier: Sequence[ResearcherReport], threshold: float
) -> ResearcherReport | None:
    """The earlier successful report that already answers ``question``, best match first."""
    best: tuple[float, int] | None = None
    for i, report in enumerate(earlier):
        if report.status != "ok" or not report.findings:
            continue
        score = similarity(question, report.question)
        if score >= threshold and (best is None or score > best[0]):
            best = (score, i)
    return earlier[best[1]] if best is not None else None


def notes_to_inject(
    earlier: Sequence[ResearcherReport],
    answered: Iterable[str],
    threshold: float,
) -> tuple[ResearcherReport, ...]:
    """Earlier reports worth giving every researcher as notes: those with findings whose question
    is not one of ``answered`` (reused sub-tasks reach later researchers as sibling reports)."""
    questions = tuple(answered)
    return tuple(
        r
        for r in earlier
        if r.findings and not any(similarity(q, r.question) >= threshold for q in questions)
    )


def cap_notes(notes: Sequence[str], total_chars: int) -> tuple[str, ...]:
    """Whole notes, in order, while they fit in ``total_chars``; the first that does not fit is cut."""
    out: list[str] = []
    left = total_chars
    for note in notes:
        if left <= 0:
            break
        out.append(note[:left])
        left -= len(out[-1])
    return tuple(n for n in out if n)


def doc_allowance(used_chars: int, length: int, per_doc: int, total: int) -> int:
    """How many characters of a document of ``length`` may still be kept (0: none)."""
    return max(0, min(length, per_doc, total - used_chars))


def keep_for_follow_up(doc: FetchedDoc) -> bool:
    """A search snippet stood in for a page that could not be read: not worth reusing."""
    return doc.content_type != SNIPPET_TYPE and bool(doc.text.strip())


@dataclass(frozen=True)
class EarlierRun:
    """One run of a follow-up thread as loaded from disk, nearest first."""

    run_id: str
    reports: tuple[ResearcherReport, ...]
    docs: tuple[FetchedDoc, ...]


def merge_thread(
    runs: Sequence[EarlierRun], total_chars: int
) -> tuple[tuple[ResearcherReport, ...], tuple[FetchedDoc, ...]]:
    """The reports and documents a follow-up inherits from a thread of earlier runs.

    The nearest run wins a tie (same question, same URL); documents stop at ``total_chars``."""
    reports: list[ResearcherReport] = []
    questions: set[str] = set()
    docs: list[FetchedDoc] = []
    urls: set[str] = set()
    used = 0
    for run in runs:
        for report in run.reports:
            key = normalize_question(report.question)
            if key and key not in questions and (report.findings or report.status == "ok"):
                questions.add(key)
                reports.append(report)
        for doc in run.docs:
            key = normalize_url(doc.url)
            if key in urls or not keep_for_follow_up(doc) or used + len(doc.text) > total_chars:
                continue
            urls.add(key)
            used += len(doc.text)
            docs.append(doc)
    return tuple(reports), tuple(docs)


def research_question(query: str, seed: FollowUpSeed | None) -> str:
    """What a run researches: a follow-up that points back ("how did that compare?") carries the
    earlier question's subject into planning, search, evaluation and writing."""
    return query if seed is None else in_context(query, seed.context or seed.query)


def started_event(request: Request, question: str) -> dict[str, JsonValue]:
    """The ``run_started`` payload; ``in_context`` when a follow-up borrowed its subject."""
    payload: dict[str, JsonValue] = {
        "mode": request.mode,
        "query": request.query,
        "follow_up_of": request.follow_up,
    }
    if question != request.query:
        payload["in_context"] = question
    return payload


def follow_up_note(query: str, report_name: str) -> str:
    """The line near the top of a follow-up report that links the earlier one (no run-varying
    facts: the earlier report's file name is fixed once that run has finished)."""
    flat = " ".join(query.split())
    if report_name:
        return f'Follow-up to: "{flat}" (report: {report_name})'
    return f'Follow-up to: "{flat}"'


def earlier_notes(
    reports: Sequence[ResearcherReport],
    answered: Sequence[str],
    settings: FollowUpSettings,
    report_cap: int,
) -> list[str]:
    """The earlier findings injected into a follow-up's researchers, capped, except those a reused
    sub-task (``answered``: the questions planned in deep mode) already carries into this run."""
    chosen = notes_to_inject(reports, answered, settings.match_threshold)
    notes = [injection_note(r, report_cap) for r in chosen]
    return list(cap_notes(notes, settings.notes_cap_chars))


def reused_report(subtask: SubTask, earlier: ResearcherReport) -> ResearcherReport:
    """An earlier run's report standing for ``subtask`` (its cost was paid by that run)."""
    return earlier.model_copy(
        update={"subtask_id": subtask.id, "question": subtask.question, "usage": Usage()}
    )


def reused_event(
    subtask: SubTask, seed: FollowUpSeed, earlier: ResearcherReport
) -> dict[str, JsonValue]:
    """The ``subtask_reused`` event's payload: which earlier run and sub-task answered it."""
    return {
        "subtask": subtask.id,
        "question": subtask.question,
        "earlier_run": seed.run_id,
        "earlier_subtask": earlier.subtask_id,
    }
