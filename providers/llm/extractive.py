"""The model-free LLM provider: answers every task kind by rule, extraction and ranking.

It lets the whole agent run with no API key and no network, and it is the last tier of a fallback
chain so a run degrades instead of dying. Findings are verbatim source text (figures exactly as
written), chosen by BM25 relevance and MMR diversity; queries and plans come from grammar rules.
Output is deterministic: no randomness, no clock, stable ordering everywhere.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel

from deepresearch import domains
from deepresearch.domains.protocol import cite
from deepresearch.llm_messages import (
    DraftFinding,
    DraftSection,
    EvaluateTask,
    FindingsDraft,
    FindingsTask,
    IntentDraft,
    IntentTask,
    LLMReply,
    LLMRequest,
    PlanDraft,
    PlanTask,
    QueriesTask,
    QueryList,
    RewriteDraft,
    RewriteItem,
    RewriteTask,
    WriteDraft,
    WriteTask,
)
from deepresearch.policies.verification.support import Weights, support, supports
from deepresearch.providers.llm import rules
from deepresearch.providers.llm.answer_quotes import (
    STATED_AMOUNT,
    per_document_figures,
    quotable,
    standing,
)
from deepresearch.providers.llm.decomposition import decompose
from deepresearch.providers.llm.evidence import (
    HEADING_WEIGHT,
    PER_DOCUMENT_SHAPES,
    breakdown_rows,
    evidence_budget,
    evidence_units,
    heading_scores,
    in_context,
    latest_weights,
    line_item_boost,
    one_period_breakdown,
    parts_rows,
    per_document_rows,
    per_metric_rows,
    row_labels,
    section_scores,
    selection_budget,
)
from deepresearch.schemas import Evaluation
from deepresearch.text.boilerplate import document_of
from deepresearch.text.figures import missing_figures, states_figure
from deepresearch.text.periods import find_periods
from deepresearch.text.question import analyze, metric_words_of
from deepresearch.text.sentences import (
    Scorer,
    Unit,
    asks_quantity,
    build_units,
    mmr_select,
    split_sentences,
)
from deepresearch.text.tables import parse_row
from deepresearch.text.terms import terms

NO_PASSAGE = "No relevant passage was found in the sources"
NO_ANSWER = "The sources did not contain information that answers this question."
_TERMINAL = (".", "!", "?")
# a finding stating a figure counts this much more for the Answer: "our effective tax rate was
# 18%" answers, "the rate decreased due to ..." talks; and an explanation's "In July 2023, Kove
# alleged ... $517 million" is what was disclosed, "The outcomes of our legal proceedings are
# inherently unpredictable" talk of it (an explanation's own weight, 1.5 before its findings held
# such sentences: 2.0 gave answers 0.5649 -> 0.5701 quick, 0.5546 -> 0.5598 deep)
FIGURE_WEIGHT = 2.0
# the same for the findings of a question that asks no quantity (a quantity question's scorer
# weighs figures already): 1.5 / 1.6 / 2.0 / 2.5 gave evidence 0.6278 / 0.6312 / 0.6298 / 0.6375
# and answers 0.5593 / 0.5647 / 0.5593 / 0.5607, against 0.6218 / 0.5593 without
FINDING_FIGURE_WEIGHT = 1.5
REFILLS = 3  # rounds of selecting more units when some merged into another's finding
# prose findings an Answer quotes, after a composed figure as without one (2 after a figure
# gave answers 0.56, 3 gave 0.5638: "Total revenue of $11.7 billion was down ..." follows)
MAX_QUOTES = 3


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(_TERMINAL) else f"{text}."


def _has_unit(text: str) -> bool:
    row = parse_row(text)
    return row is not None and bool(row.unit)


def _finding_scores(query: str, texts: list[str]) -> list[float]:
    """Each finding's relevance: the best of its sentences' (a table row is one). A finding
    may be a sentence with the rest of its paragraph, and a longer text would rank lower by
    length alone."""
    parts = [[t] if parse_row(t) else (split_sentences(t) or [t]) for t in texts]
    owned = [(k, p) for k, sentences in enumerate(parts) for p in sentences]
    units = [Unit(p, k, n, False, tuple(terms(p))) for n, (k, p) in enumerate(owned)]
    if not units:
        return []
    best = [0.0] * len(texts)
    for u, sc in zip(units, Scorer(units).score(query, find_periods(query)), strict=True):
        best[u.source] = max(best[u.source], sc)
    return best


def usable_summary(summary: str) -> bool:
    """A summary that reports evidence (not empty, not the no-passage notice)."""
    return bool(summary.strip()) and not summary.startswith(NO_PASSAGE)


def answer_queries(task: QueriesTask) -> QueryList:
    return QueryList(
        queries=tuple(rules.search_queries(task.question, task.max_queries, task.notes))
    )


def answer_findings(task: FindingsTask) -> FindingsDraft:
    units = evidence_units(task.question, [(s.n, s.url, s.text) for s in task.sources])
    scorer = Scorer(units)
    periods = find_periods(task.question)
    q = analyze(task.question)
    scores = scorer.score(task.question, periods)
    focus = scorer.score(" ".join([*q.entities, *q.metric_words]), periods)
    scores = [a + b for a, b in zip(scores, focus, strict=True)]
    under = heading_scores(task.question, units, periods)
    scores = [a + HEADING_WEIGHT * b for a, b in zip(scores, under, strict=True)]
    documents = {s.n: document_of(s.url) for s in task.sources}
    # of two near-identical rows (MMR keeps one), prefer the one that states its unit
    scores = [
        sc * (1.25 if _has_unit(u.text) else 1.0) * w
        for sc, u, w in zip(scores, units, latest_weights(q, units, documents), strict=True)
    ]
    if not asks_quantity(task.question):  # a quantity question's scorer weighs figures already
        scores = [
            sc * (FINDING_FIGURE_WEIGHT if not u.table and states_figure(u.text) else 1.0)
            for sc, u in zip(scores, units, strict=True)
        ]
    labels = row_labels(units)
    scores = line_item_boost(task.question, units, scores, labels)
    chosen = _select(task.question, units, scores, scorer, selection_budget(q, task.max_findings))
    budget = evidence_budget(q, task.max_findings, len(set(documents.values())))
    chosen = per_metric_rows(q, units, scores, chosen, budget, labels)
    if q.shape in PER_DOCUMENT_SHAPES:  # one value per filing / entity: each document's best row
        chosen = per_document_rows(units, scores, chosen, documents, budget)
    if one_period_breakdown(q):  # the parts of a figure: the rest of its table
        chosen = breakdown_rows(q, units, scores, chosen, budget)
    chosen = parts_rows(task.question, units, chosen, labels, task.max_findings)
    if not chosen:
        return FindingsDraft(summary=f"{NO_PASSAGE} for: {task.question.strip()}", findings=())
    findings = tuple(
        DraftFinding(text=text, sources=(units[i].source,), section=units[i].heading)
        for i, text in in_context(task.question, units, chosen)
    )
    by_score = sorted(chosen, key=lambda i: (-scores[i], units[i].order))
    top = scores[by_score[0]]
    lead = [i for i in by_score[:3] if scores[i] >= 0.5 * top]
    summary = " ".join(_sentence(units[i].text) for i in lead)
    return FindingsDraft(summary=summary, findings=findings)


def _select(
    question: str, units: list[Unit], scores: list[float], scorer: Scorer, k: int
) -> list[int]:
    """MMR's ``k`` best units, and more while some of them are part of another's paragraph
    (``in_context`` makes them one finding): ``k`` findings, not ``k`` sentences."""
    chosen = mmr_select(units, scores, scorer, k)
    for _ in range(REFILLS):
        short = k - len(in_context(question, units, chosen))
        more = mmr_select(units, scores, scorer, len(chosen) + short) if short > 0 else chosen
        if len(more) <= len(chosen):
            break
        chosen = more
    return chosen


def answer_plan(task: PlanTask) -> PlanDraft:
    """The whole question first, researched as quick mode does, then its parts, each a whole
    question (``decomposition``); the question alone, with why, when it does not split."""
    whole = " ".join(task.query.split())
    split = decompose(whole, task.max_subtasks - 1)
    if split.whole:
        return PlanDraft(complexity=1, sub_questions=(whole,), kept_whole=split.reason)
    subs = (whole, *split.parts)
    complexity = 2 if len(subs) <= 3 else 3
    return PlanDraft(complexity=complexity, sub_questions=subs)


def _reformulate(gap: str, query: str) -> list[str]:
    """Whole questions to delegate for a sub-question that found nothing: its parts when it
    splits, else one question on its keywords, with the query's periods it lacks (a keyword
    string as a sub-question would head a section of the report)."""
    parts = decompose(gap, 3).parts
    if parts:
        return list(parts)
    tokens, periods = rules.tokenize(gap)
    text = rules.keywords(tokens, periods) or gap.strip().rstrip("?.")
    missing = [p for p in find_periods(query) if p.lower() not in text.lower()]
    return [f"What do the sources say about {' '.join([text, *missing])}?"]


def answer_evaluate(task: EvaluateTask) -> Evaluation:
    failed = set(task.failed)
    gaps = [
        item
        for i, item in enumerate(task.agenda)
        if item in failed
        or not usable_summary(task.summaries[i] if i < len(task.summaries) else "")
    ]
    if not gaps:
        return Evaluation(action="synthesize", reason="every agenda item has a usable summary")
    if task.round >= task.max_rounds:
        return Evaluation(
            action="synthesize",
            reason=f"{len(gaps)} agenda item(s) lack a summary but round {task.round} is the last",
        )
    new = rules.dedupe([q for g in gaps for q in _reformulate(g, task.query)])
    new = [q for q in new if q.strip().lower() not in {a.strip().lower() for a in task.agenda}]
    if not new or task.max_new_subtasks <= 0:
        return Evaluation(action="synthesize", reason="gaps remain but no new sub-question helps")
    return Evaluation(
        action="delegate",
        reason=f"no usable summary for: {'; '.join(gaps)}",
        new_subtasks=tuple(new[: task.max_new_subtasks]),
    )


def whole_first(task: WriteTask) -> bool:
    """A split plan's report: its first section researched the whole question (``answer_plan``)."""
    return len(task.sections) > 1 and len(rules.dedupe([task.sections[0].heading, task.query])) == 1


def answer_write(task: WriteTask) -> WriteDraft:
    """The Answer of a split plan opens with the whole question's, as quick mode writes it, then
    adds what the parts add: the whole question's Answer over the parts' findings, then each
    part's own Answer, each passage quoted once."""
    if not whole_first(task):
        return compose_answer(task)
    whole = compose_answer(task.model_copy(update={"sections": task.sections[:1]}))
    parts = [compose_answer(task.model_copy(update={"sections": task.sections[1:]}))]
    parts += [
        compose_answer(task.model_copy(update={"query": sec.heading, "sections": (sec,)}))
        for sec in task.sections[1:]
    ]
    paragraphs = [] if whole.answer == NO_ANSWER else whole.answer.split("\n\n")
    cited = list(whole.answer_sources)
    for part in parts:
        new = _unsaid(part.answer, paragraphs)
        paragraphs += new
        cited += part.answer_sources if new else ()
    sections = (*whole.sections, *parts[0].sections)
    answer = "\n\n".join(paragraphs) or NO_ANSWER
    return WriteDraft(answer=answer, sections=sections, answer_sources=tuple(dict.fromkeys(cited)))


def _unsaid(answer: str, paragraphs: list[str]) -> list[str]:
    """The paragraphs of a part's Answer the Answer so far does not hold; of quoted prose, the
    sentences it does not (a part quotes the whole question's passages in its own order). A row
    is held when it differs only by its markers and its entity lead: the whole question and a
    part cite different pages of one filing, and a part's heading may name no entity. A table
    keeps its title and rule lines over the rows it adds, or goes whole: without its rule line
    Markdown renders no table, and the Answer joins its title to the table before."""
    said = "\n\n".join(paragraphs)
    forms = [_said_form(p) for p in paragraphs]

    def held(paragraph: str) -> bool:
        return paragraph == NO_ANSWER or paragraph in said or _held(_said_form(paragraph), forms)

    out: list[str] = []
    for block in _blocks(answer.split("\n\n")):
        if len(block) > 1:  # a table
            rows = [r for r in block[2:] if not held(r)]
            out += [*block[:2], *rows] if rows else []
            continue
        paragraph = block[0]
        if held(paragraph):
            continue
        if "\n" not in paragraph and not _CITED.search(paragraph):  # prose, not rows or tables
            fresh = [t for t in split_sentences(paragraph) if t not in said]
            paragraph = " ".join(fresh)
        if paragraph:
            out.append(paragraph)
    return out


_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")  # a Markdown table's line under its title


def _blocks(paragraphs: list[str]) -> list[list[str]]:
    """Each table as one block (its title, rule and row lines), each other paragraph alone."""
    out: list[list[str]] = []
    table = False
    for i, p in enumerate(paragraphs):
        title = i + 1 < len(paragraphs) and _RULE.fullmatch(paragraphs[i + 1].strip()) is not None
        if table and not title and p.startswith("|"):  # a table's rule or row line
            out[-1].append(p)
        else:
            out.append([p])
            table = title
    return out


_MARKERS = re.compile(r" ?\[\d+(?:\]\[\d+|, ?\d+)*\]")
# "Initech: " or "| Initech: " (a table's title cell): the entity a composed line leads with
_LEAD = re.compile(r"^(\| )?([A-Z0-9&][\w&.'’-]*(?: (?:[A-Z0-9&][\w&.'’-]*|of|and|the))*): ")


def _said_form(paragraph: str) -> tuple[str, str]:
    """(entity lead, text) of a paragraph without its citation markers."""
    bare = _MARKERS.sub("", paragraph)
    lead = _LEAD.match(bare)
    return (lead[2], (lead[1] or "") + bare[lead.end() :]) if lead else ("", bare)


def _held(form: tuple[str, str], forms: list[tuple[str, str]]) -> bool:
    """The same text said before under the same entity, or where one of the two names none."""
    lead, text = form
    return any(t == text and (not lead or not e or e == lead) for e, t in forms)


_CITED = re.compile(r"\[\d")


def compose_answer(task: WriteTask) -> WriteDraft:
    """Sections mirror the input with citation URLs mapped to source numbers (uncited findings are
    dropped). The answer is up to three findings, verbatim, cited: the strongest of each section
    first, then (when there are fewer sections, as in quick mode) the next strongest findings that
    score at least half as well as the best. A composed figure (``domains.compose``) comes first
    instead, with the best prose findings (``MAX_QUOTES``) of its filings among all findings."""
    numbers = {s.url: s.n for s in task.sources}
    sections: list[DraftSection] = []
    flat: list[tuple[int, DraftFinding]] = []  # (section index, finding) of cited findings
    for si, sec in enumerate(task.sections):
        drafts = []
        for f in sec.findings:
            nums = tuple(sorted({numbers[u] for u in f.citations if u in numbers}))
            if nums:
                drafts.append(DraftFinding(text=f.text, sources=nums, section=f.section))
                flat.append((si, drafts[-1]))
        sections.append(DraftSection(heading=sec.heading, findings=tuple(drafts)))
    q = analyze(task.query)
    # the filer's words for what is asked count too ("percentage" of a "rate")
    said = set(terms(task.query))
    alike = [w for w in q.metric_words if not set(terms(w)) & said]
    scores = _finding_scores(" ".join([task.query, *alike]), [d.text for _, d in flat])
    # a finding under a heading the question names is on its topic, as in its selection
    under = section_scores(task.query, [d.section for _, d in flat], find_periods(task.query))
    scores = [a + HEADING_WEIGHT * b for a, b in zip(scores, under, strict=True)]
    urls = {s.n: s.url for s in task.sources}
    filings = {n: document_of(u) for n, u in urls.items()}
    told = standing([(filings.get(d.sources[0], ""), d.text) for _, d in flat])
    scores = [  # standing language another filing says too: quoted when nothing else is
        0.0 if k in told else sc * (FIGURE_WEIGHT if STATED_AMOUNT.search(d.text) else 1.0)
        for k, (sc, (_, d)) in enumerate(zip(scores, flat, strict=True))
    ]
    units = [Unit(d.text, d.sources[0], k) for k, (_, d) in enumerate(flat)]  # "latest": newest
    scores = [sc * w for sc, w in zip(scores, latest_weights(q, units, filings), strict=True)]
    leaders: dict[int, int] = {}
    for k, (si, _) in enumerate(flat):
        if si not in leaders or scores[k] > scores[leaders[si]]:
            leaders[si] = k
    ranked = sorted(leaders.values(), key=lambda k: (-scores[k], k))
    top = scores[ranked[0]] if ranked else 0.0
    ranked += sorted(
        (k for k in range(len(flat)) if k not in ranked and top > 0 and scores[k] >= 0.5 * top),
        key=lambda k: (-scores[k], k),
    )
    leads = per_document_figures(flat, scores, urls) if q.shape == "trend" else []
    ranked = [*leads, *(k for k in ranked if k not in leads)]
    # below them, the prose a composed figure may be quoted with
    rest = sorted((k for k in range(len(flat)) if k not in ranked), key=lambda k: (-scores[k], k))
    quotes = quotable([(k in ranked, flat[k][1]) for k in [*ranked, *rest]], q)
    best = [t for t, (_, lead) in quotes.items() if lead][: max(MAX_QUOTES, len(leads))]
    picked = {t: quotes[t][0] for t in best}
    answer = _quotes(picked) if picked else NO_ANSWER
    cited = tuple(dict.fromkeys(n for nums in picked.values() for n in nums))
    composed = domains.compose(task)  # through the domain of the evidence, as a model's draft
    if composed is not None and composed.whole:  # the statements that answer, as they are
        return WriteDraft(
            answer=composed.text, sections=tuple(sections), answer_sources=composed.sources
        )
    if composed is not None:  # the figure / table first, then the best quoted prose
        # prose from another filing would speak of another company or quarter
        docs = {document_of(urls.get(n, "")) for n in composed.sources}
        # and prose about another line item ("Cost of revenue increased ...") says nothing of it
        # (an explanation's: of what it explains, the line its figure answers)
        explained = q.metrics[:1] if q.shape == "explanation" else q.metrics
        wanted = {t for w in metric_words_of(explained) for t in terms(w)}
        prose = [
            (t, nums)
            for t, (nums, _) in quotes.items()
            if not parse_row(t)
            and any(document_of(urls.get(n, "")) in docs for n in nums)
            and (not wanted or wanted & set(terms(t)))
        ][:MAX_QUOTES]
        answer = "\n\n".join([composed.text, *(_sentence(t) for t, _ in prose)])
        cited = tuple(dict.fromkeys((*composed.sources, *(n for _, nums in prose for n in nums))))
    return WriteDraft(answer=answer, sections=tuple(sections), answer_sources=cited)


def _quotes(picked: dict[str, tuple[int, ...]]) -> str:
    """The quoted findings as the Answer: sentences run on as one paragraph, but table rows
    each on their own with its source ("... Total Number of Shares Purchased = 102,673 [1]"):
    rows run together read as one unbroken list of figures of no one filing."""
    if not any(parse_row(t) for t in picked):
        return " ".join(_sentence(t) for t in picked)
    return "\n\n".join(f"{_sentence(t)[:-1]} {cite(nums)}." for t, nums in picked.items())


def answer_rewrite(task: RewriteTask) -> RewriteDraft:
    """Each unsupported sentence becomes the passage sentence (or table row) that supports its
    point best, verbatim and cited — preferring one that states the sentence's figures; a sentence
    no passage shares a word with is dropped (empty text)."""
    units = build_units([(s.n, s.text) for s in task.sources])
    weights = Weights(u.text for u in units)
    out: list[RewriteItem] = []
    for claim in task.claims:
        best: tuple[bool, float, int] | None = None
        pick = None
        scores = supports(claim.text, [u.text for u in units], weights)
        for k, (unit, scored) in enumerate(zip(units, scores, strict=True)):
            score = scored.score
            covered = support(unit.text, claim.text, weights).score  # the claim's view
            key = (not missing_figures(claim.text, unit.text), score + 0.25 * covered, -k)
            if score > 0 and (best is None or key > best):
                best, pick = key, unit
        if pick is None:
            out.append(RewriteItem(id=claim.id, text="", sources=()))
        else:
            out.append(RewriteItem(id=claim.id, text=pick.text, sources=(pick.source,)))
    return RewriteDraft(claims=tuple(out))


class ExtractiveLLM:
    """A deterministic, model-free ``LLMProvider``."""

    def __init__(self, name: str = "extractive", model: str = "extractive-v1") -> None:
        self.name = name
        self.model = model

    def count_tokens(self, text: str) -> int:
        return math.ceil(len(text) / 4)

    def answer(self, request: LLMRequest) -> BaseModel:
        """The typed answer to ``request.task`` (what ``complete`` serializes)."""
        task = request.task
        if isinstance(task, QueriesTask):
            return answer_queries(task)
        if isinstance(task, FindingsTask):
            return answer_findings(task)
        if isinstance(task, PlanTask):
            return answer_plan(task)
        if isinstance(task, EvaluateTask):
            return answer_evaluate(task)
        if isinstance(task, IntentTask):
            return IntentDraft(intent="research")  # no model: the gate's rules already decided
        if isinstance(task, RewriteTask):
            return answer_rewrite(task)
        return answer_write(task)

    async def complete(self, request: LLMRequest) -> LLMReply:
        text = self.answer(request).model_dump_json()
        prompt = (
            "".join(m.content for m in request.messages)
            if request.messages
            else request.task.model_dump_json()
        )
        return LLMReply(
            text=text,
            provider=self.name,
            model=self.model,
            input_tokens=self.count_tokens(prompt),
            output_tokens=self.count_tokens(text),
            estimated_tokens=True,
        )


__all__ = ["NO_ANSWER", "NO_PASSAGE", "ExtractiveLLM", "usable_summary"]
