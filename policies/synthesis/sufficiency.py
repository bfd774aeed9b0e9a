"""Enough to answer? Which findings count, which sources are usable, and the honest abort report.

A source is *usable* when it was read and backs at least one kept finding; a finding is kept when
its sentence covers enough of its sub-question's key terms, and only when the sources read, taken
together, are about the question at all (a corpus about gardening shares "control" with a question
about export controls, and an extractive reader would happily quote it). When a run ends with fewer
usable sources than ``run.min_sources`` it does not write a confident report: it says what was
searched, what failed and what to try instead. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from deepresearch.config.trust import ScoringSettings
from deepresearch.policies.search.source_scoring import coverage, key_terms, normalized_terms
from deepresearch.policies.verification.citations import usable_sources
from deepresearch.schemas import Finding, Report, ResearcherReport
from deepresearch.text.boilerplate import shape_of
from deepresearch.text.names import names_entity, proper_entities, spelt_like
from deepresearch.text.question import analyze
from deepresearch.text.question_words import FRAME
from deepresearch.text.row_sums import totals_of_parts
from deepresearch.text.tables import parse_row
from deepresearch.text.terms import STOPWORDS

MAX_LISTED_QUERIES = 12
MAX_LISTED_AUTHORS = 5


@dataclass(frozen=True)
class FindingCheck:
    """The findings to keep, and why the others went."""

    kept: tuple[Finding, ...]
    dropped: int
    topic_coverage: float  # share of the question's key terms found in all sources read
    off_topic: bool  # the sources read are not about the question: nothing is kept


def check_findings(
    question: str,
    findings: Sequence[Finding],
    source_texts: Sequence[str],
    cfg: ScoringSettings,
    quoted: bool = True,
    titles: Mapping[str, str] | None = None,
    authors: Mapping[str, str] | None = None,
) -> FindingCheck:
    """Keep findings relevant to ``question``; none when the sources are off-topic as a whole.

    A quoted finding (the extractive provider's: a source sentence picked by word overlap) must
    cover ``finding_min_relevance`` of the key terms and a ``finding_relative`` share of what the
    best finding covers: one shared word ("control") does not make a quote about pest control part
    of an answer on export controls. A model's findings paraphrase ("bought back stock" for "share
    repurchases"), so word coverage says little about them: only the topic check applies.
    A quoted table row that is a part of a kept total (``text.row_sums``: "Research and
    development" of "Operating expenses") is kept with it, though it names none of the
    question's words. Boilerplate (a certification, a signature, a defined term;
    ``text.boilerplate``) is dropped whoever drafted it. A quote is read with the ``titles`` of
    the sources it cites (by URL): a filing's table row never repeats the company or quarter
    its title names, and a row is judged by the question's words without its names (a segment
    table's "Client Computing - Desktop" row of Intel's filing never says "Intel").
    A finding is someone else's (``foreign``) when every source it cites is by someone its
    ``authors`` (by URL: who a filing's cover says it is by) name and that none of the
    question's names are: Intel's revenue is no answer about AMD, whatever the finding says.
    Only the names the sources never write in lower case count (``proper_entities``): a
    title-cased "Total Sales" is a metric the filings write as "sales", not a company.
    """
    boiler = sum(1 for f in findings if shape_of(f.text) is not None)  # never evidence
    findings = [f for f in findings if shape_of(f.text) is None]
    names = _asked_names(question, source_texts, authors or {})
    own = [f for f in findings if not foreign(f, names, authors or {}, titles or {}, quoted)]
    boiler, findings = boiler + len(findings) - len(own), own
    key = key_terms(question, cfg)
    read: set[str] = set()
    for text in source_texts:
        read.update(normalized_terms(text))
    topic = coverage(key, read) if source_texts else 0.0
    if topic < cfg.topic_min_coverage:
        return FindingCheck((), boiler + len(findings), topic, True)
    if not quoted:
        return FindingCheck(tuple(findings), boiler, topic, False)
    titles = titles or {}
    measured = tuple(k for k in key if k.weight < cfg.name_weight) or key
    scores = [
        coverage(
            measured if parse_row(f.text) is not None else key,
            normalized_terms(" ".join([f.text, *(titles.get(u, "") for u in f.citations)])),
        )
        for f in findings
    ]
    bar = max(cfg.finding_min_relevance, cfg.finding_relative * max(scores, default=0.0))
    passed = {f.text.strip() for f, score in zip(findings, scores, strict=True) if score >= bar}
    # a part of a kept total is about what the total is ("Research and development" of
    # "Operating expenses"), though it names none of the question's words
    failed = any(f.text.strip() not in passed for f in findings)
    parts = totals_of_parts(source_texts) if failed else {}  # the pages' tables, if needed
    kept = tuple(
        f for f in findings if (text := f.text.strip()) in passed or parts.get(text, set()) & passed
    )
    return FindingCheck(kept, boiler + len(findings) - len(kept), topic, False)


def _asked_names(
    question: str, source_texts: Sequence[str], authors: Mapping[str, str]
) -> list[str]:
    """The question's names a finding must name (``foreign``): those the sources never write in
    lower case (``proper_entities``), and any that names a source's author, whatever the texts
    write: "Apple or Microsoft" asks about Apple's filings too. A question typed without
    capitals may name a company in any word, possessive or not: "what tax rate was reported
    by nvidia" got Microsoft's sentence for its Answer, "what was amd revenue" Intel's rows."""
    if not authors:
        return []
    entities = analyze(question).entities
    if question.islower():  # any word may be the name: the proper ones, or an author's
        words = re.findall(r"[a-z][a-z0-9&-]+", question)
        entities = (*entities, *(w for w in words if w not in FRAME and w not in STOPWORDS))
    by = set(authors.values())
    proper = proper_entities(entities, source_texts)
    return list(dict.fromkeys(e for e in entities if e in proper or _names_any(e, by)))


def _names_any(name: str, authors: Iterable[str]) -> bool:
    return any(names_entity(name, a) for a in authors)


def foreign(
    finding: Finding,
    names: Sequence[str],
    authors: Mapping[str, str],
    titles: Mapping[str, str],
    quoted: bool,
) -> bool:
    """Whether ``finding`` is about none of ``names`` by what its sources are known to be: each
    cited source has an author (``authors``), and neither the authors, the sources' titles nor
    the source text it rests on (the quote itself, or the passage backing a model's words: a
    model may write any name) names one of them. Unknown authors tell nothing: never foreign."""
    cited = finding.citations
    if not names or not cited or not all(authors.get(u) for u in cited):
        return False
    told = [*(authors[u] for u in cited), *(titles.get(u, "") for u in cited)]
    told += [e.quote for e in finding.evidence]
    told += [finding.text] if quoted else []
    text = "\n".join(told)
    return not any(names_entity(n, text) for n in names)


@dataclass(frozen=True)
class SearchContext:
    """What the run searched with, for the suggestions."""

    providers: tuple[str, ...]
    corpus: bool
    deep: bool


def _quote(text: str) -> str:
    return "“" + " ".join(text.split()) + "”"


def suggestions(
    reports: Sequence[ResearcherReport], ctx: SearchContext, query: str = ""
) -> list[str]:
    out = [
        *whose_documents(query, reports),
        "Broaden or rephrase the question, using the words the sources would use, or split it "
        "into simpler questions.",
    ]
    if ctx.corpus:
        out.append(
            "The corpus may not cover this topic: point --corpus at documents about it, or search "
            "the web instead (--search duckduckgo)."
        )
    else:
        out.append("Try other search providers (--search), or a local corpus (--corpus DIR).")
    if any(r.search_degraded for r in reports):
        out.append("A search provider was unavailable during the run: try again later.")
    if any(r.status != "ok" for r in reports):
        out.append("Some research steps failed (see above): check network access, keys and limits.")
    if not ctx.deep:
        out.append("Try --mode deep: more sub-questions, queries and rounds.")
    return out


def whose_documents(query: str, reports: Sequence[ResearcherReport]) -> list[str]:
    """For each name of ``query`` that no document read is by: whom they are by, and the one
    whose name is spelt most like it ("Appel": did you mean Apple Inc.?)."""
    authors = list(dict.fromkeys(a for r in reports for a in r.authors_read))
    if not authors:
        return []
    out = []
    for name in analyze(query).entities:
        if any(names_entity(name, a) for a in authors):
            continue
        near = [a for a in authors if spelt_like(name, a)]
        if near:
            out.append(f"No document read is by {name}: did you mean {near[0]}?")
        else:
            listed = ", ".join(authors[:MAX_LISTED_AUTHORS])
            more = " and others" if len(authors) > MAX_LISTED_AUTHORS else ""
            out.append(f"No document read is by {name}: they are by {listed}{more}.")
    return out


def could_not_research(
    query: str,
    title: str,
    reports: Sequence[ResearcherReport],
    min_sources: int,
    ctx: SearchContext,
    notes: Sequence[str] = (),
    stop_reason: str = "",
) -> Report:
    """The honest report: no findings, no sources, no citations; what was tried and what next."""
    usable = len(usable_sources(reports))
    read = sum(r.sources_read for r in reports)
    dropped = sum(r.claims_dropped for r in reports)
    if stop_reason:
        why = stop_reason
    elif usable:
        why = f"{usable} usable source(s) found, fewer than the {min_sources} required"
    elif read and dropped:  # the sources were there; what the model said of them was not
        why = (
            f"{read} source(s) were read, but the model's {dropped} claim(s) about them were "
            "dropped as unsupported by what they say"
        )
    else:
        why = "no source relevant to the question was found"
    queries = list(dict.fromkeys(q for r in reports for q in r.queries))
    searched = (
        ", ".join(_quote(q) for q in queries[:MAX_LISTED_QUERIES]) or "nothing (no query ran)"
    )
    if len(queries) > MAX_LISTED_QUERIES:
        searched += f" and {len(queries) - MAX_LISTED_QUERIES} more"
    providers = ", ".join(ctx.providers) or "the default web search"
    failed: list[str] = []
    for r in reports:
        parts = []
        if r.error:
            parts.append(r.error)
        if r.hits_found:
            parts.append(
                f"{r.hits_found} hits, {r.hits_filtered} skipped as irrelevant or unreadable"
            )
        else:
            parts.append("no hits")
        if r.findings_filtered:
            parts.append(f"{r.findings_filtered} passages read were not about the question")
        failed.append(f"- {_quote(r.question)}: " + "; ".join(parts) + ".")
    lines = [
        f"Could not research this question: {why}. No answer is given rather than one built on "
        "sources that do not support it.",
        "",
        f"What was searched ({providers}): {searched}.",
    ]
    if failed:
        lines += ["", "What failed:", *failed]
    lines += ["", "Suggestions:", *(f"- {s}" for s in suggestions(reports, ctx, query))]
    return Report(
        query=query,
        title=title,
        answer="\n".join(lines),
        sections=(),
        sources=(),
        notes=tuple(notes),
        status="no_answer",
    )
