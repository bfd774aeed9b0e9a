"""What a question asks, read without a model: entities, metric terms, periods and answer shape.

The analysis drives evidence ranking (metric terms weigh more than the entity's name, which a
filing calls "the Company"), the planner (one sub-question per entity x metric) and the answer
composer (one figure, a period -> value table, one row per entity, or quoted sentences). It is
plain English grammar: capitalized words are names, words around the shape's verbs are not
metrics, dates and quarter labels are periods. It names no company and no document.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from deepresearch.text.names import entities_of
from deepresearch.text.periods import Period, periods_of
from deepresearch.text.question_words import (
    AMOUNT_NOUNS,
    CASH_FLOW_NAMES,
    COMPOUNDS,
    FRAME,
    SYNONYMS,
    cash_flow_names,
    expand_abbreviations,
)
from deepresearch.text.terms import STOPWORDS, strip_possessive, terms

Shape = Literal["figure", "trend", "comparison", "list", "explanation"]

_LATEST = re.compile(
    r"\b(?:latest|most recent|last|current|recent)\s+(?:fiscal\s+)?(?:quarter|period|filing|10-?Q)",
    re.IGNORECASE,
)
_YOY = re.compile(r"\byear[- ]over[- ]year\b|\bcompared (?:to|with) the (?:same|prior)", re.I)
# the parts of a figure: "the revenue breakdown", "revenue distribution among product lines",
# "net sales by segment", "each of its business segments"
_BREAKDOWN = re.compile(
    r"\bbreak\s?down\b|\bbroken down\b|\bdistribution\b|\bcomposition\b|\bby (?:segment|product"
    r"|region|geograph\w*|category|business)\b|\b(?:each|every|various|different|diverse|its|their)"
    r" (?:of (?:its|their|the) )?(?:\w+ ){0,2}(?:segments|product lines|offerings|categories"
    r"|regions|businesses|business lines)\b",
    re.IGNORECASE,
)
_TREND = re.compile(
    r"\b(?:across|over|through(?:out)?)\s+(?:the\s+)?(?:(?:last|past|recent|several|multiple"
    r"|different|\w+)\s+)?(?:quarters|periods|filings|years|time|reports)\b|\btrends?\b"
    r"|\bfluctuat(?:e|ed|es|ing)\b|\bevolv\w*|\bover time\b|\beach quarter\b|\bquarter[- ](?:over|to)[- ]quarter\b"
    r"|\bchanged? over\b|\bhistor(?:y|ical)\b|\btrajectory\b|\btrended\b"
    r"|\b(?:these|those|the reported|reported|recent|past|last \w+|several|successive|prior"
    r"|previous|preceding|earlier)\s+"
    r"(?:quarters|periods|filings|10-?Qs)\b",
    re.IGNORECASE,
)
_COMPARE = re.compile(
    r"\bcompar\w*|\bvs\.?(?!\w)|\bversus\b|\bcontrast\w*|\bdiffer\w*|\brelative to\b"
    r"|\b(?:measures?|measured|stacks?|stacked) up\b|\brelat(?:e|es|ed) to\b|\bin relation to\b",
    re.I,
)
# a figure set against earlier periods of itself, not against another metric
_AGAINST_PERIODS = re.compile(
    r"\b(?:against|to|with|versus|vs\.?)\s+(?:the\s+|its\s+)?(?:prior|previous|preceding|earlier"
    r"|past|last)\s+(?:\w+\s+)?(?:quarters|periods|years|filings|ones)\b"
    # "how does it relate to the company's historical tax rates"
    r"|\b(?:against|to|with|versus|vs\.?)\s+(?:the\s+|its\s+|their\s+)?(?:\w+(?:'s|’s)\s+)?"
    r"historical\b",
    re.IGNORECASE,
)
_EXPLAIN = re.compile(
    r"^\s*(?:why|explain|describe|discuss|how (?:does|did|do|has|have|is|are|was|were|will|can|"
    r"could|might|would) \w+(?:'s)? (?!\w*(?:revenue|sales|income|margin)\b)\w+)"
    r"|\b(?:factors?|reasons?|drivers?|drove|driven|caused?|impact(?:ed|s)?|affect(?:ed|s)?"
    r"|contribut\w+|strateg\w+|risks?|explain\w*|attribut\w+)\b",
    re.IGNORECASE,
)
# words that ask for reasons or prose rather than figures set against each other
_REASONS = re.compile(
    r"\b(?:why|factors?|reasons?|drivers?|drove|driven|caused?|explain\w*|implications?"
    r"|discuss\w*|influenc\w*|strateg\w*|plans?)\b",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"^\s*(?:list|name|enumerate)\b|\bwhat (?:are|were) (?:the |some |its |their )?"
    r"(?:main |key |primary |major |significant |different )?(?:\w+\s){0,2}?\w+s\b|\bwhich \w+s\b",
    re.IGNORECASE,
)
# a share of a whole: "what percentage of Apple's total revenue did Services contribute", "what
# proportion of its revenue came from data center": the whole is the words after "of" (and an
# owner), up to the next function word
SHARE_WORDS = ("percentage", "proportion", "share", "portion", "fraction")
_SHARE = re.compile(
    rf"\b(?:{'|'.join(SHARE_WORDS)})\s+of\s+(?:[\w&.-]+(?:'s|’s)\s+|its\s+|the\s+|their\s+)?"
    r"(?P<share_of>(?:[a-z]+\s+){0,2}[a-z]+)",
)
_FIGURE_OPENING = re.compile(
    rf"(?:^|,\s*)(?:what|which)\s+(?:{'|'.join(SHARE_WORDS)}|amount)\b|^\s*how (?:much|many)\b",
    re.IGNORECASE,
)
_WHAT_METRIC = re.compile(r"\s*what\s+((?:[\w-]+\s+){1,3}?)(?:did|does|do)\s", re.IGNORECASE)
_FIGURE = re.compile(
    r"\bhow (?:much|many)\b|\bwhat (?:was|were|is|are) (?:the |its |their )?(?:total |net |gross )?"
    r"|\b(?:amount|total|percentage|rate|number of|figure|value)\b",
    re.IGNORECASE,
)
# a part of the filing named as where to look, not what is measured: "the discussion on tax
# contingencies in the notes", "in the notes to the financial statements"
_DOCUMENT_PART = re.compile(
    r"\b(?:in|from|within|of)\s+the\s+notes\b(?:\s+to\s+(?:the\s+)?[\w\s]{0,40}?statements)?",
    re.IGNORECASE,
)
# a balance at a point in time ("inventory levels", "cash position", "debt outstanding"), not
# the flows of a period ("Changes in inventories" of the cash-flow statement)
_LEVEL = re.compile(
    r"\blevels?\b|\bbalances?\b|\bon hand\b|\boutstanding\b|\bposition\b", re.IGNORECASE
)
# what a company has or holds at a date ("how much cash did X have", "debt at the end of the
# quarter"): a balance too, unless what is asked is a period's amount ("revenue at the end of")
_HELD = re.compile(
    r"\bhow much \w+(?: \w+)? (?:did|does|do) [\w&.' ’-]+ (?:have|hold)\b"
    r"|\b(?:at|as of) the (?:end|close) of\b",
    re.IGNORECASE,
)
_PERIOD_AMOUNTS = frozenset(
    terms("revenue revenues sales income earnings profit margin expenses costs spend spending")
)


@dataclass(frozen=True)
class Question:
    """The analysis of one question (see the module docstring)."""

    text: str
    entities: tuple[str, ...]
    metrics: tuple[str, ...]  # metric phrases in question order ("gross margin", "revenue")
    periods: tuple[Period, ...]
    shape: Shape
    latest: bool = False  # "latest / most recent quarter"
    yoy: bool = False  # year over year
    breakdown: bool = False  # the parts of a figure: its segments, products, regions
    share_of: str = ""  # a share's whole ("total revenue" of "what percentage of total revenue")
    over_time: bool = False  # "across quarters", "quarter to quarter": whatever the shape
    level: bool = False  # a balance at a point in time ("inventory levels"), not a period's flow
    metric_words: tuple[str, ...] = field(default=(), compare=False)  # with ``SYNONYMS``


_COMPOUND = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in COMPOUNDS) + r")\b", re.I)
_COMPOUND_PARTS = {re.sub(r",?\s+", "_", c): c for c in COMPOUNDS}


def metrics_of(
    text: str, entities: tuple[str, ...], periods: tuple[Period, ...]
) -> tuple[str, ...]:
    """Metric phrases: runs of content words between frame words, split at "and" / commas,
    except inside a line item's name ("research and development")."""
    text = _COMPOUND.sub(lambda m: re.sub(r",?\s+", "_", m.group(0).lower()), text)
    text = _DOCUMENT_PART.sub(" | ", text)
    for p in periods:
        text = text.replace(p.text, " | ")
    for e in entities:
        text = re.sub(rf"\b{re.escape(e)}(?:'s|’s|')?", " | ", text)
    out: list[str] = []
    run: list[str] = []
    for token in re.findall(r"[\w&'’.-]+|[,;|?!()]", text):
        low = token.lower().strip(".")
        if low in FRAME or not re.search(r"[a-z]", low) or token in {",", ";", "|", "?", "!"}:
            if run:
                out.append(" ".join(run))
                run = []
            continue
        run.append(_COMPOUND_PARTS.get(low, low) if "_" in low else strip_possessive(low))
    if run:
        out.append(" ".join(run))
    return tuple(dict.fromkeys(m for m in out if len(m) > 1))


def _coordinated(text: str, entities: tuple[str, ...]) -> bool:
    """Two names joined by and / or / vs / with ("Apple's and Microsoft's", "A vs B")."""
    for a, b in itertools.pairwise(entities):
        gap = rf"{re.escape(a)}(?:'s|’s|')?,?\s+(?:and|or|vs\.?|versus|with|to)\s+(?:the\s+)?"
        if re.search(gap + re.escape(b), text):
            return True
    return False


def _shape(
    text: str, entities: tuple[str, ...], periods: tuple[Period, ...], metrics: tuple[str, ...] = ()
) -> Shape:
    if _coordinated(text, entities):
        return "comparison"
    years = len({p.text for p in periods if p.year})
    if _FIGURE_OPENING.search(text) and not _TREND.search(text) and years < 2:
        return "figure"  # "what percentage of revenue did X contribute": a figure, not talk
    if _AGAINST_PERIODS.search(text):
        return "trend"  # "stack up against prior quarters": one metric over time
    if _COMPARE.search(text) and len(metrics) >= 2 and not _REASONS.search(text):
        return "comparison"  # one entity's metrics set against each other
    if _TREND.search(text) or years >= 2:
        return "trend"
    if _LIST.search(text) and not re.match(r"\s*(?:why|how)\b", text, re.I):
        return "list"
    if _EXPLAIN.search(text) and not _FIGURE.search(text):
        return "explanation"
    if _COMPARE.search(text) and len(entities) >= 2:
        return "comparison"
    if _LIST.search(text) and not _FIGURE.search(text.split(" the ", 1)[0]):
        return "list"
    if _EXPLAIN.search(text) and not re.search(r"\bhow (?:much|many)\b", text, re.I):
        return "explanation"
    asked = _WHAT_METRIC.match(text)  # "what revenue did X report": the amount's figure
    words = set(terms(asked[1])) if asked else set()
    named = words <= set(terms(" ".join(metrics))) and bool(words & AMOUNT_NOUNS)
    return "figure" if _FIGURE.search(text) or periods or named else "explanation"


def metric_terms(q: Question) -> set[str]:
    """The stemmed terms of what ``q`` measures, with their line-item equivalents."""
    return {t for word in q.metric_words for t in terms(word)}


# what a breakdown divides its figure by ("business segments", "product lines", "regions")
_DIMENSION = re.compile(
    r"\b(?:segments?|product lines?|regions?|geograph\w*|categor(?:y|ies)|offerings?)\b", re.I
)


def dimension_terms(q: Question) -> set[str]:
    """The stemmed words of what a breakdown divides its figure by: a table titled by them
    ("Information on reportable segments") is the breakdown asked for, before one titled by the
    figure's other words ("Information about operating expenses")."""
    if not q.breakdown:
        return set()
    return {t for m in _DIMENSION.finditer(q.text) for t in terms(m.group())}


def asked_terms(q: Question) -> set[str]:
    """``metric_terms`` and the names after the subject's: the first name is the subject (a
    filing calls it "the Company"); later names are what is measured of it ("Apple's Services
    segment revenue": the "Net sales - Services" row) or its peers."""
    return metric_terms(q) | {t for name in q.entities[1:] for t in terms(name)}


def analyze(text: str) -> Question:
    """The ``Question`` of ``text`` (see the module docstring); abbreviated line items are
    analysed spelled out."""
    original = " ".join(text.split())
    text = expand_abbreviations(original)
    periods = periods_of(text)
    entities = entities_of(text)
    metrics = metrics_of(text, entities, periods)
    return Question(
        text=original,
        entities=entities,
        metrics=metrics,
        periods=periods,
        shape=_shape(text, entities, periods, metrics),
        latest=bool(_LATEST.search(text)),
        breakdown=bool(_BREAKDOWN.search(text)),
        yoy=bool(_YOY.search(text)),
        metric_words=metric_words_of(metrics),
        share_of=_share_of(text),
        over_time=bool(_TREND.search(text)),
        level=asks_level(text),
    )


def metric_words_of(metrics: Sequence[str]) -> tuple[str, ...]:
    """The words of ``metrics`` ("selling, general and administrative": no comma, no "and"),
    then their line-item equivalents (``SYNONYMS``): ``Question.metric_words``."""
    # "capital expenditures": its words, and those a cash-flow statement names it by instead
    # of their synonyms ("expenses" are the income statement's)
    named = [n for m in metrics for n in cash_flow_names(m)]
    own = {w for n in named for w in n.split()}
    split = (w for m in metrics for w in m.replace(",", " ").split())
    filed = (w for n in named for w in CASH_FLOW_NAMES[n].split())
    words = tuple(dict.fromkeys(w for w in (*split, *filed) if w not in STOPWORDS))
    return words + tuple(
        dict.fromkeys(
            x for w in words if w not in own for x in SYNONYMS.get(w, ()) if x not in words
        )
    )


def asks_level(text: str) -> bool:
    """Whether ``text`` asks for a balance at a point in time ("inventory levels", "cash
    position", "how much cash did X have"): the one test ``Question.level`` and a search
    query's line items both use."""
    if _LEVEL.search(text):
        return True
    return bool(_HELD.search(text)) and not set(terms(text)) & _PERIOD_AMOUNTS


def asks_flow(text: str) -> bool:
    """Whether ``text`` asks for what a cash-flow statement states under another name ("capital
    expenditures"): the search's and the evidence's line items are then its flow rows, not the
    balance sheet's equipment held."""
    return bool(cash_flow_names(text))


def flow_asked(text: str) -> bool | None:
    """Which rows ``text`` asks for, where the search and the evidence pick line items: a
    balance's (False, ``asks_level``), a flow's (True, ``asks_flow``), or either (None)."""
    if asks_level(text):
        return False
    return True if asks_flow(text) else None


def _share_of(text: str) -> str:
    """The whole a share is asked of, its words up to the first function word ("" if none)."""
    m = _SHARE.search(text)
    if m is None:
        return ""
    words = list(itertools.takewhile(lambda w: w not in STOPWORDS, m["share_of"].split()))
    return " ".join(words)


__all__ = [
    "SHARE_WORDS",
    "Period",
    "Question",
    "Shape",
    "analyze",
    "asks_flow",
    "asks_level",
    "dimension_terms",
    "entities_of",
    "flow_asked",
    "metric_terms",
    "metric_words_of",
    "metrics_of",
    "periods_of",
]
