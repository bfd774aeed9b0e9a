"""Table reconstruction from positioned words: which visual rows form a table, where its columns
are, and each data row's label and cells (headers, title and unit: ``table_headers``).

Pure geometry over ``Word`` boxes (PDF points, y grows upwards), so it is tested without a PDF
and shared by any extractor that can place words. Columns come from the value cells themselves
(numbers are aligned in columns; a spanning header such as "Three Months Ended" is assigned to
every column it overlaps), so no ruling lines or fixed layouts are assumed.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from deepresearch.text.header_columns import column_headers
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

_NUMBER = r"\(?\s*[-+−]?\s*[$€£]?\s*\d(?:[\d,]*\d)?(?:\.\d+)?\s*\)?"
_VALUE_RE = re.compile(
    rf"^(?:[$€£]\s*)?(?:{_NUMBER}\s*(?:%|bps|pts|x)?\)?(?:\s*[-–]\s*{_NUMBER}\s*%?)?|[—–−-]+\s*%?)$"
    r"|^(?:n/?m|n/?a|\*+)$|^\d+(?:\.\d+)?\s*(?:years?|months?)$",
    re.IGNORECASE,
)  # "$ —" is a blank in a "$" column, "— %" in a "%" column; "8.1 years" a term
_RANGE_END = re.compile(r"^[-–]\s*\d")
_YEAR_RE = re.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class Word:
    """One word and its box; ``line`` is the extractor's text line the word came from."""

    text: str
    x0: float
    x1: float
    y0: float
    y1: float
    line: int


@dataclass
class Frag:
    """Adjacent words of one visual row with no column gap between them."""

    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def x1(self) -> float:
        return self.words[-1].x1

    @property
    def is_value(self) -> bool:
        """A value, not a label's wrapped end: "2021)" closes a parenthesis the label opened."""
        text = self.text
        return bool(_VALUE_RE.match(text)) and text.count(")") <= text.count("(")


@dataclass
class VisualRow:
    frags: list[Frag]
    kind: str = ""  # "data" | "head" | "text"
    label: str = ""
    values: list[Frag] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(f.text for f in self.frags)

    @property
    def lines(self) -> set[int]:
        return {w.line for f in self.frags for w in f.words}

    @property
    def centre(self) -> float:
        return sum((w.y0 + w.y1) / 2 for f in self.frags for w in f.words) / sum(
            len(f.words) for f in self.frags
        )

    @property
    def right(self) -> float:
        return self.frags[-1].x1


@dataclass(frozen=True)
class Table:
    rows: list[tuple[VisualRow, TableRow]]  # each data row and its self-describing form
    consumed: list[VisualRow]  # every visual row whose words the formatted rows replace
    columns: list[tuple[float, float]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # each column's header
    title: str = ""
    unit: str = ""
    headed: bool = False  # the headers were printed above this table (not inherited)


def visual_rows(words: list[Word]) -> list[VisualRow]:
    """Words grouped into rows (same baseline band), top to bottom, split into fragments at gaps
    wider than about one character height."""
    rows: list[list[Word]] = []
    ref = ref_h = 0.0  # the current row's mean centre (cells set on jittering baselines)
    for word in sorted(words, key=lambda w: (-(w.y0 + w.y1) / 2, w.x0)):
        centre, height = (word.y0 + word.y1) / 2, max(word.y1 - word.y0, 1.0)
        if rows and abs(centre - ref) <= 0.45 * max(ref_h, height):
            rows[-1].append(word)
            if height >= 0.75 * ref_h:  # a superscript footnote mark does not move the row
                ref += (centre - ref) / len(rows[-1])
            ref_h = max(ref_h, height)
            continue
        rows.append([word])
        ref, ref_h = centre, height
    out: list[VisualRow] = []
    for row in rows:
        row.sort(key=lambda w: w.x0)
        gap = max(max(w.y1 - w.y0 for w in row), 4.0)
        frags: list[Frag] = [Frag([row[0]])]
        for word in row[1:]:
            if word.x0 - frags[-1].x1 > gap or _starts_cell(frags[-1].words[-1].text, word.text):
                frags.append(Frag([word]))
            else:
                frags[-1].words.append(word)
        out.append(VisualRow(_merge_signs(frags)))
    return out


def _starts_cell(before: str, word: str) -> bool:
    """A currency sign after a value, or a value right after a value, opens a new cell even when
    the columns are set tight ("9% $ 106,658", "$ 36,729 $ 33,745", "(22 ) $ 77")."""
    if word in ("$", "€", "£") and before[-1:] in (")", "%", "—"):
        return True  # the ")" of a negative or the "%" of a rate closes its cell
    if not (_VALUE_RE.match(before) and before not in ("$", "€", "£", "(")):
        return False
    return word in ("$", "€", "£") or (bool(_VALUE_RE.match(word)) and before[-1:].isdigit())


def _merge_signs(frags: list[Frag]) -> list[Frag]:
    """A lone ``$`` joins the value to its right, a lone ``%`` or ``)`` the value to its left."""
    out: list[Frag] = []
    pending: list[Word] = []
    for frag in frags:
        text = frag.text
        if text in ("$", "€", "£", "$ (", "("):
            pending.extend(frag.words)
            continue
        if (
            out
            and out[-1].is_value
            and (text in ("%", ")", ")%") or (_RANGE_END.match(text) and frag.x0 - out[-1].x1 < 8))
        ):  # "2024 - 2044": a range is one value
            out[-1].words.extend(frag.words)
            continue
        if pending and not frag.is_value:  # a header's "$" (of "$ Change") stays apart
            out.append(Frag(pending))
            pending = []
        out.append(Frag([*pending, *frag.words]))
        pending = []
    if pending:
        out.append(Frag(pending))
    return out


def _classify(row: VisualRow) -> None:
    first_value = next((i for i, f in enumerate(row.frags) if f.is_value), None)
    if first_value is None:
        row.kind = "text"
        return
    values = row.frags[first_value:]
    if not all(f.is_value for f in values):
        row.kind = "text"
        return
    label = " ".join(f.text for f in row.frags[:first_value])
    years = [bool(_YEAR_RE.match(f.text)) for f in values]
    if not label and len(values) >= 2 and years[0] and not all(years):
        label, values = values[0].text, values[1:]  # "2025  2,250": the year labels the row
    if all(years):  # "2023  2022", or "Three Months Ended September 30,  2023  2022"
        row.kind = "head"
        return
    if not label and len(values) < 2:
        row.kind = "text"
        return
    row.kind, row.label, row.values = "data", label, values


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


def find_tables(words: list[Word], previous: Table | None = None) -> list[Table]:
    """Every table among ``words``: runs of at least two data rows with their headers.
    ``previous`` is the last table before these words (or a caption alone: the previous page
    ended with the sentence introducing a table): a table printed without headers under the
    same columns continues it and takes its headers."""
    rows = visual_rows(words)
    for row in rows:
        _classify(row)
    labels_wrapped_as_values(rows)
    rows = labels_set_apart(rows)
    data = [r for r in rows if r.kind == "data"]
    if len(data) < 2:
        return []
    value_left = min(f.x0 for r in data for f in r.values)
    label_right = max((r.frags[0].x1 for r in data if r.label), default=0.0)
    pitch = _pitch(rows)
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
            and not all(f.is_value for f in row.frags)  # a chart's figure ("$9.3") heads nothing
            and stub <= (1 if len(over) > 1 else 0)
            and (not over[0] or stub == 0)
            and len(row.text) < 120
        ):
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
        table = _build(rows[start:lead], rows[lead:stop], pitch, tables[-1] if tables else previous)
        if table is not None:
            tables.append(table)
        start = stop
    return tables


def _ends_body(row: VisualRow, value_left: float) -> bool:
    """Prose ends a table; a long line kept left of the value columns is a wrapped row label."""
    return is_prose(row) and row.right >= value_left


def _lone(row: VisualRow) -> bool:
    """A line of figures alone, no label, too few for a row ("$9.3")."""
    return row.kind == "text" and all(f.is_value for f in row.frags)


def _continues(table: Table | None, columns: list[tuple[float, float]]) -> bool:
    """Same columns (right edges within a few points) as ``table``: its continuation."""
    return (
        table is not None
        and len(table.columns) == len(columns) >= 2
        and all(abs(a[1] - b[1]) <= 8 for a, b in zip(table.columns, columns, strict=True))
    )


def _build(
    above: list[VisualRow], body: list[VisualRow], pitch: float, previous: Table | None
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
    if not i and previous is not None and not title:
        title, unit = previous.title, unit or previous.unit  # a part under the same caption
    headers, head_unit = column_headers(heads, slots, columns, label_left)
    unit = head_unit or unit
    names = [header_text(h) for h in headers]
    if not any(names) and previous is not None and _continues(previous, columns):
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
