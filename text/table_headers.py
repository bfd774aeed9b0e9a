"""Column headers, title and unit of a table rebuilt by ``table_layout``: which lines above the
data are its header block (a heading or running head centred on the whole page is caption, not
header), which header fragment sits over which column (spanning, centred or right-aligned), the
caption line above the headers and the unit line ("(In millions)") wherever the table states it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepresearch.text.table_layout import Frag, VisualRow

UNIT_RE = re.compile(
    r"^\(?\s*(?:\w+\s+)?(?:dollars\s+|amounts\s+|\$\s*)?in\s+(?:millions|thousands|billions)\b",
    re.IGNORECASE,
)
_UNIT_IN_TEXT = re.compile(
    r"\(((?:dollars |amounts |\$ )?in (?:millions|thousands|billions)[^()]*)\)", re.I
)
# a sentence's end, maybe inside quotes: "... items." The / "... Note 4 — Commitments.” The
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)])[.!?][”\"’]? (?=[A-Z“\"])")
_UNAUDITED = re.compile(r"\(?\s*\b(?:unaudited|audited)\b\s*\)?", re.IGNORECASE)
_DATE = re.compile(
    r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}, \d{4}\b"
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_PERIOD = re.compile(r"\b(?:weeks|months|quarters?|years?)\s+end(?:ed|ing)\b", re.IGNORECASE)
_MONTHS = frozenset(
    {
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december"),
    }
)
_UNIT_WORD = re.compile(
    r"\b(?:In|Millions|Thousands|Billions|Dollars|Amounts|Except|Per|Share|Shares|And)\b"
)
_NOTE_MARK = re.compile(r"^(?:\(\d{1,2}\)|\*+|\d\s)\s*\S")
_TRAILING_PAREN = re.compile(r"\s*\((?:unaudited|continued|audited)\)\s*$", re.IGNORECASE)
_MAX_TITLE_WORDS = 20
_MAX_TITLE_CHARS = 220
_FLUSH = 6.0  # a header set flush with a column's edge: a negative's ")" hangs past it


def slot_of(frag: Frag, slots: list[tuple[float, float]]) -> int:
    centre = (frag.x0 + frag.x1) / 2
    return min(range(len(slots)), key=lambda i: _distance(centre, slots[i]))


def _distance(x: float, span: tuple[float, float]) -> float:
    return 0.0 if span[0] <= x <= span[1] else min(abs(x - span[0]), abs(x - span[1]))


def _overlap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, min(frag.x1, span[1]) - max(frag.x0, span[0]))


def _gap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, span[0] - frag.x1, frag.x0 - span[1])


def assign_headers(
    row: VisualRow,
    slots: list[tuple[float, float]],
    columns: list[tuple[float, float]],
    out: list[list[Frag]],
    top: bool,
    label_left: float = 0.0,
) -> str:
    """Each column takes the fragment of this header row that overlaps it most: a spanning
    header ("Three Months Ended", centred or right-aligned over its columns) reaches every
    column it touches. Returns a unit found among the fragments ("(In millions)") if any."""
    unit = ""
    frags = []
    stubs: list[Frag] = []
    for frag in row.frags:
        if UNIT_RE.match(frag.text):
            unit = unit_text(frag.text)
        elif frag.x1 >= slots[0][0]:
            frags.append(frag)
        elif frag.x0 <= label_left + 20:  # a header over an inner text column heads no value
            stubs.append(frag)
    used: set[int] = set()
    for i, slot in enumerate(slots):
        best = max(frags, key=lambda f: _overlap(f, slot), default=None)
        if best is not None and _overlap(best, slot) > 1.0:
            out[i].append(best)
            used.add(id(best))
    for frag in frags:  # over no column's territory: the nearest column
        if id(frag) not in used:
            out[slot_of(frag, slots)].append(frag)
    if top and 2 <= len(frags) < len(columns):  # spanning headers: each column the nearest
        tiled = _right_tiled(frags, columns)
        for i, span in enumerate(columns):
            if not out[i]:
                out[i].append(tiled[i] if tiled else min(frags, key=lambda f: _gap(f, span)))
    dated = [bool(cell) and all(_dated([f.text]) for f in cell) for cell in out]
    for i, cell in enumerate(out if stubs and any(dated) else []):
        if dated[i] or not cell:  # a stub over the labels ("Three Months Ended June 30,")
            cell[:0] = stubs  # heads the dates of its row; over other headers it names the
    return unit  # label column ("Period") and heads none


def _right_tiled(frags: list[Frag], columns: list[tuple[float, float]]) -> list[Frag] | None:
    """Each column's spanning header when the headers are set flush with the right edge of the
    last column of equal groups that tile the columns ("Three Months Ended" over the second of
    two year columns, "Six Months Ended" over the fourth); None for any other layout."""
    frags = sorted(frags, key=lambda f: f.x0)
    size, rest = divmod(len(columns), len(frags))
    if rest or size < 2:
        return None
    for k, frag in enumerate(frags):
        if abs(frag.x1 - columns[size * (k + 1) - 1][1]) > _FLUSH:
            return None
    return [frags[i // size] for i in range(len(columns))]


def header_block(
    above: list[VisualRow],
    first: VisualRow,
    slots: list[tuple[float, float]],
    columns: list[tuple[float, float]],
    pitch: float,
    label_left: float,
) -> tuple[list[VisualRow], str, int]:
    """The column header rows right above the data row ``first`` and the unit line among them;
    the rows of ``above`` before the returned index are the caption's. The block ends at a
    row far above, a text row, a unit line over headers, or a heading (``_heading``)."""
    heads: list[VisualRow] = []
    i, unit, below = len(above), "", first
    while i > 0:
        row = above[i - 1]
        if row.centre - below.centre > 3 * pitch:  # a page's running head is no column header
            break
        if unit_row(row):  # the unit line: under the headers, or a stub among them
            if heads and not (row.right < slots[0][0] and i >= 2 and above[i - 2].kind == "head"):
                break
            unit = unit or unit_text(row.text)
        elif row.kind != "head" or _heading(row, heads, slots, columns, label_left, pitch):
            break
        else:
            heads.insert(0, row)
        i, below = i - 1, row
    return heads, unit, i


def _heading(
    row: VisualRow,
    heads: list[VisualRow],
    slots: list[tuple[float, float]],
    columns: list[tuple[float, float]],
    label_left: float,
    pitch: float,
) -> bool:
    """A heading or running head, not a column header: one line centred on the whole table
    (labels and values) that is set apart from the header lines below it, starts left of the
    first column's territory or spans no group of columns (neither centred on one nor flush
    with its right edge). A line centred over header words under it is a header of its own
    ("Common Stock and Capital" over "of Par Value", "Outstanding" over "Shares  Amount")."""
    frags = [f for f in row.frags if not UNIT_RE.match(f.text)]
    if len(frags) != 1:
        return False
    (frag,) = frags
    middle = frag.x0 + frag.x1  # twice the centre, as the sums below
    width = columns[-1][1] - label_left
    if abs(middle - label_left - columns[-1][1]) / 2 > max(12.0, 0.04 * width):
        return False
    if heads and row.centre - heads[0].centre > 1.3 * pitch:  # a blank line under it
        return True
    for head in heads:  # centred over header words below it (over one or a run of them)
        below = [f for f in head.frags if not UNIT_RE.match(f.text)]
        if any(abs(middle - f.x0 - g.x1) <= 6 for i, f in enumerate(below) for g in below[i:]):
            return False
    return frag.x0 < slots[0][0] or not any(
        abs(frag.x1 - columns[b][1]) <= _FLUSH or abs(middle - columns[a][0] - columns[b][1]) <= 12
        for a in range(len(columns))
        for b in range(a, len(columns))
    )


def staggered(heads: list[VisualRow], slots: list[tuple[float, float]]) -> bool:
    """Column headers of different heights, bottom-aligned: a column the top header row leaves
    empty gets its own words lower down ("Total Number / of Shares / Purchased" beside a taller
    header). The top row's words then head their own columns only, spanning none."""

    def over(row: VisualRow) -> list[Frag]:
        return [f for f in row.frags if f.x1 >= slots[0][0] and not UNIT_RE.match(f.text)]

    if all(_dated([f.text]) or _PERIOD.search(f.text) for f in over(heads[0])):
        return False  # dates or periods over their columns' own headers span as printed
    top = {slot_of(f, slots) for f in over(heads[0])}
    return any(
        slot_of(f, slots) not in top and not _dated([f.text]) for r in heads[1:] for f in over(r)
    )


def share_in_spans(level: list[list[Frag]], parents: list[Frag | None]) -> None:
    """Under a spanning header, a lone sub-header aligned with it covers the whole span:
    "March 31," right-aligned under "Three Months Ended" belongs to both of its columns."""
    groups: dict[int, list[int]] = {}
    for i, parent in enumerate(parents):
        if parent is not None:
            groups.setdefault(id(parent), []).append(i)
    for members in groups.values():
        parent = parents[members[0]]
        lone = {id(f): f for i in members for f in level[i]}
        if parent is None or len(members) < 2 or len(lone) != 1:
            continue
        (frag,) = lone.values()
        right = abs(frag.x1 - parent.x1) <= 3
        centre = abs(frag.x0 + frag.x1 - parent.x0 - parent.x1) <= 6
        if right or centre:
            for i in members:
                level[i] = [frag]


def _dated(parts: list[str]) -> bool:
    text = " ".join(parts)
    return bool(_YEAR.search(text)) or any(w.strip(",.").lower() in _MONTHS for w in text.split())


def _only_dates(parts: list[str]) -> bool:
    """Dates alone ("July 1," / "2023"): no period of their own ("Three Months Ended ...")."""
    words = " ".join(parts).replace(",", " ").split()
    return _dated(parts) and all(_month(w) or w.isdigit() for w in words)


def _month(word: str) -> bool:
    word = word.lower().strip(".")
    return word in _MONTHS or (3 <= len(word) <= 4 and any(m.startswith(word) for m in _MONTHS))


def spread_period(headers: list[list[str]], tops: list[Frag | None]) -> None:
    """A lone top header ("Three Months Ended", right-aligned over the second of its two date
    columns) also heads the dated columns next to the ones it overlaps: a date column is never
    left without the period it belongs to. Non-date columns ("Change") and columns under a
    period of their own (a "Three Months Ended" set a little lower) are left alone, unless the
    lone header is a date itself: then it dates the whole table."""
    found = {id(t): t for t in tops if t is not None}
    if len(found) != 1:
        return
    (top,) = found.values()
    covered = [i for i, t in enumerate(tops) if t is top]
    whole = _dated([top.text])  # "June 25, 2022" over a table: the date of every column
    if not whole and not any(_dated(headers[i][1:]) for i in covered):
        return
    for step in (-1, 1):
        i = (covered[0] if step < 0 else covered[-1]) + step
        while 0 <= i < len(tops) and tops[i] is None and (whole or _only_dates(headers[i])):
            headers[i].insert(0, top.text)
            i += step


def _clean_title(text: str) -> str:
    text = _TRAILING_PAREN.sub("", " ".join(text.split())).strip()
    if len(text) > _MAX_TITLE_CHARS:
        text = text[: text.rfind(" ", 0, _MAX_TITLE_CHARS)] + " …"
    if text.isupper():
        text = _sentence_case(text)
    return text


def _sentence_case(text: str) -> str:
    """An all-capitals heading in sentence case; months and roman numerals keep capitals."""
    words = []
    for word in text.split():
        core = word.strip(",.:;()")
        if re.fullmatch(r"[IVX]{1,4}", core):
            words.append(word)
        elif core.lower() in _MONTHS:
            words.append(word.capitalize())
        else:
            words.append(word.lower())
    out = " ".join(words)
    return out[:1].upper() + out[1:]


def header_text(parts: list[str]) -> str:
    """A column's header from its stacked fragments, without "(Unaudited)" or "(1)" marks."""
    text = _UNAUDITED.sub("", " ".join(parts))
    return " ".join(re.sub(r"(?:\s*\(\d{1,2}\))+$", "", text).split())  # no footnote marks


def lone_header(title: str) -> str:
    """The header of a table's single unheaded value column: the one date its title names
    ("... as of June 25, 2022 ..."), else "value"."""
    dates = set(_DATE.findall(title))
    return dates.pop() if len(dates) == 1 else "value"


def unit_text(text: str) -> str:
    unit = " ".join(text.strip().strip("()").split()).rstrip(")").strip()
    unit = re.sub(r"[;,]?\s*\(?unaudited\)?", "", unit, flags=re.IGNORECASE).strip(" ;,:-")
    return _UNIT_WORD.sub(lambda m: m.group().lower(), unit)


def is_prose(row: VisualRow) -> bool:
    return row.kind == "text" and (
        len(row.text.split()) >= 14
        or (len(row.frags) == 1 and row.text.endswith(".") and len(row.text.split()) >= 8)
    )


def unit_row(row: VisualRow) -> bool:
    """A caption line that only states the unit ("(In millions, except per-share amounts)")."""
    return len(row.frags) == 1 and bool(UNIT_RE.match(row.text))


def _continues(row: VisualRow, margins: tuple[float, float]) -> bool:
    """A wrapped line of the sentence below it: it runs from margin to margin and ends no
    sentence (a heading above the sentence is short, centred or in capitals: it stays apart)."""
    text = row.text.rstrip()
    return (
        row.frags[0].x0 <= margins[0] + 10
        and row.right >= margins[1] - 30
        and len(text.split()) >= 6
        and not text.endswith((".", ":"))
        and not text.isupper()
    )


def _sentence(above: list[VisualRow], i: int) -> str:
    """The last sentence ending at line ``i``, its wrapped lines joined; "" when its start is
    out of reach (a fragment is no title)."""
    left = min(r.frags[0].x0 for r in above)  # the text's margins: lines set flush left
    margins = (left, max(r.right for r in above if r.frags[0].x0 <= left + 10))
    start = i
    while start > 0 and i - start < 4 and _continues(above[start - 1], margins):
        start -= 1
    text = " ".join(r.text.strip() for r in above[start : i + 1]).rstrip(":").strip()
    text = _SENTENCE_END.split(text)[-1]  # the introducing sentence alone
    fragment = text[:1].islower() or bool(_NOTE_MARK.match(text))  # or the note of a table
    return "" if fragment or len(text.split()) > 3 * _MAX_TITLE_WORDS else text


def title_and_unit(above: list[VisualRow]) -> tuple[str, str]:
    """The caption above the headers: a unit line ("(In millions)"), then a heading or the
    sentence introducing the table ("... were as follows (in millions):")."""
    unit = ""
    i = len(above)
    while i > 0:
        i -= 1
        text = above[i].text.strip()
        if UNIT_RE.match(text):
            unit = unit or unit_text(text)
            continue
        if _UNAUDITED.fullmatch(text):  # "(unaudited)" under the caption names nothing
            continue
        if _NOTE_MARK.match(text):  # a note under the table above ("(1) Includes ...")
            return "", unit
        if text.endswith((":", ".")) or text[:1].islower():  # a sentence, maybe wrapped
            text = _sentence(above, i)
        elif is_prose(above[i]) or len(text.split()) > _MAX_TITLE_WORDS:
            return "", unit
        found = _UNIT_IN_TEXT.search(text)
        if found:
            unit = unit or unit_text(found.group(1))
            text = (text[: found.start()] + text[found.end() :]).strip()
        return _clean_title(text), unit
    return "", unit
