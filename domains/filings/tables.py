"""The Answer's tables of one filing's table: the breakdown a question names, a rate with the
two amounts it is the ratio of, a whole with the parts that add up to it. Each line holds only a
cited row's label and cells under the table's own title and column headers. Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from deepresearch.domains.filings.rows import (
    BLANK,
    MAX_CELLS,
    Row,
    cell_fit,
    cite,
    figure_line,
    negated,
    pick_cell,
    subject,
    unit_text,
)
from deepresearch.domains.filings.trends import MAX_TREND_ROWS
from deepresearch.text.line_items import (
    MIN_TABLE_ROWS,
    STRUCTURE,
    core_terms,
    named_table,
    table_fit,
)
from deepresearch.text.question import (
    Question,
    dimension_terms,
    metric_terms,
    metric_words_of,
)
from deepresearch.text.row_sums import ratio_of, summing
from deepresearch.text.terms import terms


def _tables(rows: Sequence[Row]) -> dict[tuple[tuple[int, ...], str], list[Row]]:
    """The rows by table (their sources and title), in findings order."""
    out: dict[tuple[tuple[int, ...], str], list[Row]] = {}
    for r in rows:
        out.setdefault((r.sources, r.row.title), []).append(r)
    return out


def names_a_table(rows: Sequence[Row], q: Question) -> bool:
    """Whether the question names a table rather than a row of it: a title of three or more
    rows shares as many of its metric words as the best row label ("inventory levels": the
    "Inventories" table, of which "Total inventories" is one line), and that table holds what
    the best labels name ("gaming and professional GPU segments" names two rows, not the
    "Revenue by Reportable Segments" table whose rows are other segments)."""
    wanted = metric_terms(q)
    hits = [set(terms(r.row.label)) & wanted for r in rows]
    best = max((len(h) for h in hits), default=0)
    if best == 0:
        return False
    named = {w for h in hits if len(h) == best for w in h}
    # a row named by the metric and nothing else ("Net income") is what is asked, unless it is
    # a line of the table ("Total inventories" of "Inventories"): "the detail of other
    # income/(expense), net" shares the words of "net income" and is another table
    core = wanted - STRUCTURE
    exact = {id(r) for r in rows if core_terms(r.row.label) == core}
    return any(
        len(parts) >= MIN_TABLE_ROWS
        and table_fit(title, wanted) >= best
        and named <= set(terms(title)).union(*(terms(r.row.label) for r in parts))
        and (not exact or any(id(r) in exact for r in parts))
        for (_, title), parts in _tables(rows).items()
    )


def breakdown_table(rows: Sequence[Row], q: Question) -> tuple[str, list[Row]] | None:
    """``| <entity>: <title> (<unit>) | <column> | <column> |`` with one line per row of the
    table asked for (three or more rows of one source and title; the title sharing most of the
    question's metric words, then the most rows): each row's cell of the asked or current period
    and the one beside it (the prior period a reader compares with)."""
    tables = _tables(rows)

    def table_score(
        key: tuple[tuple[int, ...], str],
    ) -> float:  # the asked quarter's, then the most rows
        cell = pick_cell(tables[key][0].row, q)
        return (cell_fit(cell[0], q) if cell else 0.0) * 1000 + len(tables[key])

    named = named_table(tables, metric_terms(q), table_score, dimension_terms(q))
    if named is None:
        return None
    parts = _of_a_metric(tables[named], q)
    first = pick_cell(parts[0].row, q)
    if first is None:
        return None
    others = [h for h, v in parts[0].row.cells if h != first[0] and v not in BLANK]
    least = MIN_TABLE_ROWS if parts == tables[named] else 2  # two rows of the metric are a list
    return _table_text(parts, [first[0], *others[:1]], q, least)


def _of_a_metric(rows: list[Row], q: Question) -> list[Row]:
    """The rows of a breakdown that name every word of a metric the question names, when two or
    more do: "segments and their operating income" lists each segment's operating income, not
    its net sales and operating expenses printed in the same table; "revenue and operating
    income" lists both metrics' rows."""
    per_metric = []
    for metric in q.metrics:
        words = set(terms(metric)) - STRUCTURE
        named = [r for r in rows if words and words <= set(terms(negated(r.row.label)))]
        if 2 <= len(named) < len(rows):
            per_metric.append(named)
    if len(per_metric) >= 2:  # "revenue and operating income": each metric's rows, in order
        chosen = {id(r) for named in per_metric for r in named}
        return [r for r in rows if id(r) in chosen]
    return per_metric[0] if per_metric else rows


def _table_text(
    rows: Sequence[Row], headers: list[str], q: Question, least: int = MIN_TABLE_ROWS
) -> tuple[str, list[Row]] | None:
    """``| <entity>: <title> (<unit>) | <header> | ... |`` and a line per row with a cell under
    the first header (each row once, at most ``MAX_TREND_ROWS``); None under ``least`` lines."""
    # the unit of its amounts: a row of percents first (a rate's table) says none
    unit = next((u for r in rows if (u := unit_text(r.row))), "")
    title = f"{subject(q)}{rows[0].row.title}{unit}"
    lines = [f"| {title} | {' | '.join(headers)} |", "| --- |" + " --- |" * len(headers)]
    used: list[Row] = []
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for r in rows:
        cells = dict(r.row.cells)
        if cells.get(headers[0], "") in BLANK or (r.row.label, r.row.cells) in seen:
            continue  # a row several sub-questions quoted is one line
        if len(used) >= MAX_TREND_ROWS:
            break
        seen.add((r.row.label, r.row.cells))
        values = " | ".join(cells.get(h, "—") for h in headers)
        lines.append(f"| {r.row.label} | {values} {cite(r.sources)}")
        used.append(r)
    return ("\n\n".join(lines), used) if len(used) >= least else None


def rate_table(rate: Row, rows: Sequence[Row], q: Question) -> tuple[str, list[Row]] | None:
    """The rate's row and the two rows of its table it is the ratio of (``row_sums.ratio_of``),
    in its columns: "Effective tax rate 696.2 %" tells a reader little without "Provision for
    (benefit from) taxes (362)" over "Income (loss) before taxes (52)". None when no two rows of
    its table make it."""
    table = [
        r
        for r in rows
        if r.sources == rate.sources
        and r.row.title == rate.row.title
        and r.row.label != rate.row.label
    ]
    pair = ratio_of(rate.row, [r.row for r in table])
    if pair is None:
        return None
    headers = [h for h, v in rate.row.cells if v not in BLANK][:MAX_CELLS]
    return _table_text([rate, table[pair[0]], table[pair[1]]], headers, q)


MAX_PARTS = 6  # a total's parts shown beside it: more would be its statement, not its parts


def parts_of(total: Row, rows: Sequence[Row]) -> list[Row]:
    """The rows of ``total``'s table (its sources and title) whose amounts add up to its own in
    every column (``row_sums.summing``), each row once however many sub-questions quoted it."""
    table = list(
        {
            (r.row.label, r.row.cells): r
            for r in rows
            if r.sources == total.sources
            and r.row.title == total.row.title
            and (r.row.label, r.row.cells) != (total.row.label, total.row.cells)
        }.values()
    )
    return [table[i] for i in summing(total.row, [r.row for r in table])]


def parts_table(total: Row, rows: Sequence[Row], q: Question) -> tuple[str, list[Row]] | None:
    """The rows that add up to a total, as a table under its figure line: "Total debt 47,032"
    says little of what changed without "Total face value", "Unamortized discount and issuance
    costs" and "Premium on debt exchange" beside it. None unless two to ``MAX_PARTS`` rows do
    (more would be the whole statement, cut before its last lines)."""
    parts = parts_of(total, rows)
    first = pick_cell(total.row, q)
    if not 2 <= len(parts) <= MAX_PARTS or first is None:
        return None
    others = [h for h, v in total.row.cells if h != first[0] and v not in BLANK]
    return _table_text(parts, [first[0], *others[:1]], q, least=2)


def whole_table(
    rows: Sequence[Row], q: Question, titles: Mapping[int, str] | None = None
) -> tuple[str, list[Row]] | None:
    """A part compared with its whole ("revenue from its data-centric businesses relative to
    total revenue"): the whole's row of the asked filing with the rows of its table that add up
    to it (``parts_of``), so a reader sees every part beside the total, whichever of them the
    question's group takes in. None unless a metric is a total with two parts or more."""
    total_metric = next((m for m in q.metrics if terms(m)[:1] == ["total"]), "")
    if not total_metric:
        return None
    asked = replace(q, metrics=(total_metric,), metric_words=metric_words_of((total_metric,)))
    found = figure_line(rows, asked, subject(q), titles)
    if found is None:
        return None
    total = found[1]
    parts = parts_of(total, rows)
    first = pick_cell(total.row, q)
    if len(parts) < 2 or first is None:
        return None
    others = [h for h, v in total.row.cells if h != first[0] and v not in BLANK]
    return _table_text([*parts, total], [first[0], *others[:1]], q)


__all__ = [
    "MAX_PARTS",
    "breakdown_table",
    "names_a_table",
    "parts_of",
    "parts_table",
    "rate_table",
    "whole_table",
]
