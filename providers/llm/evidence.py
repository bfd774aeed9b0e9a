"""Which candidate units may become evidence, and how much evidence a question's shape needs.

Boilerplate never becomes evidence, and neither does a unit that shares nothing with the question
but the entity's name or a period. A trend ("across quarters") or a comparison needs one value per
filing or entity, which relevance ranking alone does not give: the filing whose table row scores
best can fill the list with its own rows. So those shapes reserve each document's best table row.

Separate from ``sentences`` (how units are cut and scored) because it needs the question's
analysis and the documents the units came from (repetition across documents is a template).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from deepresearch.text.boilerplate import boilerplate, document_of, off_topic, shape_of
from deepresearch.text.entries import with_term
from deepresearch.text.figures import has_figure
from deepresearch.text.line_items import LabelIndex, flow_line, named_table
from deepresearch.text.names import common_words, stranger_titles
from deepresearch.text.question import (
    Question,
    analyze,
    asked_terms,
    dimension_terms,
    flow_asked,
    metric_terms,
    periods_of,
)
from deepresearch.text.row_sums import operands_by_table, parts_by_table
from deepresearch.text.sentences import CONTEXT_CHARS, Scorer, Unit, build_units
from deepresearch.text.tables import parse_row
from deepresearch.text.terms import terms

PER_DOCUMENT_SHAPES = frozenset({"trend", "comparison"})
# an explanation or a list is told in many sentences (each suit, charge or reason one), a figure
# in a row or two: these shapes select twice the findings (on the SEC bench, quick, from evidence
# 0.6381 and answers 0.5701: explanations alone 1.5x / 2x gave 0.6381 / 0.6444 and 0.5734 /
# 0.5734; explanations and lists 2x / 3x gave 0.6472 / 0.6472 and 0.5748 / 0.5748)
MANY_FACT_SHAPES = frozenset({"explanation", "list"})
LATEST_BONUS = 1.5  # "latest quarter": a unit stating the newest date among the sources
ROW_SHARE = 0.1  # a document's reserved row scores at least this share of the best row
# a heading the question names counts as much as the sentence under it (0.5 / 1.0 / 2.0 gave
# answers 0.416 / 0.419 / 0.413 on the SEC bench, quick): a filing's sections name their topic
# once, and the sentences under them ("In April 2019, VLSI filed three suits") never do
HEADING_WEIGHT = 1.0
# sentences on neither the question nor the unit that a finding may pass over to reach the
# example its paragraph shows (a command as code): "(Exactly what is remembered ...)" between
# "You can do this by saving your editing session" and "... creates a session file: `:mksession`"
ASIDE = 2


def evidence_units(question: str, sources: list[tuple[int, str, str]]) -> list[Unit]:
    """The units of ``(n, url, text)`` sources that may be evidence for ``question``.

    A unit that shares no metric word with the question (or its synonyms), in itself or in its
    headings, is none: the best-scoring of unrelated sentences (a lawsuit for a gross-margin
    question) is no answer, and "could not research" is the honest report. On the 147 reviewed
    questions the old fallback to all units added no reviewed figure to any Answer."""
    units = [_with_term(u) for u in build_units([(n, text) for n, _, text in sources])]
    docs = {n: document_of(url) for n, url, _ in sources}
    flags = boilerplate([(docs.get(u.source, str(u.source)), u.text) for u in units])
    kept = [u for u, bad in zip(units, flags, strict=True) if not bad]
    q = analyze(question)
    wanted = asked_terms(q)  # what is measured, and of what (later names are topic words)
    # a sentence under a heading the question names is on its topic ("Legal Proceedings":
    # "In April 2019, VLSI filed three suits against us")
    mine = _of_the_subject(kept, question)
    topical = [not off_topic((*u.terms, *terms(u.heading)), wanted) for u in mine]
    # the rows a total the question names is the sum of are on its topic ("Operating expenses":
    # "Research and development", "Restructuring and other charges" name none of its words)
    for i in parts_named(question, mine, row_labels(mine)):
        topical[i] = True
    return [u for u, keep in zip(mine, topical, strict=True) if keep]


def _with_term(unit: Unit) -> Unit:
    """A description whose flags were read as the heading above it, opened by them again
    (``entries.with_term``): "-f, --force ignore nonexistent files", not the description
    without saying of what."""
    text = with_term(unit.text, unit.heading)
    if text == unit.text:
        return unit
    return replace(unit, text=text, terms=(*terms(text[: len(text) - len(unit.text)]), *unit.terms))


def total_parts(units: list[Unit]) -> dict[int, tuple[int, ...]]:
    """Per unit that is a table row adding up the rows directly above it in its table, or a
    rate two rows of its table make (``text.row_sums``), those rows' unit indexes: "Effective
    tax rate" is made of the provision for taxes and the income before taxes."""
    rows = [
        ((u.source, row.title), i, row)
        for i, u in enumerate(units)
        if u.table and (row := parse_row(u.text)) is not None
    ]
    return {**operands_by_table(rows), **parts_by_table(rows)}


def parts_named(
    question: str,
    units: list[Unit],
    labels: LabelIndex,
    sums: dict[int, tuple[int, ...]] | None = None,
) -> dict[int, int]:
    """The parts (``total_parts``) of each total whose label the question names (``labels`` is
    ``row_labels(units)``), best named first: part unit -> its total's unit. A named row that
    is itself a part brings the total it makes up and that total's other parts: "Long-term debt"
    is "Total debt" less its "Current portion", which names neither word; "Services" is read
    beside "Products" and "Total net sales"."""
    named = labels.passage_scores(question)
    sums = total_parts(units) if sums is None else sums
    out: dict[int, int] = {}
    for total in sorted(set(named) & sums.keys(), key=lambda i: (-named[i][0], units[i].order)):
        for i in sums[total]:
            out.setdefault(i, total)
    # a named row that is itself a part: the total it makes up, with its other parts
    for parent, members in sums.items():
        for child in (m for m in members if m in named):
            for i in (parent, *members):
                if i != child:
                    out.setdefault(i, child)
    return out


def parts_rows(
    question: str, units: list[Unit], chosen: list[int], labels: LabelIndex, limit: int
) -> list[int]:
    """``chosen`` plus, up to ``limit`` more, the total each chosen part makes up (a debt
    table's "Net carrying amount" beside the "Unamortized debt discount" that names debt: the
    figure a reader judges the part against), then the parts of each chosen total the question
    names (``parts_named``): what a total is made of is what moved it."""
    picked = set(chosen)
    extra: list[int] = []
    sums = total_parts(units)
    named = parts_named(question, units, labels, sums)
    for total, members in sums.items():  # a chosen part brings the total it makes up
        if total not in picked and any(m in picked for m in members) and len(extra) < limit:
            picked.add(total)
            extra.append(total)
    while len(extra) < limit:  # a part added may be a total whose parts come next
        more = [i for i, t in named.items() if t in picked and i not in picked][
            : limit - len(extra)
        ]
        if not more:
            break
        picked.update(more)
        extra += more
    return [*chosen, *extra]


def _of_the_subject(units: list[Unit], question: str) -> list[Unit]:
    """Without the table rows whose title names someone the question does not: a filing
    restates an investee's results ("summarized financial information of Rivian": "Revenues
    661"), which are no figure of the filer's and which a writer, model or not, would quote as
    its own (``answer.about_the_subject`` keeps them out of the Answer too)."""
    common = common_words((u.text for u in units), question)
    rows = [parse_row(u.text) if u.table else None for u in units]
    strangers = stranger_titles(((r.title, r.label) for r in rows if r), common)
    return [u for u, r in zip(units, rows, strict=True) if r is None or r.title not in strangers]


def heading_scores(question: str, units: list[Unit], periods: list[str]) -> list[float]:
    """Per unit, how well the headings above its paragraph match ``question``."""
    return section_scores(question, [u.heading for u in units], periods)


def section_scores(question: str, sections: list[str], periods: list[str]) -> list[float]:
    """Per heading text, how well it matches ``question`` (BM25 over the headings given, so a
    heading every page repeats weighs little)."""
    heads = [Unit(h, 0, k, False, tuple(terms(h))) for k, h in enumerate(sections)]
    return Scorer(heads).score(question, periods) if heads else []


def one_period_breakdown(q: Question) -> bool:
    """Whether the question asks for the parts of a figure in one period ("revenue distribution
    across its segments", also compared with their costs): over time, each filing's row of the
    figure is what a trend or comparison reads, not one filing's whole table."""
    return q.breakdown and not (q.shape in PER_DOCUMENT_SHAPES and q.over_time)


def selection_budget(q: Question, max_findings: int) -> int:
    """Findings relevance selects for a question of this shape (``MANY_FACT_SHAPES``)."""
    return 2 * max_findings if q.shape in MANY_FACT_SHAPES else max_findings


def evidence_budget(q: Question, max_findings: int, documents: int) -> int:
    """Findings a question of this shape may hand on: ``selection_budget``, to which a trend or
    a comparison may add one row per document read (one value per filing or entity), at most
    ``max_findings`` more; a breakdown, the rest of its table (doubling it too)."""
    budget = selection_budget(q, max_findings)
    if q.shape in PER_DOCUMENT_SHAPES:
        budget += min(documents, max_findings)
    return max(budget, 2 * max_findings) if one_period_breakdown(q) else budget


def breakdown_rows(
    q: Question, units: list[Unit], scores: list[float], chosen: list[int], budget: int
) -> list[int]:
    """``chosen`` plus every row stating a figure of the table the breakdown asks for, in
    table order, within ``budget``: "revenue by segment" is a whole table whose title names the
    figure ("Net sales by groups of similar products and services") and whose rows name only the
    parts ("Online stores"), so relevance ranking finds one or two of them. The table is the one
    of three or more rows whose title shares most of the question's metric words (then the best
    row score); without such a title, the best chosen row's table."""
    tables: dict[tuple[int, str], list[int]] = {}
    for i, u in enumerate(units):
        row = parse_row(u.text) if u.table and has_figure(u.text) else None
        if row is not None:
            tables.setdefault((u.source, row.title), []).append(i)
    named = named_table(
        tables, metric_terms(q), lambda k: max(scores[i] for i in tables[k]), dimension_terms(q)
    )
    if named is not None:
        rows = tables[named]
    else:
        picked = [i for i in chosen if any(i in v for v in tables.values())]
        if not picked:
            return chosen
        best = max(picked, key=lambda i: (scores[i], -units[i].order))
        rows = next(v for v in tables.values() if best in v)
    extra = [i for i in rows if i not in chosen]
    return [*chosen, *extra][: max(budget, len(chosen))]


def per_metric_rows(
    q: Question,
    units: list[Unit],
    scores: list[float],
    chosen: list[int],
    budget: int,
    labels: LabelIndex,
) -> list[int]:
    """``chosen`` plus, for each metric of a question naming two or more ("operating expenses
    compared to revenue"), the table row that names it best (``text.line_items``) when no
    chosen row does, within ``budget`` plus one per metric: the row one metric asks for can
    lose every place to rows naming both ("Total cost of sales" for expenses and revenue).
    ``labels`` is ``row_labels(units)``."""
    if len(q.metrics) < 2:
        return chosen
    out = list(chosen)
    # of equally named rows, the one from the source most chosen: the filing the others are from
    share = Counter(units[i].source for i in chosen)
    for metric in q.metrics:
        # its structure words qualify a line item ("Total net sales" is the revenue line)
        matched = labels.passage_scores(f"{metric} total net")
        if not matched:
            continue
        top = max(m for m, _ in matched.values())
        if not any(matched.get(i, (0.0, 0))[0] >= top for i in out):
            out.append(
                max(matched, key=lambda i: (matched[i][0], share[units[i].source], scores[i]))
            )
    return out[: max(budget, len(chosen)) + len(q.metrics)]


def in_context(question: str, units: list[Unit], chosen: list[int]) -> list[tuple[int, str]]:
    """Each chosen unit's finding text: a sentence with the rest of its paragraph
    (``Unit.follow``) while each next sentence states a figure or shares a word with the
    question or the sentence, so "X filed a complaint" comes with what the complaint alleges
    and not with the paragraph's next topic, passing over up to ``ASIDE`` sentences to an
    example on topic (a command shown as code); a sentence that refers back to the figures of the
    one before it (``_refers_back``) comes after it. A chosen sentence that an earlier one's finding
    holds is part of that finding, which takes the better rank of the two: nothing is said
    twice."""
    asked = set(terms(question))
    rank = {i: r for r, i in enumerate(chosen)}
    groups: list[tuple[int, int, str]] = []  # (best rank, lead unit, text)
    for i in sorted(chosen, key=lambda i: units[i].order):
        u = units[i]
        holder = next(
            (
                g
                for g, (_, j, text) in enumerate(groups)
                if units[j].source == u.source and u.text in text
            ),
            None,
        )
        if holder is not None:
            best, j, text = groups[holder]
            groups[holder] = (min(best, rank[i]), j, text)
            continue
        topic = asked | set(u.terms)
        back = _refers_back(u) and not any(  # unless a finding before holds that sentence
            units[j].source == u.source and u.before in text for _, j, text in groups
        )
        parts = [u.before, u.text] if back else [u.text]
        aside: list[str] = []  # sentences on neither, kept when an example on topic follows
        for sentence in u.follow:
            if shape_of(sentence) is not None:
                continue  # a page's running foot printed inside the paragraph
            if not (has_figure(sentence) or topic & set(terms(sentence))):
                aside.append(sentence)
                if len(aside) > ASIDE:
                    break
                continue
            if aside and "`" not in sentence:
                break  # the paragraph's next topic
            parts += [*aside, sentence]
            aside.clear()
        groups.append((rank[i], i, " ".join(parts)))
    return [(i, text) for _, i, text in sorted(groups)]


def _refers_back(u: Unit) -> bool:
    """Whether a sentence says what the figures of the sentence before it were ("Substantially
    all of our cash flow hedges were foreign currency contracts" after "... cash flow hedges
    ... were $454 million net losses"): it states none, the one before does and shares a word
    with it. Quoted alone, it tells the reader what the figures were about but not them."""
    return (
        bool(u.before)
        and not has_figure(u.text)
        and has_figure(u.before)
        and shape_of(u.before) is None
        and len(u.before) + 1 + len(u.text) <= CONTEXT_CHARS
        and bool(set(u.terms) & set(terms(u.before)))
    )


def latest_weights(
    q: Question, units: list[Unit], documents: dict[int, str] | None = None
) -> list[float]:
    """For a "latest / most recent" question, ``LATEST_BONUS`` for the units of the newest
    document (the one whose units state the newest date found among all units: the latest
    filing's period; its prose states no date but is just as recent), else 1. Without document
    names each source is its own document."""
    if not q.latest:
        return [1.0] * len(units)
    docs = documents or {}
    newest: dict[str, tuple[int, int, int]] = {}
    for u in units:
        doc = docs.get(u.source, str(u.source))
        for p in periods_of(u.text):
            if p.date and (doc not in newest or p.date > newest[doc]):
                newest[doc] = p.date
    top = max(newest.values(), default=None)
    latest = {doc for doc, date in newest.items() if date == top}
    return [LATEST_BONUS if docs.get(u.source, str(u.source)) in latest else 1.0 for u in units]


def row_labels(units: list[Unit]) -> LabelIndex:
    """The labels of the units' table rows, by unit index (prose units hold none)."""
    return LabelIndex.build([u.text if u.table else "" for u in units])


def line_item_boost(
    question: str, units: list[Unit], scores: list[float], labels: LabelIndex | None = None
) -> list[float]:
    """``scores`` with each table row whose label the question names (``text.line_items``)
    raised by up to the best score, in proportion to its label match: the row a question asks
    for ("Inventories") shares few words with it, and prose repeating the question outscores it.
    ``labels`` is ``row_labels(units)`` when the caller has it already."""
    matched = (labels or row_labels(units)).passage_scores(question)
    # "inventory levels": the balance, not the period's change; "capital expenditures": the
    # cash-flow statement's purchases, not the equipment held
    if (flow := flow_asked(question)) is not None:
        matched = {i: m for i, m in matched.items() if flow_line(units[i].text) == flow}
    if not matched:
        return scores
    top = max(scores, default=0.0)
    best = max(s for s, _ in matched.values())
    return [sc + top * matched[i][0] / best if i in matched else sc for i, sc in enumerate(scores)]


def per_document_rows(
    units: list[Unit],
    scores: list[float],
    chosen: list[int],
    documents: dict[int, str],
    budget: int,
) -> list[int]:
    """``chosen`` plus, for each document without a chosen table row stating a figure, its best
    such row (scoring at least ``ROW_SHARE`` of the best row anywhere: prose that echoes the
    question's framing can outscore every row), best documents first, within
    ``budget``: the rows a writer needs to state one value per filing."""

    def row(i: int) -> bool:
        return units[i].table and has_figure(units[i].text)

    top = max((s for i, s in enumerate(scores) if row(i)), default=0.0)
    if top <= 0:
        return chosen

    covered = {documents.get(units[i].source) for i in chosen if row(i)}
    best: dict[str, int] = {}
    for i, unit in enumerate(units):
        doc = documents.get(unit.source)
        if doc is None or doc in covered or not row(i) or scores[i] < ROW_SHARE * top:
            continue
        if doc not in best or scores[i] > scores[best[doc]]:
            best[doc] = i
    extra = sorted(best.values(), key=lambda i: (-scores[i], units[i].order))
    return [*chosen, *extra][: max(budget, len(chosen))]


__all__ = [
    "HEADING_WEIGHT",
    "MANY_FACT_SHAPES",
    "PER_DOCUMENT_SHAPES",
    "breakdown_rows",
    "evidence_budget",
    "evidence_units",
    "heading_scores",
    "in_context",
    "latest_weights",
    "line_item_boost",
    "one_period_breakdown",
    "parts_named",
    "parts_rows",
    "per_document_rows",
    "per_metric_rows",
    "row_labels",
    "section_scores",
    "selection_budget",
    "total_parts",
]
