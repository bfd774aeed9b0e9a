"""One table row as an answer: which row names the question's metric, which of its cells the
question asks for, and the figure line that states it.

A row matches by its label's words (its core, ``text.line_items.label_core``, must name the
metric), is preferred from the filing of the asked quarter (its source's title, else its dates)
and for the cell of the asked date, else the row's current period, with the row's other cells
as context: ``<entity>: <label> (<unit>), <header>: <value> [n].`` ``policies.answer`` builds the
question's shapes (trends, tables, comparisons, shares) from these. Pure, no I/O.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deepresearch.domains.filings.periods import calendar_quarter, quarter_readings
from deepresearch.domains.protocol import cite
from deepresearch.text.line_items import (
    STRUCTURE,
    broken_compounds,
    conjuncts,
    label_core,
    restated_head,
)
from deepresearch.text.names import names_entity
from deepresearch.text.question import Question, asked_terms, periods_of
from deepresearch.text.tables import TableRow, parse_row
from deepresearch.text.terms import terms

QUARTER_HEADER = re.compile(r"\bthree months\b|\bquarter\b|\b13 weeks\b", re.IGNORECASE)
LONG_HEADER = re.compile(r"\b(?:six|nine|twelve) months\b|\byear\b", re.IGNORECASE)
_SPAN_HEADER = re.compile(r"\b(six|nine|twelve) months\b|\b(26|39|52) weeks\b", re.IGNORECASE)
_HEADER_MONTHS = {"six": 6, "nine": 9, "twelve": 12, "26": 6, "39": 9, "52": 12}
BLANK = {"", "—", "–", "-", "(column)"}
# a question asking how much a figure grew: the figure a year before is half the answer
_GROWTH = re.compile(r"\bgr[eo]w(?:n|s|th)?\b|\bchang(?:e|ed)\b|\b(?:in|de)creas(?:e|ed)\b", re.I)
MAX_CELLS = 4  # cells of one figure line: the asked one and its row's context
RESTATED = 1.0  # a figure another table of its filing restates is a line item, not a part


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
        if row is not None and sources and any(v not in BLANK for _, v in row.cells):
            out.append(Row(row, sources, k, group))
    return out


# a word a hyphenated "non-" negates: "Total non-operating income (expense)" is no operating income
_NEGATED = re.compile(r"\bnon-\s?\w+", re.IGNORECASE)
# the company's whole, named in a segment table beside its segments: no extra word of a label
_CONSOLIDATED = frozenset(terms("consolidated"))


def negated(label: str) -> str:
    """``label`` without the words a hyphenated "non-" negates: "Total non-operating income"
    names no operating income."""
    return _NEGATED.sub(" ", label)


def match(row: TableRow, wanted: set[str], metrics: Sequence[str] = ()) -> float:
    """How well a row names the wanted metric: label terms count double, extra label words cost;
    0 unless the label's core (``label_core``) names it: "Cash flows from operating activities -
    Net income" is no operating cash flow, and "Operating lease cost" no operating expenses
    (``broken_compounds`` of the asked ``metrics``)."""
    title = set(terms(row.title))
    label = negated(row.label)
    wanted = wanted - broken_compounds(label_core(label), metrics)
    if not wanted or not (set(terms(label_core(label))) & wanted):
        return 0.0

    def named(label: set[str]) -> float:
        # "Total inventories" names inventories; "Consolidated - Operating income" is the
        # company's, where "AWS - Operating income" is a segment's
        extra = label - wanted - STRUCTURE - _CONSOLIDATED
        return 2.0 * len(label & wanted) + 0.5 * len((title - label) & wanted) - 0.5 * len(extra)

    # or one of the things it joins: "Server products and cloud services" names cloud services;
    # or the word its rest repeats: "Cash and cash equivalents" is what a filing calls its cash
    parts = [p for p in map(set, map(terms, conjuncts(label))) if len(p - STRUCTURE) >= 2]
    parts += [set(terms(head))] if (head := restated_head(label_core(label))) else []
    return max(named(p) for p in [set(terms(label)), *parts])


def date_key(header: str) -> tuple[int, int, int] | None:
    dates = [p.date for p in periods_of(header) if p.date]
    return dates[-1] if dates else None


def latest_date(row: TableRow) -> tuple[int, int, int] | None:
    """The row's current period: the latest date among its column headers."""
    keys = [k for h, v in row.cells if v not in BLANK and (k := date_key(h))]
    return max(keys) if keys else None


def pick_cell(row: TableRow, q: Question) -> tuple[str, str] | None:
    """The cell of the asked date; without one, the row's current period (its latest date),
    quarter-long column first; without dates, the first quarter-long column."""
    cells = [(h, v) for h, v in row.cells if v not in BLANK]
    if not cells:
        return None
    asked = {p.date for p in q.periods if p.date}
    if asked:
        dated = [(h, v) for h, v in cells if date_key(h) in asked]
        chosen = _asked_length(dated, q) or dated
        return chosen[0] if chosen else None
    latest = latest_date(row)
    if latest is not None:
        now = [(h, v) for h, v in cells if date_key(h) == latest]
        return (_asked_length(now, q) or now)[0]  # a date's first column is its quarter
    if span_asked(q):
        return (_asked_length(cells, q) or cells)[0]
    quarter = [c for c in cells if QUARTER_HEADER.search(c[0])]
    return (quarter or cells)[0]


def span_asked(q: Question) -> int:
    """Months of the cumulative period ``q`` asks for ("the first nine months": 9; year to
    date: -1, whatever the filing's span), 0 when it asks for a quarter or names no span."""
    return next((p.span for p in q.periods if p.span), 0)


def header_months(header: str) -> int:
    """Months a column header spans when it is cumulative ("Nine Months Ended ...": 9), else 0."""
    m = _SPAN_HEADER.search(header)
    return _HEADER_MONTHS[(m[1] or m[2]).lower()] if m else 0


def _asked_length(cells: Sequence[tuple[str, str]], q: Question) -> list[tuple[str, str]]:
    """The cells of the length asked: the asked span's ("first nine months", "year to date":
    the longest), else the quarter's (a column that spans no months)."""
    span = span_asked(q)
    if not span:
        return [c for c in cells if not LONG_HEADER.search(c[0])]
    if span > 0:
        return [c for c in cells if header_months(c[0]) == span]
    longest = max((header_months(h) for h, _ in cells), default=0)
    return [c for c in cells if longest and header_months(c[0]) == longest]


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
    latest = latest_date(r.row)
    return 0.5 if years and latest is not None and latest[0] in years else 0.0


def cell_fit(header: str, q: Question) -> float:
    """0.5 when a column spans the months asked ("the first nine months") or its date is in a
    quarter the question asks for (the calendar quarter a 52-week period ends nearest,
    ``periods.calendar_quarter``), 0.4 by another way a quarter is named
    (``periods.quarter_readings``): of two rows naming the item, the one stating the
    asked period's figure, not one from a year before."""
    span = span_asked(q)
    if span and (header_months(header) == span or (span < 0 and header_months(header))):
        return 0.5  # "the first nine months": a row that states them, not only its quarter
    asked = {(p.year, p.quarter) for p in q.periods if p.year and p.quarter}
    date = date_key(header)
    if not asked or date is None:
        return 0.0
    day = datetime.date(*date).toordinal()
    if calendar_quarter(day) in asked:
        return 0.5
    # another reading (a fiscal calendar's, the quarter it was filed in) fits less than the
    # calendar quarter: "Q2 2023" of a calendar-year filer is June, not March filed in May
    return 0.4 if asked & quarter_readings(day) else 0.0


_SHARE_OF = re.compile(r"\bpercent(?:age)?s?\s+of\b", re.IGNORECASE)  # not "except percentages"
_SCALE = re.compile(r"\b(thousands|millions|billions)\b", re.IGNORECASE)


def unit_kind(row: TableRow) -> str:
    """What a row's figures count: "percent" (its first dated cell is a percent, or its table
    is "expressed as a percentage of revenue"), else its unit's scale ("millions"), else ""."""
    # the dated cells say it: a "Percentage Change" column beside amounts is not what they count
    dated = [v for h, v in row.cells if v not in BLANK and date_key(h)]
    first = (dated or [v for _, v in row.cells if v not in BLANK] or [""])[0]
    if first.strip().endswith("%") or _SHARE_OF.search(f"{row.title} {row.unit}"):
        return "percent"
    scale = _SCALE.search(row.unit)
    return scale[1].lower() if scale else ""


# "in millions, except per share amounts": the exception is for other rows of the table
_EXCEPT = re.compile(r",?\s*except\b.*$", re.IGNORECASE)
_EXCEPTED = re.compile(r"\bshares?\b|\bper\b|\bpercent", re.IGNORECASE)


def unit_text(row: TableRow) -> str:
    """`` (<unit>)``, without the exceptions a statement's unit line makes for other rows
    ("Total net sales (in millions)", not "... except number of shares which are reflected in
    thousands and per share amounts"), unless the row is one of them (a share count, a per-share
    amount, a percent), or one of its columns is ("Total Number of Shares Purchased = 102,673" is
    in thousands, whatever the row's label)."""
    unit = row.unit
    percents = [v.strip().endswith("%") for _, v in row.cells if v not in BLANK]
    if percents and all(percents) and _SCALE_ONLY.match(unit):
        return ""  # "Effective tax rate: 696.2 %" is no amount in millions
    named = [row.label, *(header for header, _ in row.cells)]
    if not (any(_EXCEPTED.search(n) for n in named) or any(percents)):
        unit = _EXCEPT.sub("", unit).strip()
    return f" ({unit})" if unit else ""


# a unit line that gives only the amounts' scale: it says nothing of a row of percents
_SCALE_ONLY = re.compile(
    r"^(?:dollars\s+|\$\s*)?in\s+(?:millions|thousands|billions)(?:,\s*except\b.*)?$", re.I
)


def best_rows(
    rows: Sequence[Row], wanted: set[str], metrics: Sequence[str] = ()
) -> list[tuple[float, Row]]:
    scored = [(match(r.row, wanted, metrics), r) for r in rows]
    return sorted(((s, r) for s, r in scored if s > 0), key=lambda pair: (-pair[0], pair[1].order))


def figure_line(
    rows: Sequence[Row], q: Question, lead: str = "", titles: Mapping[int, str] | None = None
) -> tuple[str, Row] | None:
    """``<label> (<unit>), <header>: <value> [n].`` for the best row that has the asked cell,
    of the asked quarter's filing (the latest filing for "latest" and undated questions)."""
    titles = titles or {}
    found: list[tuple[float, int, str, Row]] = []
    scored = best_rows(rows, asked_terms(q), q.metrics)
    newest = max((d for _, r in scored if (d := latest_date(r.row))), default=None)
    for score, r in scored:
        cell = pick_cell(r.row, q)
        if cell is not None:
            header = cell[0]
            # among equally named rows, the one that says its unit and its column's length
            score += 0.2 * bool(r.row.unit) + 0.2 * bool(QUARTER_HEADER.search(header))
            score += period_fit(r, q, titles) + cell_fit(header, q)
            score += RESTATED * (
                restated(r, cell, rows, titles) or broken_down_elsewhere(r, cell, rows, titles)
            )
            if not any(p.year for p in q.periods) and newest and latest_date(r.row) == newest:
                score += 0.3  # "latest quarter", or no period: the newest filing's figure
            cells = "; ".join(f"{h}: {v}" for h, v in _with_context(r.row, cell, q))
            text = f"{lead_for_row(lead, r, q, titles)}{r.row.label}{unit_text(r.row)}, {cells} "
            text += f"{cite(r.sources)}."
            found.append((score, r.order, text, r))
    if not found:
        return None
    _, _, text, r = max(found, key=lambda item: (item[0], -item[1]))
    return text, r


def _said_elsewhere(
    r: Row, cell: tuple[str, str], rows: Sequence[Row], titles: Mapping[int, str]
) -> list[tuple[Row, str]]:
    """The values other tables of the row's filing state for the cell's date, with their rows."""
    date = date_key(cell[0])
    if date is None:
        return []
    filing = filing_of(r, titles)
    return [
        (o, v)
        for o in rows
        if o.row.title != r.row.title and filing & filing_of(o, titles)
        for h, v in o.row.cells
        if date_key(h) == date
    ]


def restated(r: Row, cell: tuple[str, str], rows: Sequence[Row], titles: Mapping[int, str]) -> bool:
    """Whether another table of the same filing states the cell's value for its date: a line
    item of the statements is restated where they are discussed ("Research and development
    1,875" in the income statement and in the operating-expenses table), the same label in a
    note's breakdown of something else (its stock-based compensation part, 524) is said once."""
    return any(v == cell[1] for _, v in _said_elsewhere(r, cell, rows, titles))


def magnitude(value: str) -> float:
    """A cell's absolute amount ("(1,206)" -> 1206.0); 0 when it states none."""
    digits = re.sub(r"[^\d.]", "", value)
    try:
        return float(digits) if digits else 0.0
    except ValueError:
        return 0.0


def broken_down_elsewhere(
    r: Row, cell: tuple[str, str], rows: Sequence[Row], titles: Mapping[int, str]
) -> bool:
    """Whether another table of the same filing gives the same label a smaller amount for the
    cell's date: that table breaks something else down ("stock-based compensation: Cost of
    revenue 38"), and a part is never more than the line item it is part of (4,720)."""
    amount = magnitude(cell[1])
    return any(
        o.row.label == r.row.label
        and unit_kind(o.row) == unit_kind(r.row)  # 26.0 (% of revenue) is no part of 4,720
        and 0 < magnitude(v) < amount
        for o, v in _said_elsewhere(r, cell, rows, titles)
    )


def filing_of(r: Row, titles: Mapping[int, str]) -> set[str]:
    """The filings a row was cited from: its sources' titles (a page's title is its filing's)."""
    return {titles.get(n, str(n)) for n in r.sources}


def _with_context(row: TableRow, cell: tuple[str, str], q: Question) -> list[tuple[str, str]]:
    """The picked cell first; then the row's other cells (prior year, year to date), which a
    reader needs to judge the figure; for a question naming an exact date only the cell, or
    with the year before's of the same length when it asks for growth ("year over year")."""
    rest = [(h, v) for h, v in row.cells if (h, v) != cell and v not in BLANK]
    if not any(p.date for p in q.periods):
        return [cell, *rest][:MAX_CELLS]
    if not (q.yoy or _GROWTH.search(q.text)):
        return [cell]
    long = bool(LONG_HEADER.search(cell[0]))
    return [cell, *(c for c in rest if bool(LONG_HEADER.search(c[0])) == long)][:2]


def lead_for_row(lead: str, r: Row, q: Question, titles: Mapping[int, str]) -> str:
    """``lead`` ("AAPL: "), unless the row's source's title names another of the question's
    names and not the lead's: of "AAPL MSFT NVDA revenue", NVIDIA's row leads with "NVDA: "."""
    said = " ".join(titles.get(n, "") for n in r.sources)
    named = [e for e in q.entities if names_entity(e, said)]
    if not lead or not named or any(lead == f"{e}: " for e in named):
        return lead
    return f"{named[0]}: " if any(lead == f"{e}: " for e in q.entities) else lead


def subject(q: Question) -> str:
    """``"<entity>: "`` for the question's first name (the company a filing calls "the Company")."""
    return f"{q.entities[0]}: " if q.entities else ""


__all__ = [
    "BLANK",
    "LONG_HEADER",
    "MAX_CELLS",
    "QUARTER_HEADER",
    "Row",
    "best_rows",
    "cell_fit",
    "cite",
    "date_key",
    "figure_line",
    "filing_of",
    "latest_date",
    "lead_for_row",
    "match",
    "period_fit",
    "pick_cell",
    "rows_of",
    "subject",
    "unit_kind",
    "unit_text",
]
