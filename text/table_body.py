"""The data rows of a table rebuilt by ``table_layout``: each row's label (a label wrapped over
two lines is one label, a section line such as "Net sales:" prefixes the rows under it) and its
values placed under their columns' headers.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from deepresearch.text.header_columns import slot_of
from deepresearch.text.row_sums import Figures, sum_span
from deepresearch.text.tables import TableRow

if TYPE_CHECKING:
    from deepresearch.text.visual_rows import Frag, VisualRow

_CURRENCY_RE = re.compile(r"^[$€£]\s*")


def adjacent(upper: VisualRow, lower: VisualRow, pitch: float) -> bool:
    """``lower`` is the next printed line after ``upper`` (a wrapped label), not a new block."""
    return 0 < upper.centre - lower.centre <= 1.3 * pitch


def _value_text(frag: Frag) -> str:
    text = _CURRENCY_RE.sub("", frag.text)
    return re.sub(r"\(\s*[$€£]?\s*", "(", text).replace(" )", ")").strip()


_JOINS_NEXT = re.compile(r"(?:\(|&|\b(?:and|or|of|for|to|the|in|from|by|with|on|at|as))$", re.I)
_FOOTNOTES = re.compile(r"(?<![$€£\s])(?:\s*\(\d{1,2}\))+\s*:?$")  # not "$ (10)"


# a row that is a ratio of the row above ("Research and development 7,442 / Percentage of total
# net sales 9 %"): alone, its label says nothing of what it is the percentage of
_RATIO_LABEL = re.compile(r"^(?:as an? )?(?:percentage|percent|%)\s+of\b", re.IGNORECASE)
_ENUMERATOR = re.compile(r"^\(?[a-z]{1,4}[).]\s")  # "a) Balance sheets", "(ii) Notes"


def _wrapped(text: str) -> bool:
    """A line starting in lower case continues the label above it, unless it opens an item of
    a lettered list ("b) Condensed Statements of ...")."""
    text = text.strip()
    return text[:1].islower() and not _ENUMERATOR.match(text)


def _joins_next(text: str, body: list[VisualRow], i: int, pitch: float) -> bool:
    """A label line (``text``, row ``i``) that the next data row's label completes: it stops
    mid-phrase, leaves a parenthesis open, or the next label starts in lower case. Lines in
    between that start in lower case are the same label wrapped over three lines or more
    ("Research and / development / expenses")."""
    nxt = body[i + 1] if i + 1 < len(body) else None
    if nxt is None or text.endswith(":") or not adjacent(body[i], nxt, pitch):
        return False
    if nxt.kind != "data":
        return _wrapped(nxt.text) and _joins_next(nxt.text.strip(), body, i + 1, pitch)
    return (
        not nxt.label  # figures printed on the label's last line's baseline, label above
        or nxt.label[:1].islower()
        or nxt.label[:1] in ("$", "€", "£")  # "... net of tax of $(9)," / "$0, $(8), and $0"
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
    section, section_x, carry, opened = "", 0.0, "", 0
    figures = Figures()
    for i, row in enumerate(body):
        if row.kind != "data":
            text = _FOOTNOTES.sub("", row.text.strip()).strip()
            if (
                _wrapped(text)
                and out
                and out[-1][0] is body[i - 1]
                and adjacent(body[i - 1], row, pitch)
            ):
                prev_row, prev = out[-1]
                out[-1] = (prev_row, TableRow(title, unit, f"{prev.label} {text}", prev.cells))
            elif _joins_next(text, body, i, pitch):
                carry = f"{carry} {text}" if carry and _wrapped(text) else text
            elif (
                _wrapped(text)
                and section
                and i
                and body[i - 1].kind != "data"
                and adjacent(body[i - 1], row, pitch)
            ):  # the wrapped end of a section label ("... available-for-sale debt / securities:")
                section = f"{section} {text.rstrip(':').strip()}"
            else:
                section, section_x, carry = text.rstrip(":").strip(), row.frags[0].x0, ""
                opened = len(out)
            continue
        label = _FOOTNOTES.sub("", row.label).strip()
        label = f"{carry} {label}".strip() if carry else label
        carry = ""
        cells: dict[int, list[str]] = {}
        for frag in row.values:
            cells.setdefault(slot_of(frag, slots), []).append(_value_text(frag))
        span = sum_span(cells, figures, names) if section or not label else 0
        wider = span > len(out) - opened  # it adds up rows before the section: a larger total
        label = label or ("Total" if span else "")
        if _RATIO_LABEL.match(label) and out and out[-1][0] is body[i - 1]:
            label = f"{out[-1][1].label} - {label}"  # "Research and development - Percentage of"
        elif section and label.lower() in ("total", "totals", "net", "subtotal") and not wider:
            label, section = f"{section} - {label}", ""  # "Revenue - Total"
        elif section and (
            label.lower().startswith("total") or row.frags[0].x0 < section_x - 1 or wider
        ):
            section = ""  # "Total net sales" closes its section; so does a row left of it
        elif section:
            label = f"{section} - {label}" if label else section
        texts = tuple((names[c], " ".join(cells[c])) for c in sorted(cells))
        figures.add(texts)
        out.append((row, TableRow(title, unit, label, texts)))
    return out


def labels_wrapped_as_values(rows: list[VisualRow]) -> None:
    """A "value" starting where row labels start is the wrapped end of a label ("$(10)" after
    "... net of tax of $0 and"): values never sit at the label margin. It becomes label text."""
    labelled = [r for r in rows if r.kind == "data" and r.label]
    if not labelled:
        return
    values_left = min(r.values[0].x0 for r in labelled)
    starts = [r.frags[0].x0 for r in labelled if r.frags[0].x0 < values_left - 20]
    if not starts:
        return
    margin = max(starts) + 2  # the deepest indent of a label
    for row in rows:
        if row.kind != "data" or row.values[0].x0 > margin:
            continue
        moved = list(itertools.takewhile(lambda f: f.x0 <= margin, row.values))
        row.label = " ".join([row.label, *(f.text for f in moved)]).strip()
        row.values = row.values[len(moved) :]
        if not row.values:
            row.kind, row.label = "text", ""


def labels_set_apart(rows: list[VisualRow]) -> list[VisualRow]:
    """A label line and an unlabelled line of figures printed a little lower (less than a
    line's height: baselines that jitter in a generated PDF) are one row."""
    out: list[VisualRow] = []
    for row in rows:
        above = out[-1] if out else None
        if (
            above is not None
            and above.kind == "text"
            and row.kind == "data"
            and not row.label
            and above.right < row.values[0].x0
            and above.centre - row.centre < 0.8 * _height(above, row)
        ):
            row.frags, row.label = above.frags + row.frags, above.text
            out[-1] = row
            continue
        out.append(row)
    return out


def _height(*rows: VisualRow) -> float:
    return max(w.y1 - w.y0 for r in rows for f in r.frags for w in f.words)


def without_footer(rows: list[VisualRow], end: int, stop: int, pitch: float) -> int:
    """The body's end before a last data row printed far below the others: a page footer
    ending in its page number ("Financial Statements  5") is no row of the table."""
    data = [i for i in range(end, stop) if rows[i].kind == "data"]
    if len(data) > 2 and rows[data[-2]].centre - rows[data[-1]].centre > 4 * pitch:
        return data[-1]
    return stop
