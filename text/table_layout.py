"""Table reconstruction from positioned words: which visual rows form a table, where its columns
are, which header words sit over each column, and the table's title and unit line.

Pure geometry over ``Word`` boxes (PDF points, y grows upwards), so it is tested without a PDF
and shared by any extractor that can place words. Columns come from the value cells themselves
(numbers are aligned in columns; a spanning header such as "Three Months Ended" is assigned to
every column it overlaps), so no ruling lines or fixed layouts are assumed.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from deepresearch.text.tables import TableRow

_NUMBER = r"\(?\s*[-+−]?\s*[$€£]?\s*\d[\d,]*(?:\.\d+)?\s*\)?"
_VALUE_RE = re.compile(
    rf"^(?:[$€£]\s*)?{_NUMBER}\s*(?:%|bps|pts|x)?\)?$|^[—–−-]+$|^(?:n/?m|n/?a|\*+)$", re.IGNORECASE
)
_YEAR_RE = re.compile(r"^(?:19|20)\d\d$")
_CURRENCY_RE = re.compile(r"^[$€£]\s*")
UNIT_RE = re.compile(
    r"^\(?\s*(?:\w+\s+)?(?:dollars\s+|amounts\s+|\$\s*)?in\s+(?:millions|thousands|billions)\b",
    re.IGNORECASE,
)
_TRAILING_PAREN = re.compile(r"\s*\((?:unaudited|continued|audited)\)\s*$", re.IGNORECASE)
_MAX_TITLE_WORDS = 20


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
        return bool(_VALUE_RE.match(self.text))


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


@dataclass(frozen=True)
class Table:
    rows: list[tuple[VisualRow, TableRow]]  # each data row and its self-describing form
    consumed: list[VisualRow]  # every visual row whose words the formatted rows replace


def visual_rows(words: list[Word]) -> list[VisualRow]:
    """Words grouped into rows (same baseline band), top to bottom, split into fragments at gaps
    wider than about one character height."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (-(w.y0 + w.y1) / 2, w.x0)):
        centre, height = (word.y0 + word.y1) / 2, max(word.y1 - word.y0, 1.0)
        if rows:
            last = rows[-1]
            ref = statistics.median((w.y0 + w.y1) / 2 for w in last)
            ref_h = max(max(w.y1 - w.y0 for w in last), height)
            if abs(centre - ref) <= 0.45 * ref_h:
                last.append(word)
                continue
        rows.append([word])
    out: list[VisualRow] = []
    for row in rows:
        row.sort(key=lambda w: w.x0)
        gap = max(max(w.y1 - w.y0 for w in row), 4.0)
        frags: list[Frag] = [Frag([row[0]])]
        for word in row[1:]:
            if word.x0 - frags[-1].x1 > gap:
                frags.append(Frag([word]))
            else:
                frags[-1].words.append(word)
        out.append(VisualRow(_merge_signs(frags)))
    return out


def _merge_signs(frags: list[Frag]) -> list[Frag]:
    """A lone ``$`` joins the value to its right, a lone ``%`` or ``)`` the value to its left."""
    out: list[Frag] = []
    pending: list[Word] = []
    for frag in frags:
        text = frag.text
        if text in ("$", "€", "£", "$ (", "("):
            pending.extend(frag.words)
            continue
        if text in ("%", ")", ")%") and out:
            out[-1].words.extend(frag.words)
            continue
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
    if not label and (len(values) < 2 or all(_YEAR_RE.match(f.text) for f in values)):
        row.kind = "head" if values and all(_YEAR_RE.match(f.text) for f in values) else "text"
        return
    row.kind, row.label, row.values = "data", label, values


def _value_text(frag: Frag) -> str:
    text = _CURRENCY_RE.sub("", frag.text)
    return re.sub(r"\(\s*[$€£]?\s*", "(", text).replace(" )", ")").strip()


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


def _slot_of(frag: Frag, slots: list[tuple[float, float]]) -> int:
    centre = (frag.x0 + frag.x1) / 2
    return min(range(len(slots)), key=lambda i: _distance(centre, slots[i]))


def _distance(x: float, span: tuple[float, float]) -> float:
    return 0.0 if span[0] <= x <= span[1] else min(abs(x - span[0]), abs(x - span[1]))


def _header_columns(frag: Frag, slots: list[tuple[float, float]]) -> list[int]:
    """The columns a header fragment sits over: every slot it covers a fair share of."""
    overlaps = [max(0.0, min(frag.x1, r) - max(frag.x0, left)) for left, r in slots]
    width = max(frag.x1 - frag.x0, 1.0)
    chosen = [
        i
        for i, ov in enumerate(overlaps)
        if ov >= 0.3 * min(width, slots[i][1] - slots[i][0]) and ov > 0
    ]
    return chosen or [_slot_of(frag, slots)]


def _clean_title(text: str) -> str:
    text = _TRAILING_PAREN.sub("", " ".join(text.split())).strip()
    if text.isupper():
        text = text[:1] + text[1:].lower()
    return text


def _unit_text(text: str) -> str:
    unit = " ".join(text.strip().strip("()").split()).rstrip(")").strip()
    return unit[:1].lower() + unit[1:]


def find_tables(words: list[Word]) -> list[Table]:
    """Every table among ``words``: runs of at least two data rows with their headers."""
    rows = visual_rows(words)
    for row in rows:
        _classify(row)
    data = [r for r in rows if r.kind == "data"]
    if len(data) < 2:
        return []
    value_left = min(f.x0 for r in data for f in r.values)
    label_right = max((r.frags[0].x1 for r in data if r.label), default=0.0)
    for row in rows:  # a text row over the value columns (right of every label) is a header
        first = row.frags[0]
        over = first.x0 >= value_left - 2 or (first.x0 > label_right + 2 and first.x1 >= value_left)
        if row.kind == "text" and over and len(row.text) < 120:
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
        while stop < len(rows) and rows[stop].kind != "head" and not _is_prose(rows[stop]):
            stop += 1
        above, lead = rows[start:end], end
        heads = [i for i, r in enumerate(above) if r.kind == "head"]
        if heads:  # label rows between the column headers and the first data row open the body
            lead = start + heads[-1] + 1
        while lead > start and lead == end and rows[lead - 1].text.rstrip().endswith(":"):
            lead -= 1
        table = _build(rows[start:lead], rows[lead:stop])
        if table is not None:
            tables.append(table)
        start = stop
    return tables


def _is_prose(row: VisualRow) -> bool:
    return row.kind == "text" and (
        len(row.text.split()) >= 14
        or (len(row.frags) == 1 and row.text.endswith(".") and len(row.text.split()) >= 8)
    )


def _build(above: list[VisualRow], body: list[VisualRow]) -> Table | None:
    data = [r for r in body if r.kind == "data"]
    if len(data) < 2:
        return None
    label_right = max((r.frags[0].x1 for r in data if r.label), default=0.0)
    slots = _slots(_columns(data), label_right)
    heads: list[VisualRow] = []
    unit = title = ""
    for row in reversed(above):  # upwards from the first data row
        if row.kind == "head" and not title and not unit:
            heads.insert(0, row)
            continue
        text = row.text
        if row.kind == "head":
            break
        if not unit and UNIT_RE.match(text.strip()):
            unit = _unit_text(text)
            continue
        for frag in row.frags:  # "(In millions)" on a header row, left of the columns
            if not unit and UNIT_RE.match(frag.text):
                unit = _unit_text(frag.text)
        if _is_prose(row) or len(text.split()) > _MAX_TITLE_WORDS:
            break
        title = _clean_title(text)
        break
    headers: list[list[str]] = [[] for _ in slots]
    for row in heads:
        for frag in row.frags:
            if UNIT_RE.match(frag.text) or frag.x1 < slots[0][0]:
                if not unit and UNIT_RE.match(frag.text):
                    unit = _unit_text(frag.text)
                continue
            for i in _header_columns(frag, slots):
                headers[i].append(frag.text)
    names = [" ".join(h) or f"column {i + 1}" for i, h in enumerate(headers)]
    return Table(_rows(body, slots, names, title, unit), list(body))


def _rows(
    body: list[VisualRow],
    slots: list[tuple[float, float]],
    names: list[str],
    title: str,
    unit: str,
) -> list[tuple[VisualRow, TableRow]]:
    out: list[tuple[VisualRow, TableRow]] = []
    section, section_x, carry = "", 0.0, ""
    for i, row in enumerate(body):
        if row.kind != "data":
            text = row.text.strip()
            nxt = body[i + 1] if i + 1 < len(body) else None
            if text[:1].islower() and out and out[-1][0] is body[i - 1]:
                prev_row, prev = out[-1]
                out[-1] = (prev_row, TableRow(title, unit, f"{prev.label} {text}", prev.cells))
            elif (
                not text.endswith(":")
                and nxt is not None
                and nxt.kind == "data"
                and (nxt.label[:1].islower())
            ):
                carry = text
            else:
                section, section_x, carry = text.rstrip(":").strip(), row.frags[0].x0, ""
            continue
        label = f"{carry} {row.label}".strip() if carry else row.label
        carry = ""
        if section and (label.lower().startswith("total") or row.frags[0].x0 <= section_x + 1):
            section = ""
        elif section:
            label = f"{section} - {label}"
        cells: dict[int, list[str]] = {}
        for frag in row.values:
            cells.setdefault(_slot_of(frag, slots), []).append(_value_text(frag))
        out.append(
            (
                row,
                TableRow(
                    title, unit, label, tuple((names[c], " ".join(cells[c])) for c in sorted(cells))
                ),
            )
        )
    return out
