"""Printed lines of positioned words: words grouped into visual rows (one baseline band) and
fragments (words with no column gap between them), each fragment a value or text, each row a
data row (a label and values), a header row (years) or text. Pure geometry over ``Word``
boxes (PDF points, y grows upwards); ``table_layout`` builds tables from these rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


def visual_rows(words: list[Word]) -> list[VisualRow]:
    """Words grouped into rows (same baseline band), top to bottom, split into fragments at gaps
    wider than about one character height."""
    rows: list[list[Word]] = []
    ref = ref_h = 0.0  # the current row's mean centre (cells set on jittering baselines)
    counted = 0  # the words that mean is taken over
    for word in sorted(words, key=lambda w: (-(w.y0 + w.y1) / 2, w.x0)):
        centre, height = (word.y0 + word.y1) / 2, max(word.y1 - word.y0, 1.0)
        if rows and abs(centre - ref) <= 0.45 * max(ref_h, height):
            rows[-1].append(word)
            if height >= 0.75 * ref_h:  # a superscript footnote mark does not move the row
                counted += 1
                ref += (centre - ref) / counted
            ref_h = max(ref_h, height)
            continue
        rows.append([word])
        ref, ref_h, counted = centre, height, 1
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


def classify(row: VisualRow) -> None:
    """Sets the row's kind, label and values."""
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
