"""Markdown / pipe tables (HTML via trafilatura, DOCX, PPTX, XLSX, CSV) as self-describing rows.

Extractors of structured formats know the cells but print a table as ``| a | b |`` lines, and a
body row alone (``| Cloud | 1,200 | 1,000 |``) loses its column headers once passages are cut.
``rows_from_pipes`` rewrites every pipe table of a text as ``tables.format_row`` lines: the
first column labels the row, the header row names each value, the caption or the heading line
just above the table is the title and an "(in millions)" there is the unit.
"""

from __future__ import annotations

import re

from deepresearch.text.table_headers import UNIT_RE
from deepresearch.text.tables import TableRow, format_row

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"^:?-{3,}:?$")
_UNIT_IN_TEXT = re.compile(
    r"\(((?:dollars |amounts |\$ )?in (?:millions|thousands|billions)[^()]*)\)", re.I
)
_MAX_TITLE_WORDS = 20


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [" ".join(c.replace("\\|", "|").split()) for c in _CELL_SPLIT.split(body)]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(_SEPARATOR.match(c) for c in cells if c) and any(cells)


def _title_unit(text: str) -> tuple[str, str]:
    text = text.strip().lstrip("#").strip().rstrip(":")
    if UNIT_RE.match(text):
        return "", text.strip("()").strip()
    found = _UNIT_IN_TEXT.search(text)
    if found is None:
        return text, ""
    return (text[: found.start()] + text[found.end() :]).strip(), found.group(1).strip()


def grid_rows(grid: list[list[str]], caption: str = "") -> list[str]:
    """A table's body rows as formatted lines (rows with one cell stay plain text)."""
    grid = [row for row in grid if any(row)]
    if not grid:
        return []
    if len(grid) > 2 and sum(1 for c in grid[0] if c) == 1:  # a caption row spanning the table
        caption = next(c for c in grid[0] if c)
        grid = grid[1:]
    title, unit = _title_unit(caption)
    header, body = grid[0], grid[1:]
    out: list[str] = []
    for row in body:
        cells = tuple(
            (header[j] if j < len(header) and header[j] else f"column {j + 1}", value)
            for j, value in enumerate(row)
            if j > 0 and value
        )
        if cells:
            out.append(format_row(TableRow(title, unit, row[0], cells)))
        else:
            out.append(" ".join(c for c in row if c))
    return out


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
        caption = next((line for line in reversed(out) if line.strip()), "")
        if len(caption.split()) > _MAX_TITLE_WORDS or caption.rstrip().endswith("."):
            caption = ""
        out.extend(grid_rows(grid, caption) if len(grid) > 1 else [" ".join(grid[0])])
    return "\n".join(out)
