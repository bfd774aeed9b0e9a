"""Table reconstruction from positioned words: which visual rows (``visual_rows``) form a table,
where its columns are, and each data row's label and cells (headers, title and unit:
``table_headers`` and ``header_columns``; labels and sections: ``table_body``).

Pure geometry over ``Word`` boxes (PDF points, y grows upwards), so it is tested without a PDF
and shared by any extractor that can place words. Columns come from the value cells themselves
(numbers are aligned in columns; a spanning header such as "Three Months Ended" is assigned to
every column it overlaps), so no ruling lines or fixed layouts are assumed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from deepresearch.text.header_columns import column_headers, over_text_column
from deepresearch.text.table_body import (
    adjacent,
    body_rows,
    labels_set_apart,
    labels_wrapped_as_values,
    without_footer,
)
from deepresearch.text.table_headers import (
    UNIT_RE,
    header_block,
    header_text,
    is_prose,
    lone_header,
    title_and_unit,
    unit_row,
)
from deepresearch.text.tables import TableRow
from deepresearch.text.visual_rows import VisualRow, Word, classify, visual_rows


@dataclass(frozen=True)
class Table:
    rows: list[tuple[VisualRow, TableRow]]  # each data row and its self-describing form
    consumed: list[VisualRow]  # every visual row whose words the formatted rows replace
    columns: list[tuple[float, float]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # each column's header
    title: str = ""
    unit: str = ""
    headed: bool = False  # the headers were printed above this table (not inherited)


def _columns(rows: list[VisualRow]) -> list[tuple[float, float]]:
    spans = sorted((f.x0, f.x1) for r in rows for f in r.values)
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return [(c[0], c[1]) for c in columns]


def _slots(columns: list[tuple[float, float]], label_right: float) -> list[tuple[float, float]]:
    """Each column's horizontal territory: halfway to its neighbours (and to the labels)."""
    slots = []
    for i, (x0, x1) in enumerate(columns):
        left = (columns[i - 1][1] + x0) / 2 if i else (max(label_right, x0 - 60) + x0) / 2
        right = (x1 + columns[i + 1][0]) / 2 if i + 1 < len(columns) else x1 + 30
        slots.append((left, right))
    return slots


def _pitch(rows: list[VisualRow]) -> float:
    """The usual distance between consecutive data rows (the table's line pitch)."""
    gaps = sorted(
        a.centre - b.centre
        for a, b in itertools.pairwise(rows)
        if a.kind == b.kind == "data" and a.centre > b.centre
    )
    return gaps[len(gaps) // 2] if gaps else 12.0


def find_tables(
    words: list[Word], previous: Table | None = None, earlier: tuple[Table, ...] = ()
) -> list[Table]:
    """Every table among ``words``: runs of at least two data rows with their headers.
    ``previous`` is the last table before these words (or a caption alone: the previous page
    ended with the sentence introducing a table): a table printed without headers under the
    same columns continues it and takes its headers. A table without a caption takes the
    title of the one printed right above it among these words, or of an earlier one
    (``earlier``: this page's and the previous page's) printed under the same columns."""
    rows = visual_rows(words)
    for row in rows:
        classify(row)
    labels_wrapped_as_values(rows)
    rows = labels_set_apart(rows)
    data = [r for r in rows if r.kind == "data"]
    if len(data) < 2:
        return []
    value_left = min(f.x0 for r in data for f in r.values)
    label_right = max((r.frags[0].x1 for r in data if r.label), default=0.0)
    pitch = _pitch(rows)
    inner = _inner(data)
    for row in rows:  # a text row over the value columns (a stub at most on the left): header
        over = [
            f.x0 >= value_left - 2
            or (
                f.x0 > label_right + 2
                and (f.x0 + f.x1 >= 2 * value_left or f.x1 >= value_left - 10)
            )
            for f in row.frags
        ]
        units = [bool(UNIT_RE.match(f.text)) for f in row.frags]  # "(In millions)" as a stub
        stub = sum(not (o or u) for o, u in zip(over, units, strict=True))
        if (
            row.kind == "text"
            and any(over)
            and not _lone(row)  # a chart's figure ("$9.3") heads nothing
            and stub <= (1 if len(over) > 1 else 0)
            and (not over[0] or stub == 0)
            and len(row.text) < 120
        ) or (row.kind == "text" and _over_inner(row, inner, label_right)):
            row.kind = "head"
    tables: list[Table] = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end].kind != "data":
            end += 1
        if end == len(rows):
            break
        stop = end
        while (
            stop < len(rows)
            and rows[stop].kind != "head"
            and not _ends_body(rows[stop], value_left)
        ):
            stop += 1
        stop = without_footer(rows, end, stop, pitch)
        while rows[stop - 1].kind != "data":  # rows after the last data row are not the table's
            stop -= 1
        if (
            stop < len(rows)
            and rows[stop].kind == "text"
            and rows[stop].text[:1].islower()
            and adjacent(rows[stop - 1], rows[stop], pitch)
        ):
            stop += 1  # the wrapped end of the last row's label
        above, lead = rows[start:end], end
        heads = [i for i, r in enumerate(above) if r.kind == "head"]
        if heads:  # label rows between the column headers and the first data row open the body
            lead = start + heads[-1] + 1
        if (
            lead == end > start
            and rows[lead - 1].right < value_left
            and not unit_row(rows[lead - 1])
            and not rows[lead - 1].text[:1].islower()  # "as follows (in millions):" ends a
            and (  # sentence
                rows[lead - 1].text.rstrip().endswith(":")
                or (not heads and adjacent(rows[lead - 1], rows[lead], pitch))
            )
        ):  # a section label ("Net sales:", "Year Ending June 30,") opens the body
            lead -= 1
        if (
            lead == end > start
            and rows[end].label[:1].islower()
            and rows[end - 1].kind == "text"
            and adjacent(rows[end - 1], rows[end], pitch)
        ):
            lead -= 1  # the first line of the first row's wrapped label
        near = bool(tables)  # right under another table of these words
        last = tables[-1] if tables else previous
        table = _build(rows[start:lead], rows[lead:stop], pitch, last, near, earlier)
        if table is not None:
            tables.append(table)
        start = stop
    return tables


def _ends_body(row: VisualRow, value_left: float) -> bool:
    """Prose ends a table; a long line kept left of the value columns is a wrapped row label."""
    return is_prose(row) and row.right >= value_left


def _inner(data: list[VisualRow]) -> list[list[tuple[float, float]]]:
    """Each labelled row's words in a text column between its label and figures ("Level 2")."""
    return [[(f.x0, f.x1) for f in r.frags[1:] if f.x1 < r.values[0].x0] for r in data if r.label]


def _over_inner(row: VisualRow, inner: list[list[tuple[float, float]]], label_right: float) -> bool:
    """A short line over an inner text column alone ("Pricing" over "Category"): its header."""
    return len(row.text) < 40 and all(
        f.x0 > label_right + 2 and over_text_column(f, inner) for f in row.frags
    )


def _lone(row: VisualRow) -> bool:
    """A line of figures alone, no label, too few for a row ("$9.3")."""
    return row.kind == "text" and all(f.is_value for f in row.frags)


def _same_columns_as(
    table: Table | None, columns: list[tuple[float, float]], slack: float = 8
) -> bool:
    """Same columns (right edges within a few points) as ``table``: its continuation."""
    return (
        table is not None
        and len(table.columns) == len(columns) >= 2
        and all(abs(a[1] - b[1]) <= slack for a, b in zip(table.columns, columns, strict=True))
    )


def _build(
    above: list[VisualRow],
    body: list[VisualRow],
    pitch: float,
    previous: Table | None,
    near: bool,
    earlier: tuple[Table, ...],
) -> Table | None:
    data = [r for r in body if r.kind == "data"]
    if len(data) < 2 or (not any(r.label for r in data) and any(map(_lone, above[-3:] + body))):
        return None  # unlabelled figures among lone figures: a chart's, set as printed
    label_right = max(  # an inner text column ("Level 2") is the labels'
        (f.x1 for r in data if r.label for f in r.frags if f.x1 < r.values[0].x0), default=0.0
    )
    label_left = min(r.frags[0].x0 for r in data)
    columns = _columns(data)
    slots = _slots(columns, label_right)
    heads, unit, i = header_block(above, body[0], slots, columns, pitch, label_left)
    title, caption_unit = title_and_unit(above[:i])
    unit = unit or caption_unit
    if not i and not title:  # right under another table, or overleaf under its columns
        source = (
            previous
            if previous is not None and (near or not previous.columns)
            else next((t for t in reversed(earlier) if _same_columns_as(t, columns, 12)), None)
        )
        if source is not None:
            title, unit = source.title, unit or source.unit
    inner = _inner(data)
    headers, head_unit = column_headers(heads, slots, columns, (label_left, inner))
    unit = head_unit or unit
    names = [header_text(h) for h in headers]
    if not any(names) and previous is not None and _same_columns_as(previous, columns):
        names = list(previous.names)  # continued from above: the same headers, title and unit
        title, unit = title or previous.title, unit or previous.unit
    elif len(names) == 1 and not names[0]:
        names = [lone_header(title)]
    if len(names) > 1 and not any(names):
        return None  # no column has a header (an infographic's figures): text as printed
    names = [name or f"column {i + 1}" for i, name in enumerate(names)]
    return Table(
        body_rows(body, slots, names, title, unit, pitch),
        list(body),
        columns,
        names,
        title,
        unit,
        bool(heads),
    )
