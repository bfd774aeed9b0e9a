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

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from deepresearch.policies.filing_periods import quarter_readings
from deepresearch.text.line_items import (
    MIN_TABLE_ROWS,
    STRUCTURE,
    LabelIndex,
    label_core,
    named_table,
    table_fit,
)
from deepresearch.text.question import SYNONYMS, Question, analyze, metric_terms, periods_of
from deepresearch.text.tables import TableRow, format_row, parse_row
from deepresearch.text.terms import terms

_QUARTER_HEADER = re.compile(r"\bthree months\b|\bquarter\b|\b13 weeks\b", re.IGNORECASE)
_LONG_HEADER = re.compile(r"\b(?:six|nine|twelve) months\b|\byear\b", re.IGNORECASE)
_BLANK = {"", "—", "–", "-", "(column)"}
MAX_TREND_ROWS = 12
MAX_CELLS = 4  # cells of one figure line: the asked one and its row's context


@dataclass(frozen=True)
class Row:
    """A parsed row with the finding's source numbers and its place among the findings."""

    row: TableRow
    sources: tuple[int, ...]
    order: int
    group: int = 0  # the section (sub-question) the finding came from


def rows_of(findings: Sequence[tuple[str, tuple[int, ...], int]]) -> list[Row]:
    """The findings ``(text, source numbers, section)`` that are self-describing table rows."""
    out: list[Row] = []
    for k, (text, sources, group) in enumerate(findings):
        row = parse_row(text)
        if row is not None and sources and any(v not in _BLANK for _, v in row.cells):
            out.append(Row(row, sources, k, group))
    return out


def match(row: TableRow, wanted: set[str]) -> float:
    """How well a row names the wanted metric: label terms count double, extra label words cost;
    0 unless the label's core (``label_core``) names it: "Cash flows from operating activities -
    Net income" is no operating cash flow."""
    label = set(terms(row.label))
    title = set(terms(row.title))
    if not wanted or not (set(terms(label_core(row.label))) & wanted):
        return 0.0
    extra = label - wanted - STRUCTURE  # "Total inventories" names inventories
    return 2.0 * len(label & wanted) + 0.5 * len((title - label) & wanted) - 0.5 * len(extra)


def _date_key(header: str) -> tuple[int, int, int] | None:
    dates = [p.date for p in periods_of(header) if p.date]
    return dates[-1] if dates else None


def _latest(row: TableRow) -> tuple[int, int, int] | None:
    """The row's current period: the latest date among its column headers."""
    keys = [k for h, v in row.cells if v not in _BLANK and (k := _date_key(h))]
    return max(keys) if keys else None


def pick_cell(row: TableRow, q: Question) -> tuple[str, str] | None:
    """The cell of the asked date; without one, the row's current period (its latest date),
    quarter-long column first; without dates, the first quarter-long column."""
    cells = [(h, v) for h, v in row.cells if v not in _BLANK]
    if not cells:
        return None
    asked = {p.date for p in q.periods if p.date}
    if asked:
        dated = [(h, v) for h, v in cells if _date_key(h) in asked]
        quarter = [c for c in dated if not _LONG_HEADER.search(c[0])]
        if quarter or dated:
            return (quarter or dated)[0]
        return None
    latest = _latest(row)
    if latest is not None:
        now = [(h, v) for h, v in cells if _date_key(h) == latest]
        quarter = [c for c in now if not _LONG_HEADER.search(c[0])]
        return (quarter or now)[0]  # a date's first column is its quarter
    quarter = [c for c in cells if _QUARTER_HEADER.search(c[0])]
    return (quarter or cells)[0]


def period_fit(r: Row, q: Question, titles: Mapping[int, str]) -> float:
    """How well a row's filing fits the asked quarter: a source titled with the asked quarter
    and year ("2022 Q3 ...", "Q3 2022 results") wins, one titled with another quarter loses
    (fiscal quarters end in other calendar months, so the title says more than the dates);
    untitled, a row whose current period falls in the asked year is preferred."""
    asked = {(p.year, p.quarter) for p in q.periods if p.year and p.quarter}
    named = {
        (p.year, p.quarter)
        for n in r.sources
        for p in periods_of(titles.get(n, ""))
        if p.year and p.quarter
    }
    if asked and named:
        return 1.0 if asked & named else -1.0
    years = {p.year for p in q.periods if p.year and not p.date}
    latest = _latest(r.row)
    return 0.5 if years and latest is not None and latest[0] in years else 0.0


def cell_fit(header: str, q: Question) -> float:
    """0.5 when a column's date falls in a quarter the question asks for (by any of the ways a
    quarter is named: ``filing_periods.quarter_readings``): of two rows naming the item, the
    one stating the asked quarter's balance, not a figure from a year before."""
    asked = {(p.year, p.quarter) for p in q.periods if p.year and p.quarter}
    date = _date_key(header)
    if not asked or date is None:
        return 0.0
    return 0.5 if asked & quarter_readings(datetime.date(*date).toordinal()) else 0.0


def _unit(row: TableRow) -> str:
    return f" ({row.unit})" if row.unit else ""


def _cite(sources: tuple[int, ...]) -> str:
    return "".join(f"[{n}]" for n in sources)


def _best(rows: Sequence[Row], wanted: set[str]) -> list[tuple[float, Row]]:
    scored = [(match(r.row, wanted), r) for r in rows]
    return sorted(((s, r) for s, r in scored if s > 0), key=lambda pair: (-pair[0], pair[1].order))


def figure_line(
    rows: Sequence[Row], q: Question, lead: str = "", titles: Mapping[int, str] | None = None
) -> tuple[str, Row] | None:
    """``<label> (<unit>), <header>: <value> [n].`` for the best row that has the asked cell,
    of the asked quarter's filing (the latest filing for "latest" and undated questions)."""
    titles = titles or {}
    found: list[tuple[float, int, str, Row]] = []
    scored = _best(rows, metric_terms(q))
    newest = max((d for _, r in scored if (d := _latest(r.row))), default=None)
    for score, r in scored:
        cell = pick_cell(r.row, q)
        if cell is not None:
            header = cell[0]
            # among equally named rows, the one that says its unit and its column's length
            score += 0.2 * bool(r.row.unit) + 0.2 * bool(_QUARTER_HEADER.search(header))
            score += period_fit(r, q, titles) + cell_fit(header, q)
            if not any(p.year for p in q.periods) and newest and _latest(r.row) == newest:
                score += 0.3  # "latest quarter", or no period: the newest filing's figure
            cells = "; ".join(f"{h}: {v}" for h, v in _with_context(r.row, cell, q))
            text = f"{lead}{r.row.label}{_unit(r.row)}, {cells} {_cite(r.sources)}."
            found.append((score, r.order, text, r))
    if not found:
        return None
    _, _, text, r = max(found, key=lambda item: (item[0], -item[1]))
    return text, r


def _with_context(row: TableRow, cell: tuple[str, str], q: Question) -> list[tuple[str, str]]:
    """The picked cell first; unless the question names an exact date, then the row's other
    cells (prior year, year to date), which a reader needs to judge the figure."""
    if any(p.date for p in q.periods):
        return [cell]
    rest = [(h, v) for h, v in row.cells if (h, v) != cell and v not in _BLANK]
    return [cell, *rest][:MAX_CELLS]


def _subject(q: Question) -> str:
    """``"<entity>: "`` for the question's first name (the company a filing calls "the Company")."""
    return f"{q.entities[0]}: " if q.entities else ""


def trend_table(rows: Sequence[Row], q: Question) -> tuple[str, list[Row]] | None:
    """``| <headers' common start> | <entity>: <label> (<unit>) |`` with one line per quarter,
    oldest first. Without a common start the first header cell stays empty: a word of ours
    ("Period") is not in the cited rows, and the verifier would take the line as unsupported."""
    best = _best(rows, metric_terms(q))
    if not best:
        return None
    top = best[0][1]
    top_score = best[0][0]
    item = set(terms(top.row.label))  # the same line item in every filing, no near namesake
    same = [r for s, r in best if s >= top_score - 0.5 and set(terms(r.row.label)) == item]
    points: dict[tuple[int, int, int], tuple[str, str, Row]] = {}
    for r in same:
        seen: set[tuple[int, int, int]] = set()
        for header, value in r.row.cells:
            key = _date_key(header)
            if key is None or key in seen or _LONG_HEADER.search(header):
                continue
            seen.add(key)  # a date's first column is its quarter; a repeat is year-to-date
            if value not in _BLANK and key not in points:
                points[key] = (header, value, r)
    if len(points) < 2:
        return None
    ordered = [points[k] for k in sorted(points)][-MAX_TREND_ROWS:]
    first = _common_prefix([h for h, _, _ in ordered])
    lines = [f"| {first} | {_subject(q)}{top.row.label}{_unit(top.row)} |", "| --- | --- |"]
    lines += [f"| {h} | {v} {_cite(r.sources)}" for h, v, r in ordered]
    used = list({id(r): r for _, _, r in ordered}.values())
    # one paragraph per table line: the verifier checks each line against its own cited row,
    # and joins consecutive table lines back into one table
    return "\n\n".join(lines), used


def _tables(rows: Sequence[Row]) -> dict[tuple[tuple[int, ...], str], list[Row]]:
    """The rows by table (their sources and title), in findings order."""
    out: dict[tuple[tuple[int, ...], str], list[Row]] = {}
    for r in rows:
        out.setdefault((r.sources, r.row.title), []).append(r)
    return out


def names_a_table(rows: Sequence[Row], q: Question) -> bool:
    """Whether the question names a table rather than a row of it: a title of three or more
    rows shares as many of its metric words as the best row label ("inventory levels": the
    "Inventories" table, of which "Total inventories" is one line)."""
    wanted = metric_terms(q)
    best = max((len(set(terms(r.row.label)) & wanted) for r in rows), default=0)
    titles = [k[1] for k, v in _tables(rows).items() if len(v) >= MIN_TABLE_ROWS]
    return best > 0 and any(table_fit(t, wanted) >= best for t in titles)


def breakdown_table(rows: Sequence[Row], q: Question) -> tuple[str, list[Row]] | None:
    """``| <entity>: <title> (<unit>) | <column> | <column> |`` with one line per row of the
    table asked for (three or more rows of one source and title; the title sharing most of the
    question's metric words, then the most rows): each row's cell of the asked or current period
    and the one beside it (the prior period a reader compares with)."""
    tables = _tables(rows)
    named = named_table(tables, metric_terms(q), lambda k: len(tables[k]))
    if named is None:
        return None
    parts = tables[named]
    first = pick_cell(parts[0].row, q)
    if first is None:
        return None
    others = [h for h, v in parts[0].row.cells if h != first[0] and v not in _BLANK]
    headers = [first[0], *others[:1]]
    title = f"{_subject(q)}{parts[0].row.title}{_unit(parts[0].row)}"
    lines = [f"| {title} | {' | '.join(headers)} |", "| --- |" + " --- |" * len(headers)]
    used: list[Row] = []
    for r in parts[:MAX_TREND_ROWS]:
        cells = dict(r.row.cells)
        if cells.get(first[0], "") in _BLANK:
            continue
        values = " | ".join(cells.get(h, "—") for h in headers)
        lines.append(f"| {r.row.label} | {values} {_cite(r.sources)}")
        used.append(r)
    return ("\n\n".join(lines), used) if len(used) >= MIN_TABLE_ROWS else None


def _common_prefix(headers: Sequence[str]) -> str:
    """The words every header starts with ("Three Months Ended"), without dates or figures."""
    split = [h.split() for h in headers]
    out: list[str] = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1 or any(c.isdigit() for c in words[0]):
            break
        out.append(words[0])
    return " ".join(out).rstrip(",")


def _one_metric(q: Question, metric: str) -> Question:
    words = tuple(metric.split())
    words += tuple(x for w in words for x in SYNONYMS.get(w, ()) if x not in words)
    return replace(q, metrics=(metric,), metric_words=words)


def _owned(
    rows: Sequence[Row], entities: Sequence[str], titles: Mapping[int, str]
) -> list[tuple[str, list[Row]]]:
    """Rows by the entity their source's title names ("Initech Q3 2023 results"); empty unless
    two entities or more own rows (a row does not say whose it is; its source's title may)."""
    out: list[tuple[str, list[Row]]] = []
    for e in entities:
        name = re.compile(rf"\b{re.escape(e)}\b", re.IGNORECASE)
        own = [r for r in rows if any(name.search(titles.get(n, "")) for n in r.sources)]
        if own:
            out.append((e, own))
    return out if len(out) >= 2 else []


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
            sub = analyze(headings[g]) if g < len(headings) else q
            sub = sub if sub.metric_words else q
            lead = f"{sub.entities[0]}: " if sub.entities else ""  # the entity its heading names
            found = figure_line([r for r in rows if r.group == g], sub, lead, titles)
            if found:
                lines.append(found[0])
                used.append(found[1])
    else:
        owned = _owned(rows, q.entities, titles or {})
        for entity, own in owned or [("", list(rows))]:
            lead = f"{entity}: " if entity else _subject(q) if len(q.entities) == 1 else ""
            for metric in q.metrics or ("",):
                found = figure_line(own, _one_metric(q, metric) if metric else q, lead, titles)
                if found and found[0] not in lines:
                    lines.append(found[0])
                    used.append(found[1])
    return ("\n\n".join(lines), used) if lines else None


def named_rows(question: str, rows: Sequence[Row]) -> list[Row]:
    """The rows whose label ``question`` names (``text.line_items``): "how did inventory levels
    reflect on ..." asks for reasons, and for the inventories figure they are about."""
    index = LabelIndex.build([format_row(r.row) for r in rows])
    return [rows[i] for i in index.passage_scores(question)]


def compose(
    question: str,
    findings: Sequence[tuple[str, tuple[int, ...], int]],
    headings: Sequence[str] = (),
    titles: Mapping[int, str] | None = None,
) -> tuple[str, tuple[int, ...]] | None:
    """The composed answer text and the source numbers it cites; None when no row fits.
    ``titles`` are the sources' titles by number (a filing's title names its quarter)."""
    q = analyze(question)
    rows = rows_of(findings)
    if q.shape == "explanation":  # the figure of a line item it names, then the reasons
        rows = named_rows(question, rows)
    if not rows:
        return None
    table = q.breakdown or (q.shape not in ("trend", "comparison") and names_a_table(rows, q))
    result = breakdown_table(rows, q) if table else None
    if result is None and q.shape == "trend":
        result = trend_table(rows, q)
    elif result is None and q.shape == "comparison":
        result = comparison_lines(rows, q, headings, titles)
    if result is None:
        found = figure_line(rows, q, _subject(q), titles)
        result = (found[0], [found[1]]) if found else None
    if result is None:
        return None
    text, used = result
    return text, tuple(dict.fromkeys(n for r in used for n in r.sources))


__all__ = [
    "Row",
    "comparison_lines",
    "compose",
    "figure_line",
    "match",
    "named_rows",
    "period_fit",
    "pick_cell",
    "trend_table",
]
