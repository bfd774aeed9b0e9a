"""The citation verifier: every sentence of the report is checked before the report is written.

Three rules, in order. A citation must name a source read in this run (unknown ids are removed
and returned so the coordinator can log them; the rendered report never prints them). A sentence
that states a figure, a date or a name must cite a source. A cited sentence must be supported by
the passages of the sources it cites (the evidence researchers attached to their findings):
every figure must be there, and the lexical support score (``policies.support``) must reach
``min_support``. Sentences that fail go back to the writer once (``RewriteTask``); a rewrite that
still fails, or a failure with rewriting turned off, is dropped. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from deepresearch.llm_messages import WriteDraft, WriteTask
from deepresearch.policies.verification.citations import (
    NUMERIC_MARKER,
    cite_marker,
    markers_from_numbers,
)
from deepresearch.policies.verification.support import (
    Support,
    Weights,
    needs_citation,
    support,
    supports,
)
from deepresearch.schemas import (
    Evidence,
    Finding,
    Report,
    ReportSection,
    ResearcherReport,
    Source,
    Verification,
)
from deepresearch.text.figures import figures
from deepresearch.text.sentences import split_sentences

ANSWER = -1  # the section index of the answer's sentences
NO_VERIFIED_ANSWER = (
    "No answer could be given: no statement of the draft could be verified against the sources "
    "that were read."
)
_MARKER = re.compile(r"[ \t]*(?<!\\)\[([^\[\]\n]+)\](?!\()")
_URL_LIKE = re.compile(r"^(?:https?://|doc:)\S", re.IGNORECASE)


# --------------------------------------------------------------------------- before the report


def evidence_index(reports: Sequence[ResearcherReport]) -> dict[str, tuple[Evidence, ...]]:
    """Every evidence passage the researchers attached, by source URL, each passage once."""
    out: dict[str, list[Evidence]] = {}
    for report in reports:
        for finding in report.findings:
            for ev in finding.evidence:
                kept = out.setdefault(ev.url, [])
                if all(ev.quote != k.quote for k in kept):
                    kept.append(ev)
    return {url: tuple(evs) for url, evs in out.items()}


def unknown_ids(task: WriteTask, draft: WriteDraft) -> list[int]:
    """Source numbers the draft cites that the task never listed (in order, each once)."""
    known = {s.n for s in task.sources}
    cited = [n for sec in draft.sections for f in sec.findings for n in f.sources]
    cited += list(draft.answer_sources)
    for match in NUMERIC_MARKER.finditer(draft.answer):
        cited += [int(n) for n in re.split(r"\s*[,;]\s*", match.group(1).strip())]
    return list(dict.fromkeys(n for n in cited if n not in known))


def adopt_answer_markers(task: WriteTask, draft: WriteDraft) -> WriteDraft:
    """``[n]`` the writer put into its answer become citations of task source n (unknown n go)."""
    urls = {s.n: s.url for s in task.sources}
    answer = markers_from_numbers(draft.answer, urls)
    return draft if answer == draft.answer else draft.model_copy(update={"answer": answer})


# --------------------------------------------------------------------------- the check


@dataclass(frozen=True)
class Claim:
    """One sentence of the report: where it is, its text without markers, what it cites."""

    section: int  # ANSWER or the index of its section
    item: int  # paragraph of the answer / finding within the section
    text: str
    citations: tuple[str, ...]
    inline: bool = False  # cites by markers in its own text (answer sentences)


@dataclass(frozen=True)
class Check:
    claim: Claim
    ok: bool
    needs_citation: bool
    support: Support
    evidence: tuple[Evidence, ...] = ()  # the best passage of each cited source

    @property
    def reason(self) -> str:
        if self.ok:
            return "supported"
        if not self.claim.citations:
            return "states a figure, date or name without a citation"
        if self.support.missing:  # counted, not quoted: the unsupported figure is not repeated
            return f"{len(self.support.missing)} figure(s) not in the cited passage"
        return f"support {self.support.score:.2f} below the threshold"


@dataclass(frozen=True)
class Rewrite:
    """A failing sentence as the writer rewrote it, with the sources it now cites."""

    text: str
    citations: tuple[str, ...]


@dataclass(frozen=True)
class Checked:
    report: Report  # unknown citations removed; sentences not yet rewritten or dropped
    checks: tuple[Check, ...]
    removed: tuple[str, ...]  # citations that named no source read in this run

    def failing(self) -> list[int]:
        return [i for i, c in enumerate(self.checks) if not c.ok]


def _markers(text: str, known: set[str]) -> tuple[str, list[str], list[str]]:
    """``text`` without citation markers, the known URLs it cites, the unknown ones it named."""
    cited: list[str] = []
    unknown: list[str] = []

    def swap(match: re.Match[str]) -> str:
        parts = [p.strip() for p in re.split(r"\s*[,;]\s*", match.group(1).strip()) if p.strip()]
        if parts and all(p in known for p in parts):
            cited.extend(parts)
            return ""
        if parts and all(_URL_LIKE.match(p) for p in parts):
            unknown.extend(p for p in parts if p not in known)
            cited.extend(p for p in parts if p in known)
            return ""
        return match.group(0)  # ordinary bracketed prose

    stripped = NUMERIC_MARKER.sub("", _MARKER.sub(swap, text))
    return " ".join(stripped.split()), cited, unknown


def _sentences(text: str) -> list[list[str]]:
    """Paragraphs of sentences."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return [split_sentences(" ".join(p.split())) for p in paragraphs]


def check_claim(
    claim: Claim,
    evidence: Mapping[str, Sequence[Evidence]],
    weights: Weights,
    min_support: float,
) -> Check:
    needs = needs_citation(claim.text)
    passages = [ev for url in claim.citations for ev in evidence.get(url, ())]
    if not claim.citations:
        return Check(claim, not needs, needs, Support(0.0, ()))
    result = support(claim.text, " ".join(ev.quote for ev in passages), weights)
    used: list[Evidence] = []
    for url in claim.citations:  # the passage of each cited source that supports it best
        cited = evidence.get(url, ())
        scores = supports(claim.text, [ev.quote for ev in cited], weights)
        scored = [(s.score, ev) for s, ev in zip(scores, cited, strict=True)]
        best = max(scored, key=lambda pair: pair[0], default=None)  # first of equals, as sorted
        if best is not None and best[0] > 0:
            used.append(best[1])
    return Check(claim, result.passes(min_support), needs, result, tuple(used))


def check_report(
    report: Report, evidence: Mapping[str, Sequence[Evidence]], min_support: float
) -> Checked:
    """Remove unknown citations, split the report into sentences and check each one."""
    known = {s.url for s in report.sources}
    removed: list[str] = [u for u in report.answer_citations if u not in known]
    answer_urls = tuple(u for u in report.answer_citations if u in known)
    claims: list[Claim] = []
    for p, paragraph in enumerate(_sentences(report.answer)):
        for sentence in paragraph:
            text, cited, unknown = _markers(sentence, known)
            removed += unknown
            if text:
                inline = bool(cited)
                urls = tuple(dict.fromkeys(cited)) if inline else answer_urls
                claims.append(Claim(ANSWER, p, text, urls, inline))
    sections: list[ReportSection] = []
    for s, section in enumerate(report.sections):
        findings: list[Finding] = []
        for f, finding in enumerate(section.findings):
            removed += [u for u in finding.citations if u not in known]
            urls = tuple(u for u in finding.citations if u in known)
            findings.append(finding.model_copy(update={"citations": urls}))
            for sentence in (s for para in _sentences(finding.text) for s in para):
                text, cited, unknown = _markers(sentence, known)
                removed += unknown
                if text:
                    claims.append(Claim(s, f, text, tuple(dict.fromkeys((*urls, *cited)))))
        sections.append(section.model_copy(update={"findings": tuple(findings)}))
    cleaned = report.model_copy(
        update={"sections": tuple(sections), "answer_citations": answer_urls}
    )
    weights = Weights(ev.quote for evs in evidence.values() for ev in evs)
    checks = tuple(check_claim(c, evidence, weights, min_support) for c in claims)
    return Checked(cleaned, checks, tuple(dict.fromkeys(removed)))


def verified_answer_claims(
    report: Report, evidence: Mapping[str, Sequence[Evidence]], min_support: float
) -> int:
    """How many of the Answer's sentences cite a source whose passage supports them: what two
    Answers of one run are compared by (the model's and the extractive composer's)."""
    if report.status != "completed":
        return 0
    checks = check_report(report, evidence, min_support).checks
    return sum(1 for c in checks if c.claim.section == ANSWER and c.ok and c.claim.citations)


# --------------------------------------------------------------------------- the final report


_TABLE_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")


def join_answer(parts: Sequence[str]) -> str:
    """Answer paragraphs, blank-line separated, except consecutive Markdown table lines (a
    composed period -> value table is checked line by line and must render as one table)."""
    out = ""
    for i, part in enumerate(parts):
        if i:
            table = part.startswith("|") and parts[i - 1].startswith("|")
            # a header line (its separator line follows) starts a table of its own
            header = i + 1 < len(parts) and _TABLE_RULE.fullmatch(parts[i + 1].strip()) is not None
            out += "\n" if table and not header else "\n\n"
        out += part
    return out


def _with_markers(text: str, urls: Sequence[str]) -> str:
    """``text`` with URL markers before its final punctuation: "Sales rose [u]." """
    markers = "".join(cite_marker(u) for u in urls)
    if text[-1:] in ".!?":
        return f"{text[:-1]} {markers}{text[-1]}"
    return f"{text} {markers}"


@dataclass
class _Kept:
    texts: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


def finalize(
    checked: Checked,
    rewrites: Mapping[int, Rewrite],
    evidence: Mapping[str, Sequence[Evidence]],
    candidates: Sequence[Source],
    min_support: float,
    removed: Sequence[str] = (),
) -> tuple[Report, list[Check]]:
    """The report with failing sentences rewritten or dropped, sources carrying the cited
    passage locations, and the counts; also the checks of the sentences that were dropped."""
    weights = Weights(ev.quote for evs in evidence.values() for ev in evs)
    kept: dict[tuple[int, int], _Kept] = {}
    dropped: list[Check] = []
    rewritten = 0
    for i, check in enumerate(checked.checks):
        claim = check.claim
        slot = kept.setdefault((claim.section, claim.item), _Kept())
        if not check.ok and i in rewrites:
            new = rewrites[i]
            again = check_claim(
                Claim(claim.section, claim.item, new.text, new.citations, inline=True),
                evidence,
                weights,
                min_support,
            )
            if new.text and new.citations and again.ok:
                rewritten += 1
                check = again
                claim = again.claim
        if not check.ok:
            dropped.append(check)
            continue
        text = claim.text
        if claim.section == ANSWER and claim.inline and claim.citations:
            text = _with_markers(text, claim.citations)
        if text not in slot.texts:
            slot.texts.append(text)
        slot.citations += [u for u in claim.citations if u not in slot.citations]
        slot.evidence += [e for e in check.evidence if e not in slot.evidence]
    report = checked.report
    answer_parts = [" ".join(k.texts) for (s, _), k in sorted(kept.items()) if s == ANSWER]
    answer_urls = tuple(
        dict.fromkeys(
            u
            for (s, _), k in sorted(kept.items())
            if s == ANSWER
            for u in k.citations
            if u in report.answer_citations
        )
    )
    sections: list[ReportSection] = []
    for s, section in enumerate(report.sections):
        findings: list[Finding] = []
        for f in range(len(section.findings)):
            k = kept.get((s, f))
            if k is None or not k.texts:
                continue
            findings.append(
                Finding(
                    text=" ".join(k.texts),
                    citations=tuple(k.citations),
                    evidence=tuple(k.evidence),
                )
            )
        if findings:
            sections.append(ReportSection(heading=section.heading, findings=tuple(findings)))
    used = {u for sec in sections for f in sec.findings for u in f.citations}
    used |= {u for (s, _), k in kept.items() if s == ANSWER for u in k.citations}
    cited_at: dict[str, list[str]] = {}
    for k in kept.values():
        for ev in k.evidence:
            locs = cited_at.setdefault(ev.url, [])
            if ev.locator and ev.locator not in locs:
                locs.append(ev.locator)
    sources = tuple(
        s.model_copy(update={"cited_at": tuple(cited_at.get(s.url, ()))})
        for s in candidates
        if s.url in used
    )
    cited = [c for c in checked.checks if c.claim.citations]
    draft_figures = [(c, figures(c.claim.text)) for c in cited]
    verification = Verification(
        claims=len(checked.checks),
        cited=len(cited),
        verified=sum(1 for c in checked.checks if c.ok and c.claim.citations),
        rewritten=rewritten,
        dropped=len(dropped),
        removed_ids=tuple(dict.fromkeys((*removed, *checked.removed))),
        figures=sum(len(fs) for _, fs in draft_figures),
        figures_supported=sum(len(fs) - len(c.support.missing) for c, fs in draft_figures),
    )
    answer = join_answer([p for p in answer_parts if p])
    status = report.status if sections else "no_answer"
    if not sections:
        answer = NO_VERIFIED_ANSWER
    final = report.model_copy(
        update={
            "answer": answer,
            "answer_citations": answer_urls if answer and sections else (),
            "sections": tuple(sections),
            "sources": sources if sections else (),
            "status": status,
            "verification": verification,
        }
    )
    return final, dropped


__all__ = [
    "ANSWER",
    "Check",
    "Checked",
    "Claim",
    "Rewrite",
    "adopt_answer_markers",
    "check_claim",
    "check_report",
    "evidence_index",
    "finalize",
    "unknown_ids",
    "verified_answer_claims",
]
