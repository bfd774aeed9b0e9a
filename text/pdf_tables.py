"""A PDF page's text with its tables as self-describing rows (``tables.format_row``).

pdfium's plain text keeps a table row on one line but drops where each value sits, so the column
headers ("Three Months Ended / July 1, 2023") cannot be matched to values. Here the lines that
look tabular (a cheap text test) and the few lines above them get word boxes from pdfium's
character boxes; ``table_layout`` rebuilds the tables; each data row's lines are replaced by its
formatted row and every other line (prose, titles, headers) is kept as printed. Only the first
and last character of each word in candidate lines is measured: that keeps the cost near plain
text extraction (``bench/startup.py`` prints the ratio).
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from deepresearch.text.artefacts import SOFT_HYPHEN
from deepresearch.text.table_headers import PERIOD_HEAD, UNIT_RE, title_and_unit
from deepresearch.text.table_layout import Table, find_tables
from deepresearch.text.tables import format_row
from deepresearch.text.visual_rows import Word, classify, visual_rows

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WORD = re.compile(r"\S+")
# a line ending in a value: 1,234 / (265) / $ 12.5 / 41% / — ; the layout test decides the rest
_NUMERIC_TAIL = re.compile(
    r"(?:^|\s)(?:[$€£]\s*)?\(?[-−]?\d[\d,]*(?:\.\d+)?\)?\s*%?\s*$|\s[—–]\s*$"
)
_MAX_GAP = 4  # non-tabular lines allowed inside one candidate block (section labels, wraps)
_LOOKBACK = 24  # lines above a block searched for headers, unit line and title
_PROSE_WORDS = 40
_CAPTION_LINES = 5  # a caption at a page's foot: its last line and up to four wrapped above
_EDGE_LINES = 2  # lines at a page's top and foot where running heads and feet are printed
_RUNNING_PAGES = 2  # earlier pages that printed a line there: a running head
_DIGITS = re.compile(r"\d+")
_AMOUNT = re.compile(r"[$€£%]|\d,\d\d\d")


class DocumentTables:
    """Reads one document's pages in order: a table that runs onto the next page without
    repeating its headers takes them from the table it continues."""

    def __init__(self) -> None:
        self.last: Table | None = None
        self.overleaf: tuple[Table, ...] = ()  # the previous page's tables
        self.edges: Counter[tuple[str, int, str]] = (
            Counter()
        )  # lines seen at the top or foot of earlier pages

    def page_text(self, textpage: Any) -> str:
        """The page's text (lines joined by ``\\n``) with table rows formatted."""
        # PDFium marks a hyphen that breaks a word at a line's end as U+FFFE, a noncharacter
        # ("stock\ufffebased", "op\ufffetion"): a soft hyphen in the same place (char boxes are
        # found by index), which ``artefacts.mend_hyphens`` resolves with the whole document
        raw_text: str = textpage.get_text_range().replace("\ufffe", SOFT_HYPHEN)
        lines, starts = _split_lines(raw_text)
        running = self._running(lines)
        candidates = [
            i for i, line in enumerate(lines) if i not in running and _NUMERIC_TAIL.search(line)
        ]
        blocks = _blocks(candidates, lines, running)
        carried = self.last if self.last is not None and not self.last.columns else None
        replaced: dict[int, list[str]] = {}
        dropped: set[int] = set()
        found: list[Table] = []
        for first, last in blocks:
            which = [i for i in range(first, last + 1) if i not in running]
            words = _words(textpage, raw_text, lines, starts, which)
            for table in find_tables(words, self.last, (*self.overleaf, *found)):
                _apply(table, words, replaced, dropped)
                self.last = table
                found.append(table)
        self.overleaf = tuple(found)
        if carried is not None and self.last is carried:
            self.last = None  # a caption names the table overleaf, not one pages later
        self._carry(textpage, raw_text, lines, starts, running, set(replaced) | dropped)
        if not blocks:
            return "\n".join(lines)
        out: list[str] = []
        for i, line in enumerate(lines):
            if i in replaced:
                out.extend(replaced[i])
            elif i not in dropped:
                out.append(line)
        return "\n".join(out)

    def _carry(
        self,
        textpage: Any,
        text: str,
        lines: list[str],
        starts: list[int],
        running: set[int],
        table_lines: set[int],
    ) -> None:
        """When the page ends with the sentence introducing a table ("... were as follows:"),
        the table printed overleaf takes it as its caption (in place of the last table's). Its
        lines are read as a caption above a table is (``title_and_unit``)."""
        tail = [
            i
            for i, line in enumerate(lines)
            if i not in running and line.strip() and not line.strip().isdigit()
        ]
        if not tail or tail[-1] in table_lines or not lines[tail[-1]].rstrip().endswith(":"):
            return
        which = tail[-_CAPTION_LINES:]
        which = [i for i in which if i > max((j for j in which if j in table_lines), default=-1)]
        rows = visual_rows(_words(textpage, text, lines, starts, which))
        for row in rows:
            classify(row)
        title, unit = title_and_unit(rows)
        self.last = Table([], [], title=title, unit=unit)

    def _running(self, lines: list[str]) -> set[int]:
        """Lines that earlier pages printed at the same place at their top or foot (a running
        head such as "Table of Contents" or "Company | Form 10-Q | 12", page numbers aside):
        no table's title, header or row. Unit lines, period headers ("Three Months Ended") and
        lines holding amounts stay the tables' they are printed in."""
        filled = [i for i, line in enumerate(lines) if line.strip()]
        edge = {i: ("top", n) for n, i in enumerate(filled[:_EDGE_LINES])}
        edge |= {i: ("foot", n) for n, i in enumerate(reversed(filled[-_EDGE_LINES:]))}
        keys = {
            i: (*place, _DIGITS.sub("#", " ".join(lines[i].split()).lower()))
            for i, place in edge.items()
            if not _AMOUNT.search(lines[i])
            and not UNIT_RE.match(lines[i].strip())
            and not PERIOD_HEAD.search(lines[i])
        }
        running = {i for i, key in keys.items() if self.edges[key] >= _RUNNING_PAGES}
        self.edges.update(set(keys.values()))
        return running


def page_text(textpage: Any) -> str:
    """One page's text with its tables formatted (no earlier page to continue)."""
    return DocumentTables().page_text(textpage)


def _split_lines(text: str) -> tuple[list[str], list[int]]:
    lines: list[str] = []
    starts: list[int] = []
    pos = 0
    for match in _LINE_BREAK.finditer(text):
        lines.append(text[pos : match.start()])
        starts.append(pos)
        pos = match.end()
    lines.append(text[pos:])
    starts.append(pos)
    return lines, starts


def _blocks(candidates: list[int], lines: list[str], running: set[int]) -> list[tuple[int, int]]:
    """Line ranges holding at least two tabular-looking lines, widened upwards to the headers."""
    runs: list[list[int]] = []
    for i in candidates:
        if runs and i - runs[-1][-1] <= _MAX_GAP + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    blocks: list[tuple[int, int]] = []
    for run in runs:
        if len(run) < 2:
            continue
        first = run[0]
        while first > 0 and run[0] - first < _LOOKBACK and first - 1 not in running:
            above = lines[first - 1].rstrip()
            if len(above.split()) >= _PROSE_WORDS or (
                len(above.split()) >= 8 and above.endswith(".")
            ):
                break
            first -= 1
        last = min(run[-1] + 2, len(lines) - 1)
        if blocks and first <= blocks[-1][1]:
            blocks[-1] = (blocks[-1][0], last)
        else:
            blocks.append((first, last))
    return blocks


def _words(
    textpage: Any, text: str, lines: list[str], starts: list[int], which: Iterable[int]
) -> list[Word]:
    import pypdfium2.raw as pdfium_c

    handle = textpage.raw
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    words: list[Word] = []
    for i in which:
        for match in _WORD.finditer(lines[i]):
            a, b = starts[i] + match.start(), starts[i] + match.end() - 1
            if not pdfium_c.FPDFText_GetCharBox(handle, a, left, right, bottom, top):
                continue
            x0, y0, y1 = left.value, bottom.value, top.value
            if b != a and pdfium_c.FPDFText_GetCharBox(handle, b, left, right, bottom, top):
                y0, y1 = min(y0, bottom.value), max(y1, top.value)
            x1 = right.value
            if x1 < x0:  # right-to-left or rotated text: leave it to the plain text
                continue
            words.append(Word(match.group(), x0, x1, y0, y1, i))
    return words


def _apply(
    table: Table, words: list[Word], replaced: dict[int, list[str]], dropped: set[int]
) -> None:
    """Each data row's formatted line goes where its first text line was; lines whose words all
    went into the table go; a line with other words keeps those words."""
    used = {id(w) for visual in table.consumed for f in visual.frags for w in f.words}
    touched = {w.line for w in words if id(w) in used}
    leftovers: dict[int, list[str]] = {}
    for word in words:
        if word.line in touched and id(word) not in used:
            leftovers.setdefault(word.line, []).append(word.text)
    for visual, row in table.rows:
        replaced.setdefault(min(visual.lines), []).append(format_row(row))
    for line in touched:
        if line in leftovers:
            replaced.setdefault(line, []).insert(0, " ".join(leftovers[line]))
        elif line not in replaced:
            dropped.add(line)
