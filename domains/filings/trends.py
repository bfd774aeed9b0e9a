"""The trend of one line item: a period -> value table over the cited filings, with the parts
of a total beside it.

A trend takes the one label (no near namesake) that states the most quarters among the rows
naming the metric about as well as the best, in time order, one cited cell per period. When that
line item is a total, the rows it is the sum of (named under it, or adding up to it) are columns
beside it: what changed is read from the parts. Pure, no I/O.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

from deepresearch.domains.filings.rows import (
    BLANK,
    LONG_HEADER,
    Row,
    best_rows,
    cell_fit,
    cite,
    date_key,
    latest_date,
    magnitude,
    subject,
    unit_kind,
    unit_text,
)
from deepresearch.text.question import Question, asked_terms, periods_of
from deepresearch.text.row_sums import summing
from deepresearch.text.terms import terms

MAX_TREND_ROWS = 12
YEAR_SLACK_DAYS = 10  # a 52-week calendar's quarter a year on ends a few days earlier or later
MAX_PARTS = 4  # a total's parts shown as columns of its trend table
# a trend's line item may score this much below the best-named row: the statements' nested
# "Operating expenses - Research and development" of every filing against a note's "Research
# and development" of one (two heading words at 0.5 each)
TREND_SLACK = 1.0


def trend_table(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None = None
) -> tuple[str, list[Row]] | None:
    """``| <headers' common start> | <entity>: <label> (<unit>) |`` with one line per quarter,
    oldest first. Without a common start the first header cell stays empty: a word of ours
    ("Period") is not in the cited rows, and the verifier would take the line as unsupported.

    The line item is the one label (no near namesake) that states the most quarters among the
    rows naming the metric about as well as the best: the statements' "Operating expenses -
    Research and development" of every filing, not the discussion's table of one quarter.
    A question naming two quarters or more gets those (``_asked_quarters``, read by the
    sources' ``titles`` where they name quarters)."""
    best = best_rows(rows, asked_terms(q), q.metrics)
    if not best:
        return None
    top_score = best[0][0]
    items: dict[tuple[frozenset[str], str], list[Row]] = {}
    for s, r in best:
        if s >= top_score - TREND_SLACK:  # one label, in one unit: 12.7 (% of revenue) is no
            key = (frozenset(terms(r.row.label)), unit_kind(r.row))  # quarter of 2,294 ($M)
            items.setdefault(key, []).append(r)
    ranked = [(_points(same), same) for same in items.values()]  # best-scored label first
    points, same = max(ranked, key=lambda item: len(item[0]))
    if len(points) < 2:
        return None
    top = same[0]
    ordered = _asked_quarters([points[k] for k in sorted(points)], q, titles or {})
    ordered = ordered[-MAX_TREND_ROWS:]
    first = _common_prefix([h for h, _, _ in ordered])
    parts = _components([r for _, _, r in ordered], rows)
    if any(2 * sum(id(r) in by for _, _, r in ordered) < len(ordered) for _, by in parts):
        parts = []  # columns of dashes but for a quarter or two: the trend, not its parts
    heads = [label for label, _ in parts]
    lines = [
        f"| {first} | {' | '.join([*heads, ''])}{subject(q)}{top.row.label}{unit_text(top.row)} |",
        "| --- |" + " --- |" * (len(heads) + 1),
    ]
    used = list({id(r): r for _, _, r in ordered}.values())
    for h, v, r in ordered:
        found = [by_total.get(id(r)) for _, by_total in parts]
        cells = [dict(c.row.cells).get(h, "—") if c else "—" for c in found]
        cited = [*r.sources, *(n for c in found if c for n in c.sources)]
        lines.append(f"| {h} | {' | '.join([*cells, v])} {cite(tuple(dict.fromkeys(cited)))}")
        used += [c for c in found if c]
    # one paragraph per table line: the verifier checks each line against its own cited row,
    # and joins consecutive table lines back into one table
    return "\n\n".join(lines), used


def _asked_quarters(
    points: list[tuple[str, str, Row]], q: Question, titles: Mapping[int, str]
) -> list[tuple[str, str, Row]]:
    """Of a trend's quarters, those the question names when it names two or more ("Q3 2023
    compared to Q3 2022": two lines, not every quarter the filings state). A quarter is read
    as the filings' titles name them where they do ("2023 Q1 ..." is a fiscal first quarter
    ending in December), a year apart from a titled one by the same reading; else as the
    calendar quarters when two are stated, else by any reading (a fiscal calendar's)."""
    asked = [p for p in q.periods if (p.year and p.quarter) or p.date]
    if len(asked) < 2:
        return points
    titled = _titled_dates(points, q, titles)
    inside = [point for point in points if date_key(point[0]) in titled]
    if len(inside) >= 2:
        return inside
    dates = {p.date for p in asked if p.date}
    fits = [0.5 if date_key(h) in dates else cell_fit(h, q) for h, _, _ in points]
    for bar in (0.5, 0.4):
        inside = [point for point, fit in zip(points, fits, strict=True) if fit >= bar]
        if len(inside) >= 2:
            return inside
    return points


def _titled_dates(
    points: Sequence[tuple[str, str, Row]], q: Question, titles: Mapping[int, str]
) -> set[tuple[int, int, int]]:
    """The dates of the asked quarters by the sources' titles: a titled filing's current
    period is its quarter; an asked quarter no title names is the one a whole number of
    years from a titled one of the same quarter (within ``YEAR_SLACK_DAYS``)."""
    asked = {(p.year, p.quarter) for p in q.periods if p.year and p.quarter}
    anchors: dict[tuple[int, int], tuple[int, int, int]] = {}
    for _, _, r in points:
        now = latest_date(r.row)
        for n in r.sources:
            for p in periods_of(titles.get(n, "")):
                if now and p.year and p.quarter and (p.year, p.quarter) in asked:
                    anchors[(p.year, p.quarter)] = now
    found = set(anchors.values())
    stated = {d for h, _, _ in points if (d := date_key(h))}
    for year, quarter in asked - anchors.keys():
        for (y, qt), (ay, am, ad) in anchors.items():
            if qt != quarter:
                continue
            target = datetime.date(ay, am, min(ad, 28)).toordinal() + 365 * (year - y)
            found |= {
                d for d in stated if abs(datetime.date(*d).toordinal() - target) <= YEAR_SLACK_DAYS
            }
    return found


def _components(totals: Sequence[Row], rows: Sequence[Row]) -> list[tuple[str, dict[int, Row]]]:
    """The parts of a total line item, as columns beside it: per part label, its row in each
    total's table. A part is named under the total ("Operating expenses - Research and
    development" beside "Total operating expenses") or adds up to it with the other parts
    (``row_sums.summing``: "Restructuring and other charges" of Intel's "Operating expenses").
    A total's parts are shown all or not at all, and only while all totals' parts together make
    ``MAX_PARTS`` columns or fewer: two of six segments beside a total would read as its sum."""
    out: dict[tuple[str, ...], dict[int, Row]] = {}  # by the label's words: filings punctuate
    shown: dict[tuple[str, ...], str] = {}  # "general, and" or "general and" differently
    for total in totals:
        table = [
            r
            for r in rows
            if r is not total and r.sources == total.sources and r.row.title == total.row.title
        ]
        label = total.row.label
        prefix = f"{label[6:].strip().lower()} - " if label.lower().startswith("total ") else ""
        named = [r for r in table if prefix and r.row.label.lower().startswith(prefix)]
        found = [(r.row.label[len(prefix) :], r) for r in named] or [
            (table[k].row.label, table[k]) for k in summing(total.row, [r.row for r in table])
        ]
        if len(found) > MAX_PARTS:
            continue
        for part, r in found:
            key = tuple(terms(part))
            shown.setdefault(key, part)
            out.setdefault(key, {}).setdefault(id(total), r)
    if not 2 <= len(out) <= MAX_PARTS:
        return []
    return [(shown[key], by_total) for key, by_total in out.items()]


def _points(same: Sequence[Row]) -> dict[tuple[int, int, int], tuple[str, str, Row]]:
    """The quarters the rows of one line item state: date -> (header, value, row); a date's
    first column is its quarter (a repeat is year-to-date), the first row stating it wins."""
    points: dict[tuple[int, int, int], tuple[str, str, Row]] = {}
    for r in same:
        seen: set[tuple[int, int, int]] = set()
        for header, value in r.row.cells:
            key = date_key(header)
            if key is None or key in seen or LONG_HEADER.search(header):
                continue
            seen.add(key)
            # two values of one label for a date: the larger is the line item, the smaller a
            # note's part of something else (``rows.broken_down_elsewhere``)
            if value not in BLANK and (
                key not in points or magnitude(value) > magnitude(points[key][1])
            ):
                points[key] = (header, value, r)
    return points


def _common_prefix(headers: Sequence[str]) -> str:
    """The words every header starts with ("Three Months Ended"), without dates or figures."""
    split = [h.split() for h in headers]
    out: list[str] = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1 or any(c.isdigit() for c in words[0]):
            break
        out.append(words[0])
    return " ".join(out).rstrip(",")


__all__ = ["MAX_PARTS", "MAX_TREND_ROWS", "TREND_SLACK", "trend_table"]
