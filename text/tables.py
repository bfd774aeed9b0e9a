"""Self-describing table rows: one table row as a line that a reader (and the verifier) can
interpret on its own, with the table's title, its unit line and every value's column header.

PDF extraction loses column headers: ``Total net sales $ 81,797 $ 82,959`` says nothing about
which period a figure belongs to. Extractors that reconstruct a table emit each row as
``format_row(...)``; search, evidence selection and the answer composer read it back with
``parse_row``. The format is plain text so it survives indexing, quoting and citation checks:

    <title> (<unit>): <label>: <header> = <value>; <header> = <value>

``(<unit>)`` is omitted when the table states none; without a title the line starts with
``(<unit>): `` or, with neither, with the label.
Values keep their printed form (``81,797``, ``(265)``, ``—``, ``12.5%``); ``$`` is dropped as a
column of its own and kept nowhere, the unit line says the currency and scale.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# "; " and " = " separate cells; they are escaped out of headers and values by replacement so
# that parse_row(format_row(r)) == r for any row a table can produce.
_CELL_SEP = "; "
_KV_SEP = " = "
_ROW_RE = re.compile(
    r"^(?:(?P<title>[^:\n]*?)(?:(?:^| )\((?P<unit>[^()\n]*)\))?: )?"
    r"(?P<label>[^:\n]+?): (?P<cells>.+ = .+)$"
)


@dataclass(frozen=True)
class TableRow:
    """One table row with everything needed to read it alone."""

    title: str  # the table's caption or heading ("" when none is found)
    unit: str  # the unit line, e.g. "in millions" or "in millions, except per-share amounts"
    label: str  # the row label, e.g. "Total net sales"
    cells: tuple[tuple[str, str], ...]  # (column header, value as printed)


def _clean(text: str) -> str:
    text = " ".join(text.split())
    return text.replace(_CELL_SEP, ", ").replace(_KV_SEP, " - ").replace(":", " -")


def format_row(row: TableRow) -> str:
    """The row as one self-describing line (see the module docstring)."""
    cells = _CELL_SEP.join(
        f"{_clean(header) or '(column)'}{_KV_SEP}{_clean(value) or '—'}"
        for header, value in row.cells
    )
    head = ""
    title, unit = _clean(row.title), _clean(row.unit).replace("(", "").replace(")", "")
    if title or unit:
        head = f"{title} ({unit}): ".lstrip() if unit else f"{title}: "
    return f"{head}{_clean(row.label) or '(row)'}: {cells}"


@functools.lru_cache(maxsize=1 << 15)  # asked of every line of every page read (rows are frozen)
def parse_row(text: str) -> TableRow | None:
    """The ``TableRow`` a ``format_row`` line holds, or None for any other text."""
    match = _ROW_RE.match(text.strip())
    if match is None:
        return None
    cells: list[tuple[str, str]] = []
    for part in match["cells"].split(_CELL_SEP):
        header, sep, value = part.partition(_KV_SEP)
        if not sep:
            return None
        cells.append((header.strip(), value.strip()))
    return TableRow(
        title=(match["title"] or "").strip(),
        unit=(match["unit"] or "").strip(),
        label=match["label"].strip(),
        cells=tuple(cells),
    )
