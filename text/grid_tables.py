"""Markdown / pipe tables (HTML via trafilatura, DOCX, PPTX, XLSX, CSV) as self-describing rows.

Extractors of structured formats know the cells but print a table as ``| a | b |`` lines, and a
body row alone (``| Cloud | 1,200 | 1,000 |``) loses its column headers once passages are cut.
``rows_from_pipes`` rewrites every pipe table of a text as ``tables.format_row`` lines: the
first column labels the row, the header rows (stacked, a spanning "Three Months Ended" over its
dates) name each value, the caption or the heading line above the table is the title and an
"(in millions)" there, or in a header cell, is the unit. Filings print "$", ")" and "%" in cells
of their own: they are joined to their values first, so columns line up with their headers.
"""

from __future__ import annotations

import re

from deepresearch.text.table_headers import (
    SENTENCE_END,
    UNIT_IN_TEXT,
    UNIT_RE,
    header_text,
    unit_text,
)
from deepresearch.text.tables import TableRow, format_row

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"^:?-{3,}:?$")
_VALUE = re.compile(r"^[$€£]?\s*\(?[-−]?\s*[$€£]?\s*\d[\d,]*(?:\.\d+)?\s*\)?\s*%?$|^[—–-]+$")
_CURRENCY = re.compile(r"^[$€£]\s*(?=[\d(—–-])")  # the unit line says the currency
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_MAX_TITLE_WORDS = 20
_SECTION_CLOSERS = ("total",)


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [" ".join(c.replace("\\|", "|").split()) for c in _CELL_SPLIT.split(body)]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(_SEPARATOR.match(c) for c in cells if c) and any(cells)


def caption_title_unit(text: str) -> tuple[str, str]:
    """The title and unit a caption line gives a table: the sentence introducing it, its
    "(in millions)" as the unit."""
    text = text.strip().lstrip("#").strip().rstrip(":")
    if UNIT_RE.match(text):
        return "", unit_text(text)
    text = SENTENCE_END.split(text)[-1]  # the sentence that introduces the table
    found = UNIT_IN_TEXT.search(text)
    if found is None:
        return text, ""
    return (text[: found.start()] + text[found.end() :]).strip(), unit_text(found.group(1))


def _join_signs(grid: list[list[str]]) -> list[list[str]]:
    """ "$" cells go (the unit says the currency); ")" and "%" cells join the value on their
    left; then columns empty in every row go, so each value sits under its header."""
    out = []
    for row in grid:
        cells = list(row)
        for j, cell in enumerate(cells):
            if cell in ("$", "€", "£"):
                cells[j] = ""
            elif cell in (")", "%", ")%") and j > 0:
                left = max((k for k in range(j) if cells[k]), default=None)
                if left is not None and left > 0:
                    cells[left] += cell
                    cells[j] = ""
        out.append(cells)
    width = max(len(r) for r in out)
    out = [r + [""] * (width - len(r)) for r in out]
    keep = [j for j in range(width) if j == 0 or any(r[j] for r in out)]
    return [[r[j] for j in keep] for r in out]


def _is_value(cell: str) -> bool:
    return bool(_VALUE.match(cell))


def _header_rows(grid: list[list[str]]) -> int:
    """How many leading rows are headers: the first row, then rows without a label whose
    cells are words or years ("2023 | 2022"), not values."""
    count = 1
    while count < len(grid) - 1:
        row = grid[count]
        rest = [c for c in row[1:] if c]
        if (row[0] and not UNIT_RE.match(row[0])) or not rest:
            break
        if any(_is_value(c) and not _YEAR.match(c) for c in rest):
            break
        count += 1
    return count


def _spread(row: list[str]) -> list[str]:
    """A spanning header ("Three Months Ended" followed by empty cells, as a colspan prints)
    heads every column up to the next header of its row."""
    out = list(row)
    for j in range(2, len(out)):
        if not out[j] and out[j - 1]:
            out[j] = out[j - 1]
    return out


def _shift(row: list[str], used: list[bool]) -> list[str]:
    """A header cell over a column the body leaves empty (a "$" column its colspan covered)
    moves to the unheaded value column beside it."""
    out = list(row)
    for j in range(1, len(out)):
        if out[j] and not used[j]:
            for k in (j + 1, j - 1):
                if 0 < k < len(out) and used[k] and not out[k]:
                    out[k], out[j] = out[j], ""
                    break
    return out


def grid_rows(grid: list[list[str]], caption: str = "") -> list[str]:
    """A table's body rows as formatted lines (rows with one cell stay plain text)."""
    grid = [row for row in grid if any(row)]
    if not grid:
        return []
    title, unit = caption_title_unit(caption)
    while len(grid) > 2 and grid[0][0] and not any(grid[0][1:]):  # caption or unit rows
        line_title, line_unit = caption_title_unit(next(c for c in grid[0] if c))
        title, unit = line_title or title, line_unit or unit
        grid = grid[1:]
    grid = _join_signs(grid)
    count = _header_rows(grid)
    heads, body = grid[:count], grid[count:]
    names: list[list[str]] = [[] for _ in grid[0]]
    used = [any(r[j] for r in body) for j in range(len(grid[0]))]
    for i, row in enumerate(heads):
        if row[0] and UNIT_RE.match(row[0]):
            unit = unit or unit_text(row[0])
        row = _shift(row, used)
        row = _spread(row) if i + 1 < len(heads) else row
        for j, cell in enumerate(row[1:], start=1):
            if cell:
                names[j].append(cell)
    out: list[str] = []
    section = ""
    for row in body:
        label = row[0]
        cells = tuple(
            (header_text(names[j]) or f"column {j}", _CURRENCY.sub("", value))
            for j, value in enumerate(row)
            if j > 0 and value
        )
        if not cells:
            section = label.rstrip(":").strip() if label else section
            out.append(" ".join(c for c in row if c))
            continue
        if section and label.lower() in ("total", "net", "subtotal"):
            label, section = f"{section} - {label}", ""
        elif section and label.lower().startswith(_SECTION_CLOSERS):
            section = ""
        elif section:
            label = f"{section} - {label}"
        out.append(format_row(TableRow(title, unit, label, cells)))
    return out


def _caption(out: list[str]) -> str:
    """The line above a table that names it (a heading, a unit line, an introducing sentence);
    a unit line right above a heading brings the heading along."""
    lines = [line for line in reversed(out[-6:]) if line.strip()][:2]
    if not lines:
        return ""
    first = lines[0].strip()
    if UNIT_RE.match(first.lstrip("#").strip()) and len(lines) > 1:
        above = lines[1].strip()
        if len(above.split()) <= _MAX_TITLE_WORDS or above.endswith(":"):
            return f"{above.rstrip(':')} ({unit_text(first)})"
    if first.endswith(".") or (len(first.split()) > _MAX_TITLE_WORDS and not first.endswith(":")):
        return ""
    return first


def rows_from_pipes(text: str) -> str:
    """``text`` with each block of ``|``-lines replaced by its formatted rows."""
    lines = text.split("\n")
    if not any(line.lstrip().startswith("|") for line in lines):
        return text
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        grid: list[list[str]] = []
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            cells = _cells(lines[i])
            if not _is_separator(cells):
                grid.append(cells)
            i += 1
        out.extend(grid_rows(grid, _caption(out)) if len(grid) > 1 else [" ".join(grid[0])])
    return "\n".join(out)
