"""Figures: whether a text states a quantity, and the numbers it states, comparable across scales.

``FIGURE`` is the cheap test (money, a thousands separator, a percent, a scale word): the scorer
favours such units when a question asks for a quantity (``has_figure``), and boilerplate
(certifications, disclaimers) is figure-free (``states_figure``). ``figures`` parses every stated number
with its decimals, scale and percent sign, so ``missing_figures`` can tell whether a passage states
a claim's figure at the same scale (``$81.8 billion`` matches ``81,797`` in a table "in millions",
``5%`` matches ``5 %``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from deepresearch.text.periods import MONTH

# A stated quantity: money, a thousands separator, a percent, a scale word.
FIGURE = re.compile(
    r"[$€£]\s?\d|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?%"
    r"|\d+(?:\.\d+)?\s*(?:million|billion|thousand|trillion|percent|bps|basis points)\b",
    re.IGNORECASE,
)
# Extensions for one caller each. The scorer counts a table's accounting negative "(12)" as an
# amount; boilerplate detection must not (footnote markers "(1)" open certifications and legal
# notes), and counts a bare decimal ("1.26") instead, which the scorer's tuning never included.
_PARENTHESIZED = re.compile(r"\(\d[\d,.]*\)")
_DECIMAL = re.compile(r"\d[\d,]*\.\d")
_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
}
_DATE_DAY = re.compile(rf"\b{MONTH}\s+\d{{1,2}}\b|\b\d{{1,2}}\s+{MONTH}\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w.,\-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    r"(?:\s?(%|percent\b|per cent\b)|\s?(thousand|million|billion|trillion|mn|bn|[kmb])\b)?"
    r"(?![\w-])",
    re.IGNORECASE,
)


def has_figure(text: str) -> bool:
    """A quantity, or an accounting negative: what the scorer favours for quantity questions."""
    return bool(FIGURE.search(text) or _PARENTHESIZED.search(text))


@lru_cache(maxsize=1 << 15)  # asked of every unit of every page read, run after run
def states_figure(text: str) -> bool:
    """A quantity or a decimal: what keeps a sentence from being figure-free boilerplate."""
    return bool(FIGURE.search(text) or _DECIMAL.search(text))


@dataclass(frozen=True)
class Figure:
    """One stated number: ``value`` as written (no separators), its decimals, scale and percent."""

    text: str
    value: float
    decimals: int
    scale: float = 1.0
    percent: bool = False


def figures(text: str) -> list[Figure]:
    """The figures of ``text``: numbers with a decimal part, a percent sign, a scale word, or at
    least two significant digits. Plain years (1900–2099), days inside dates (``June 25``) and
    numbers glued to letters (``Q3``, ``10-Q``) are not figures."""
    return list(_figures(text))


@lru_cache(maxsize=4096)
def _figures(text: str) -> tuple[Figure, ...]:
    """Memoized: a report's sentences and passages are checked against each other many times."""
    text = _DATE_DAY.sub(" ", text)
    out: list[Figure] = []
    for m in _NUMBER.finditer(text):
        integer, fraction, percent, scale_word = (
            m.group(1),
            m.group(2) or "",
            m.group(3),
            m.group(4),
        )
        digits = integer.replace(",", "")
        plain = not fraction and not percent and not scale_word and "," not in integer
        if plain and len(digits) == 4 and 1900 <= int(digits) <= 2099:
            continue
        significant = len(digits.lstrip("0"))
        if not (fraction or percent or scale_word or significant >= 2):
            continue
        out.append(
            Figure(
                text=m.group(0).strip(),
                value=float(digits + fraction),
                decimals=max(len(fraction) - 1, 0),
                scale=_SCALES.get((scale_word or "").lower(), 1.0),
                percent=bool(percent),
            )
        )
    return tuple(out)


def _same(claim: Figure, seen: Figure) -> bool:
    """Equal as written, or equal once rounded to the claim's precision and scale."""
    tolerance = 0.5 * 10.0**-claim.decimals + 1e-9
    if claim.percent or seen.percent:
        both = claim.percent and seen.percent
        unscaled = claim.scale == 1.0 and seen.scale == 1.0
        return (both or (unscaled and seen.percent)) and abs(seen.value - claim.value) < tolerance
    scales = [seen.scale]
    if seen.scale == 1.0 and (claim.scale != 1.0 or claim.value >= 1e4):
        scales += [1e3, 1e6]  # a filing table's figure "in thousands" / "in millions"
    return any(abs(seen.value * s / claim.scale - claim.value) < tolerance for s in scales)


def missing_figures(claim: str | list[Figure], passage: str | list[Figure]) -> list[str]:
    """The claim's figures that the passage does not state (as written in the claim)."""
    wanted = figures(claim) if isinstance(claim, str) else claim
    seen = figures(passage) if isinstance(passage, str) else passage
    return [f.text for f in wanted if not any(_same(f, s) for s in seen)]


__all__ = ["FIGURE", "Figure", "figures", "has_figure", "missing_figures", "states_figure"]
