"""The data rows of a table rebuilt by ``table_layout``: each row's label (a label wrapped over
two lines is one label, a section line such as "Net sales:" prefixes the rows under it) and its
values placed under their columns' headers.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from deepresearch.text.table_headers import slot_of
from deepresearch.text.tables import TableRow

if TYPE_CHECKING:
    from deepresearch.text.table_layout import Frag, VisualRow

_CURRENCY_RE = re.compile(r"^[$€£]\s*")


def adjacent(upper: VisualRow, lower: VisualRow, pitch: float) -> bool:
    """``lower`` is the next printed line after ``upper`` (a wrapped label), not a new block."""
    return 0 < upper.centre - lower.centre <= 1.3 * pitch


def _value_text(frag: Frag) -> str:
    text = _CURRENCY_RE.sub("", frag.text)
    return re.sub(r"\(\s*[$€£]?\s*", "(", text).replace(" )", ")").strip()


_JOINS_NEXT = re.compile(r"(?:\(|&|\b(?:and|or|of|for|to|the|in|from|by|with|on|at|as))$", re.I)
_FOOTNOTES = re.compile(r"(?:\s*\(\d{1,2}\))+\s*:?$")


def _joins_next(text: str, nxt: VisualRow | None, pitch: float, row: VisualRow) -> bool:
    """A label line that the next data row's label completes: it stops mid-phrase, leaves a
    parenthesis open, or the next label starts in lower case."""
    if nxt is None or nxt.kind != "data" or text.endswith(":") or not adjacent(row, nxt, pitch):
        return False
    return (
        nxt.label[:1].islower()
        or text.count("(") > text.count(")")
        or bool(_JOINS_NEXT.search(text))
    )


def body_rows(
    body: list[VisualRow],
    slots: list[tuple[float, float]],
    names: list[str],
    title: str,
    unit: str,
    pitch: float,
) -> list[tuple[VisualRow, TableRow]]:
    out: list[tuple[VisualRow, TableRow]] = []
    section, section_x, carry = "", 0.0, ""
    for i, row in enumerate(body):
        if row.kind != "data":
            text = _FOOTNOTES.sub("", row.text.strip()).strip()
            nxt = body[i + 1] if i + 1 < len(body) else None
            if (
                text[:1].islower()
                and out
                and out[-1][0] is body[i - 1]
                and adjacent(body[i - 1], row, pitch)
            ):
                prev_row, prev = out[-1]
                out[-1] = (prev_row, TableRow(title, unit, f"{prev.label} {text}", prev.cells))
            elif _joins_next(text, nxt, pitch, row):
                carry = text
            else:
                section, section_x, carry = text.rstrip(":").strip(), row.frags[0].x0, ""
            continue
        label = _FOOTNOTES.sub("", row.label).strip()
        label = f"{carry} {label}".strip() if carry else label
        carry = ""
        if section and label.lower() in ("total", "totals", "net", "subtotal"):
            label, section = f"{section} - {label}", ""  # "Revenue - Total"
        elif section and (label.lower().startswith("total") or row.frags[0].x0 < section_x - 1):
            section = ""  # "Total net sales" closes its section; so does a row left of it
        elif section:
            label = f"{section} - {label}"
        cells: dict[int, list[str]] = {}
        for frag in row.values:
            cells.setdefault(slot_of(frag, slots), []).append(_value_text(frag))
        out.append(
            (
                row,
                TableRow(
                    title, unit, label, tuple((names[c], " ".join(cells[c])) for c in sorted(cells))
                ),
            )
        )
    return out
