"""Column headers, title and unit of a table rebuilt by ``table_layout``: which lines above the
data are its header block (a heading or running head centred on the whole page is caption, not
header), the caption line above the headers and the unit line ("(In millions)") wherever the
table states it. Which header fragment heads which column is ``header_columns``'.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from deepresearch.text.periods import MONTHS

if TYPE_CHECKING:
    from deepresearch.text.visual_rows import VisualRow

UNIT_RE = re.compile(
    r"^\(?\s*(?:\w+\s+)?(?:dollars\s+|amounts\s+|\$\s*)?in\s+(?:millions|thousands|billions)\b",
    re.IGNORECASE,
)
UNIT_IN_TEXT = re.compile(
    r"\(((?:dollars |amounts |\$ )?in (?:millions|thousands|billions)[^()]*)\)", re.I
)
# a sentence's end, maybe inside quotes: "... items." The / "... Note 4 — Commitments.” The
SENTENCE_END = re.compile(r"(?<=[a-z0-9)])[.!?][”\"’]? (?=[A-Z“\"])")
_UNAUDITED = re.compile(r"\(?\s*\b(?:unaudited|audited)\b\s*\)?", re.IGNORECASE)
_DATE = re.compile(
    r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}, \d{4}\b"
)
_UNIT_WORD = re.compile(
    r"\b(?:In|Millions|Thousands|Billions|Dollars|Amounts|Except|Per|Share|Shares|And)\b"
)
_NOTE_MARK = re.compile(r"^(?:\(\d{1,2}\)|\*+|\d\s)\s*\S")
_TRAILING_PAREN = re.compile(r"\s*\((?:unaudited|continued|audited)\)\s*$", re.IGNORECASE)
_MAX_TITLE_WORDS = 20
_MAX_TITLE_CHARS = 220
FLUSH = 6.0  # a header set flush with a column's edge: a negative's ")" hangs past it
CENTRED = 6.0  # a header centred over a group of columns: its centre within this of theirs
PERIOD_HEAD = re.compile(r"\b(?:weeks|months|quarters?|years?)\s+end(?:ed|ing)\b", re.I)


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
        abs(frag.x1 - columns[b][1]) <= FLUSH
        or abs(middle - columns[a][0] - columns[b][1]) <= 2 * CENTRED
        for a in range(len(columns))
        for b in range(a, len(columns))
    )


def clean_title(text: str) -> str:
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
        elif core.lower() in MONTHS:
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


def _wraps_into_sentence_below(row: VisualRow, margins: tuple[float, float]) -> bool:
    """A wrapped line of the sentence below it: it runs from the margin (or a paragraph's
    indent) to the margin and ends no sentence (a heading above the sentence is short,
    centred or in capitals: it stays apart)."""
    text = row.text.rstrip()
    return (
        row.frags[0].x0 <= margins[0] + 36
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
    while start > 0 and i - start < 4 and _wraps_into_sentence_below(above[start - 1], margins):
        start -= 1
    text = " ".join(r.text.strip() for r in above[start : i + 1]).rstrip(":").strip()
    text = SENTENCE_END.split(text)[-1]  # the introducing sentence alone
    fragment = text[:1].islower() or bool(_NOTE_MARK.match(text))  # or the note of a table
    return "" if fragment or len(text.split()) > 3 * _MAX_TITLE_WORDS else text


def title_and_unit(above: list[VisualRow]) -> tuple[str, str]:
    """The caption above the headers: a unit line ("(In millions)"), then a heading or the
    sentence introducing the table ("... were as follows (in millions):")."""
    unit, wrapped = "", False
    i = len(above)
    while i > 0:
        i -= 1
        text = above[i].text.strip()
        if UNIT_RE.match(text):
            unit = unit or unit_text(text)
            wrapped = text.endswith(":")  # "(dollars in millions):" ends the sentence above
            continue
        if _UNAUDITED.fullmatch(text):  # "(unaudited)" under the caption names nothing
            continue
        if _NOTE_MARK.match(text):  # a note under the table above ("(1) Includes ...")
            return "", unit
        if text.endswith((":", ".")) or text[:1].islower() or wrapped:  # a sentence
            text = _sentence(above, i)
        elif is_prose(above[i]) or len(text.split()) > _MAX_TITLE_WORDS:
            return "", unit
        if wrapped and text.count("(") > text.count(")"):  # "... (net" + "income in ...):"
            cut = text.rfind("(")
            unit, text = f"{text[cut + 1 :].strip()} {unit}".strip(), text[:cut].strip()
        found = UNIT_IN_TEXT.search(text)
        if found:
            unit = unit or unit_text(found.group(1))
            text = (text[: found.start()] + text[found.end() :]).strip()
        return clean_title(text), unit
    return "", unit
