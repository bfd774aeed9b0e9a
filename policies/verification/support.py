"""How well a passage supports a claim: figures must match, content words must be covered.

A lexical, entailment-lite check: no model, deterministic, cheap enough to run on every sentence of
every report. Figures (``text.figures``) are hard evidence — every figure a claim states must appear in the passage,
at the same scale (``$81.8 billion`` matches ``81,797`` in a table "in millions", ``5%`` matches
``5 %``) — and the support score is the weighted share of the claim's content words and figures the
passage holds. The same score picks the best-supporting window of a source for a claim, so a
researcher can attach that passage (and where it is) as the claim's evidence.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

from deepresearch.text.figures import Figure, figures, missing_figures
from deepresearch.text.names import names_someone
from deepresearch.text.periods import PERIOD_RE
from deepresearch.text.sentences import build_units
from deepresearch.text.terms import terms

FIGURE_WEIGHT = 2.0  # a matching figure is stronger evidence than any one word


def needs_citation(sentence: str) -> bool:
    """A sentence stating a figure, a date or period, or a name must cite a source."""
    return bool(figures(sentence) or PERIOD_RE.search(sentence) or names_someone(sentence))


def content_terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` (numbers are figures, checked on their own)."""
    return list(_content_terms(text))


@lru_cache(maxsize=4096)
def _content_terms(text: str) -> tuple[str, ...]:
    return tuple(t for t in dict.fromkeys(terms(text)) if len(t) > 1 and not t[0].isdigit())


@lru_cache(maxsize=4096)
def _term_set(text: str) -> frozenset[str]:
    return frozenset(terms(text))


class Weights:
    """IDF-ish word weights over a set of passages, clipped so no word dominates; a word that no
    passage holds weighs 1 (it is unsupported, not rare)."""

    def __init__(self, passages: Iterable[str] = ()) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        self._memo: dict[str, float] = {}
        for text in passages:
            self.n += 1
            self.df.update(set(_content_terms(text)))

    def __call__(self, term: str) -> float:
        weight = self._memo.get(term)
        if weight is None:
            df = self.df.get(term, 0)
            weight = (
                1.0 if not df or self.n < 3 else min(2.0, max(0.5, math.log(1.0 + self.n / df)))
            )
            self._memo[term] = weight
        return weight


@dataclass(frozen=True)
class Support:
    score: float  # 0..1: weighted share of the claim's words and figures found in the passage
    missing: tuple[str, ...]  # claim figures the passage does not state

    def passes(self, threshold: float) -> bool:
        return not self.missing and self.score >= threshold


@dataclass(frozen=True)
class _Wanted:
    """A claim's content words with their weights, and its figures: a claim is scored against
    every passage its sources hold (every window of a source), so it is weighed once."""

    weighed: tuple[tuple[str, float], ...]
    figures: list[Figure]
    total: float

    @classmethod
    def of(cls, words: Iterable[str], claim_figures: list[Figure], weigh: Weights) -> _Wanted:
        weighed = tuple((t, weigh(t)) for t in words)
        total = sum(w for _, w in weighed) + FIGURE_WEIGHT * len(claim_figures)
        return cls(weighed, claim_figures, total)


def _score(
    wanted: _Wanted, have: set[str] | frozenset[str], missing: list[str] | tuple[str, ...]
) -> Support:
    if wanted.total == 0:
        return Support(1.0, ())
    found = sum(w for t, w in wanted.weighed if t in have)
    found += FIGURE_WEIGHT * (len(wanted.figures) - len(missing))
    return Support(round(found / wanted.total, 4), tuple(missing))


def support(claim: str, passage: str, weights: Weights | None = None) -> Support:
    """How well ``passage`` supports ``claim``."""
    return supports(claim, [passage], weights)[0]


def supports(claim: str, passages: Iterable[str], weights: Weights | None = None) -> list[Support]:
    """``support`` of ``claim`` by each of ``passages``, the claim analysed once."""
    wanted = _Wanted.of(_content_terms(claim), figures(claim), weights or Weights())
    return [_score(wanted, _term_set(passage), _missing(claim, passage)) for passage in passages]


# Every claim is checked against every passage its sources hold, and again each time the partial
# report is rendered: which figures a passage lacks is kept by the two texts (pure, exact).
@lru_cache(maxsize=4096)
def _missing(claim: str, passage: str) -> tuple[str, ...]:
    return tuple(missing_figures(claim, passage))


@dataclass(frozen=True)
class _Units:
    texts: tuple[str, ...]
    terms: tuple[frozenset[str], ...]
    figures: tuple[tuple[Figure, ...], ...]
    weights: Weights
    joined: str = ""  # the units joined by spaces, where a claim of several is found verbatim
    starts: tuple[int, ...] = ()  # each unit's offset in ``joined``


@lru_cache(maxsize=32)
def _units(text: str) -> _Units:
    """A source's sentences / table rows, analysed once however many claims cite it."""
    texts = tuple(u.text for u in build_units([(1, text)]))
    starts = tuple(itertools.accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
    return _Units(
        texts,
        tuple(frozenset(terms(t)) for t in texts),
        tuple(tuple(figures(t)) for t in texts),
        Weights(texts),
        " ".join(texts),
        starts,
    )


def best_passage(claim: str, text: str, max_chars: int = 600, widest: int = 3) -> str:
    """The window of up to ``widest`` consecutive sentences / table rows of ``text`` that best
    supports ``claim`` (figures first, then score, then the shorter window)."""
    units = _units(text)
    if not units.texts:
        return " ".join(text.split())[:max_chars]
    wanted, claim_figures = content_terms(claim), figures(claim)
    weighed = _Wanted.of(wanted, claim_figures, units.weights)  # once for every window
    flat = " ".join(claim.split())
    run = _quoted(units, flat)
    if run is not None:  # a quoted claim: its own sentences are the passage
        i, stop = run
        quoted = " ".join(units.texts[i:stop])
        missing = missing_figures(
            claim_figures, [f for k in range(i, stop) for f in units.figures[k]]
        )
        have = frozenset().union(*units.terms[i:stop])
        s = _score(weighed, have, missing)
        if not s.missing and s.score >= 1.0:
            return _clip(quoted, flat, 2 * max_chars)
    relevant = [
        i
        for i in range(len(units.texts))
        if units.terms[i].intersection(wanted) or units.figures[i]
    ] or [0]
    best: tuple[float, float, int, int] | None = None
    best_text = units.texts[0]
    for size in range(1, widest + 1):
        starts = sorted({max(0, i - off) for i in relevant for off in range(size)})
        for start in starts:
            stop = min(start + size, len(units.texts))
            if stop - start < size and size > 1:
                continue
            window = " ".join(units.texts[start:stop])
            if size > 1 and len(window) > max_chars:
                continue
            have = frozenset().union(*units.terms[start:stop])
            seen = [f for figs in units.figures[start:stop] for f in figs]
            s = _score(weighed, have, missing_figures(claim_figures, seen))
            key = (float(not s.missing), s.score, -size, -start)
            if best is None or key > best:
                best, best_text = key, window
        if best is not None and best[0] and best[1] >= 1.0:
            break  # a single sentence already holds everything: no wider window can do better
    return _clip(best_text, " ".join(claim.split()), 2 * max_chars)


def _quoted(units: _Units, claim: str) -> tuple[int, int] | None:
    """The run of sentences (``units.texts[i:stop]``) that holds ``claim`` verbatim, or None: a
    sentence, or a sentence with the rest of its paragraph, which may begin inside a unit (a
    heading the extractor ran into its first sentence) or end before one does (a line another
    source repeats was left out of the researcher's reading)."""
    at = units.joined.find(claim) if claim else -1
    if at < 0:
        return None
    first = bisect.bisect_right(units.starts, at) - 1
    stop = bisect.bisect_left(units.starts, at + len(claim))
    return first, max(stop, first + 1)


def _clip(window: str, claim: str, cap: int) -> str:
    """At most ``cap`` characters of ``window``, but never less than a claim quoted in it: a long
    table row quoted whole must keep every figure its evidence is checked for."""
    if len(window) <= cap:
        return window
    at = window.find(claim) if claim else -1
    if at < 0:
        return window[:cap]
    start = max(0, min(at, at + len(claim) - cap))
    return window[start : start + max(cap, len(claim))]


PAGE_LABEL = re.compile(r",\s*((?:p\.|slide|sheet|section)\s+\d+)$")


def text_fragment(url: str, quote_text: str, words: int = 4) -> str:
    """A link that scrolls to and highlights ``quote_text`` in the page (``#:~:text=start,end``)."""
    tokens = quote_text.split()
    if not tokens:
        return url

    def enc(part: list[str]) -> str:
        return quote(" ".join(part), safe="").replace("-", "%2D")  # "-" is fragment syntax

    if len(tokens) <= 2 * words:
        directive = enc(tokens)
    else:
        directive = f"{enc(tokens[:words])},{enc(tokens[-words:])}"
    joiner = ":~:text=" if "#" in url else "#:~:text="
    return f"{url}{joiner}{directive}"


def locator(url: str, location: str, quote_text: str) -> str:
    """Where the cited passage is: ``p. 4`` for a page of a corpus document, a text-fragment link
    for a web page, nothing when the source has no finer place than itself."""
    if url.startswith("doc:"):
        match = PAGE_LABEL.search(location)
        return match.group(1) if match else ""
    if url.startswith(("http://", "https://")):
        return text_fragment(url, quote_text)
    return ""


__all__ = [
    "Support",
    "Weights",
    "best_passage",
    "content_terms",
    "locator",
    "needs_citation",
    "support",
    "supports",
    "text_fragment",
]
