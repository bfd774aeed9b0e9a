"""The Answer section composed from self-describing table rows, in the shape the question asks.

One figure: the row that names the question's metric, from the filing of the asked quarter (its
source's title, else its dates), the cell of the asked date or else the row's current period
with the row's other cells as context: ``<entity>: <label> (<unit>), <header>: <value> [n].``
A trend: a Markdown table period -> value from the same line item of every cited filing, in
time order, one cited cell per period. A comparison: one line per entity (deep mode: one per
sub-question, which names its entity; quick mode: by the sources' titles) and metric. Nothing
else is written: every composed line holds only the question's entity and a row's label, unit,
headers and cells, so the citation verifier finds each of its figures in the cited row. An
explanation composes the figure of a line item it names (``text.line_items``), else nothing, and
the writer quotes its best sentences.
Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from deepresearch.domains.filings.definitions import defined_as
from deepresearch.domains.filings.rows import (
    Row,
    figure_line,
    filing_of,
    rows_of,
    subject,
    unit_kind,
)
from deepresearch.domains.filings.tables import (
    breakdown_table,
    names_a_table,
    parts_table,
    rate_table,
    whole_table,
)
from deepresearch.domains.filings.trends import trend_table
from deepresearch.text.line_items import (
    STRUCTURE,
    LabelIndex,
    core_terms,
    is_flow,
    label_core,
)
from deepresearch.text.names import common_words, spelt_as, stranger_titles
from deepresearch.text.question import (
    SHARE_WORDS,
    Question,
    analyze,
    metric_words_of,
)
from deepresearch.text.rates import asks_rate, states_rate
from deepresearch.text.tables import format_row
from deepresearch.text.terms import terms

MAX_METRIC_LINES = 4  # figure lines for the metrics one question names


def _one_metric(q: Question, metric: str) -> Question:
    return replace(q, metrics=(metric,), metric_words=metric_words_of((metric,)))


def _spelt(q: Question, titles: Mapping[int, str]) -> Question:
    """The question with the names typed in lower case as the sources' titles write them: the
    Answer's lines lead with "Apple:", not "apple:"."""
    return replace(q, entities=tuple(spelt_as(e, titles.values()) for e in q.entities))


def _owned(
    rows: Sequence[Row], entities: Sequence[str], titles: Mapping[int, str], alone: bool = False
) -> list[tuple[str, list[Row]]]:
    """Rows by the entity their source's title names ("Initech Q3 2023 results"); empty unless
    two entities or more own rows (a row does not say whose it is; its source's title may), or,
    ``alone``, one owns them all (of "Intel and AMD", the filings read are all Intel's)."""
    out: list[tuple[str, list[Row]]] = []
    for e in entities:
        name = re.compile(rf"\b{re.escape(e)}\b", re.IGNORECASE)
        own = [r for r in rows if any(name.search(titles.get(n, "")) for n in r.sources)]
        if own:
            out.append((e, own))
    alone = alone and len(entities) >= 2 and len(out) == 1 and len(out[0][1]) == len(rows)
    return out if len(out) >= 2 or alone else []


def comparison_lines(
    rows: Sequence[Row],
    q: Question,
    headings: Sequence[str],
    titles: Mapping[int, str] | None = None,
) -> tuple[str, list[Row]] | None:
    """One figure line per sub-question (each names its entity), else per entity (by its
    sources' titles) x metric, else per metric."""
    lines: list[str] = []
    used: list[Row] = []
    groups = sorted({r.group for r in rows})
    if len(groups) >= 2 and len(headings) >= 2:
        for g in groups:
            sub = _spelt(analyze(headings[g]), titles or {}) if g < len(headings) else q
            sub = sub if sub.metric_words else q
            lead = f"{sub.entities[0]}: " if sub.entities else ""  # the entity its heading names
            found = figure_line([r for r in rows if r.group == g], sub, lead, titles)
            if found:
                lines.append(found[0])
                used.append(found[1])
    else:
        owned = _owned(rows, q.entities, titles or {}, alone=True)
        for entity, own in owned or [("", list(rows))]:
            lead = f"{entity}: " if entity else subject(q) if len(q.entities) == 1 else ""
            for sub in _parts_asked(q, [e for e, _ in owned]):
                found = figure_line(own, sub, lead, titles)
                if found and found[0] not in lines:
                    lines.append(found[0])
                    used.append(found[1])
    return ("\n\n".join(lines), used) if lines else None


def _parts_asked(q: Question, owners: Sequence[str]) -> list[Question]:
    """One question per metric, and per part of the subject the question sets side by side
    when no source's title is by them ("Amazon's AWS and North America segments": each
    segment's row, where the best-named row was North America's alone)."""
    metrics = [_one_metric(q, m) for m in q.metrics] or [q]
    parts = [e for e in q.entities[1:] if e not in owners]
    if len(parts) < 2:
        return metrics
    return [replace(m, entities=(q.entities[0], part)) for part in parts for m in metrics]


def metric_lines(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None = None
) -> tuple[str, list[Row]] | None:
    """A figure line for each metric the question names ("changes in debt and interest
    expenses": the debt's row and the interest expense's), not one row for all of them; each
    row once, a total with its parts (``parts_table``). None unless two metrics or more find a
    row."""
    lines: list[str] = []
    used: list[Row] = []
    named: list[Row] = []  # the rows the metrics name: one may be a part shown already
    for metric in q.metrics[:MAX_METRIC_LINES]:
        found = figure_line(rows, _one_metric(q, metric), subject(q), titles)
        if found and found[1] not in named:
            named.append(found[1])
        if found and found[1] not in used:
            lines.append(found[0])
            used.append(found[1])
            parts = parts_table(found[1], rows, q) if unit_kind(found[1].row) != "percent" else None
            if parts is not None:  # a total with the rows it adds up, as for one figure
                lines.append(parts[0])
                used += parts[1]
    return ("\n\n".join(lines), used) if len(named) >= 2 else None


def share_lines(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None = None
) -> tuple[str, list[Row]] | None:
    """A share ("what percentage of total revenue did Services contribute"): the part's figure
    line, then the whole's from the same filing, so a reader judges "Services 21,213" against
    "Total net sales 81,797". The part is named by the question's other metrics and names."""
    titles = titles or {}
    named = [m for m in q.metrics if m != q.share_of and m not in SHARE_WORDS]
    named += q.entities[1:]
    part = figure_line(rows, _one_metric(q, " ".join(named)), subject(q), titles)
    if part is None:
        return None
    filing = filing_of(part[1], titles)
    same = [r for r in rows if r.row.label != part[1].row.label and filing & filing_of(r, titles)]
    total = figure_line(same, _one_metric(q, q.share_of), subject(q), titles)
    if total is None:
        return None
    return f"{part[0]}\n\n{total[0]}", [part[1], total[1]]


def trends_per_part(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None = None
) -> tuple[str, list[Row]] | None:
    """A comparison over time ("how has revenue from Windows or Surface varied quarter to
    quarter"): a trend table for each entity (by its sources' titles), else for each thing the
    question names of its subject ("Windows", "Surface"), else for each metric."""
    owned = _owned(rows, q.entities, titles or {})
    parts: list[tuple[Sequence[Row], Question]] = (
        [(own, replace(q, entities=(entity,))) for entity, own in owned]
        or [  # each part alone: not the other parts the question names (``asked_terms``)
            (rows, replace(_one_metric(q, part), entities=q.entities[:1]))
            for part in (*q.entities[1:], *q.metrics)
        ]
    )
    tables: list[str] = []
    used: list[Row] = []
    for own, part in parts:
        found = trend_table(own, part, titles)
        if found and not any(r in used for r in found[1]):
            tables.append(found[0])
            used += found[1]
    return ("\n\n".join(tables), used) if tables else None


def about_the_subject(rows: Sequence[Row], q: Question, texts: Sequence[str]) -> list[Row]:
    """The rows whose table is not about someone the question does not name: a filing restates
    an investee's results ("summarized financial information of Rivian": "Revenues 661"), which
    are no figure of the filer's."""
    strangers = stranger_titles(
        ((r.row.title, r.row.label) for r in rows), common_words(texts, q.text)
    )
    return [r for r in rows if r.row.title not in strangers]


def named_rows(question: str, rows: Sequence[Row]) -> list[Row]:
    """The rows whose label ``question`` names (``text.line_items``): "how did inventory levels
    reflect on ..." asks for reasons, and for the inventories figure they are about."""
    index = LabelIndex.build([format_row(r.row) for r in rows])
    return [rows[i] for i in index.passage_scores(question)]


def _figure_lines(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None, every: Sequence[Row] = ()
) -> tuple[str, list[Row]] | None:
    """The figure line; when its figure is a percent the question did not ask for ("gross
    margin": NVIDIA's summary states 74.0 %, its statement 13,400), the amount's line too; when
    it asked for the rate, the rate with the amounts of ``every`` row it is the ratio of; when
    it is a total, the rows of ``every`` that add up to it, beneath it (``parts_table``)."""
    found = figure_line(rows, q, subject(q), titles)
    if found is None:
        return None
    if unit_kind(found[1].row) == "percent" and asks_rate(q):
        return rate_table(found[1], every, q) or (found[0], [found[1]])
    if unit_kind(found[1].row) != "percent":
        parts = parts_table(found[1], every, q)
        if parts is None:
            return found[0], [found[1]]
        return f"{found[0]}\n\n{parts[0]}", [found[1], *parts[1]]
    amounts = [r for r in rows if unit_kind(r.row) != "percent"]
    other = figure_line(amounts, q, subject(q), titles)
    if other is None:
        return found[0], [found[1]]
    return f"{found[0]}\n\n{other[0]}", [found[1], other[1]]


# what a spending metric is called whatever is spent on: a definition names what is spent on
_SPENDING = frozenset(terms("expenditure expenditures expense expenses cost costs spending total"))


def _defined(q: Question, rows: Sequence[Row], texts: Sequence[str]) -> Question:
    """``q`` asking for the row the filing defines as its first metric when no row is named
    for it (``definitions``): "R&D expenditure" is the row whose costs "include payroll
    and related expenses for employees involved in the research and development", not "Total
    operating expenses", which shares only a word for spending."""
    if not q.metrics:
        return q
    wanted = set(terms(q.metrics[0])) - _SPENDING
    label = defined_as(wanted, {label_core(r.row.label) for r in rows}, texts)
    return _one_metric(q, label) if label else q


def _joined(q: Question, rows: Sequence[Row]) -> Question:
    """``q`` asking for one line item when its two metrics are one row's name ("cash and
    investments": Intel's "Total cash and investments"), not for each apart."""
    if len(q.metrics) != 2:
        return q
    joined = " and ".join(q.metrics)
    want = set(terms(joined)) - STRUCTURE
    named = any(core_terms(r.row.label) == want for r in rows)
    return _one_metric(q, joined) if named else q


def compose(
    question: str,
    findings: Sequence[tuple[str, tuple[int, ...], int]],
    headings: Sequence[str] = (),
    titles: Mapping[int, str] | None = None,
) -> tuple[str, tuple[int, ...]] | None:
    """The composed answer text and the source numbers it cites; None when no row fits.
    ``titles`` are the sources' titles by number (a filing's title names its quarter)."""
    titles = titles or {}
    q = _spelt(analyze(question), titles)
    rows = about_the_subject(rows_of(findings), q, [text for text, _, _ in findings])
    if q.shape == "explanation":  # the figure of the line item it explains, then the reasons
        # of what the later names say it is ("Intelligent Cloud revenue": that segment's row)
        explained = " ".join([*q.entities[1:], q.metrics[0]]) if q.metrics else question
        rows = named_rows(explained, rows)
    if q.level:  # "inventory levels": the balance sheet's row, not the cash flows' change
        rows = [r for r in rows if not is_flow(r.row)] or rows
    every = rows  # a rate's table holds the amounts it is the ratio of
    if asks_rate(q):  # "effective tax rate": not "Income before income taxes"
        rows = [r for r in rows if states_rate(r.row, q)]
    if not rows:
        return None
    q = _defined(_joined(q, rows), rows, [text for text, _, _ in findings])
    table = q.breakdown or (q.shape not in ("trend", "comparison") and names_a_table(rows, q))
    result = breakdown_table(rows, q) if table else None
    if result is None and q.shape == "trend":
        result = trend_table(rows, q, titles)
    elif result is None and q.shape == "comparison":
        over_time = trends_per_part(rows, q, titles) if q.over_time else None
        result = (
            over_time or whole_table(rows, q, titles) or comparison_lines(rows, q, headings, titles)
        )
    if result is None and q.share_of:
        result = share_lines(rows, q, titles)
    if result is None and len(q.metrics) >= 2:
        result = metric_lines(rows, q, titles)
    if result is None:
        result = _figure_lines(rows, q, titles, every)
    if result is None:
        return None
    text, used = result
    return text, tuple(dict.fromkeys(n for r in used for n in r.sources))


__all__ = [
    "Row",
    "comparison_lines",
    "compose",
    "figure_line",
    "named_rows",
    "rate_table",
    "share_lines",
    "trend_table",
]
