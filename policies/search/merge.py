"""Merging hit lists from several providers, and reformulating a query that found nothing.

Merge: reciprocal-rank fusion keyed by the normalized URL, so a page that two providers rank
well beats a page one provider ranks first, and the same page spelled two ways (tracking
parameters, ``:443``, a trailing slash) is one hit. Ties keep the order the lists were given in
(the fallback chain's order), so the result is deterministic.

Reformulate: when a query returns nothing, the researcher tries cheaper variants before giving
up: operators and quotes removed, synonyms from a small built-in table, then broader queries with
fewer, more general terms. Pure functions; the caller decides how many variants to spend.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from deepresearch.policies.urls import normalize_url
from deepresearch.schemas import SearchHit
from deepresearch.text.terms import QUERY_EXTRA, STOPWORDS

RRF_K = 60  # the usual constant: damps the difference between rank 1 and rank 2


def merge_hits(lists: Iterable[Sequence[SearchHit]], limit: int) -> list[SearchHit]:
    """One ranked list from several, each URL once (normalized), ranks renumbered 1..n.

    The first occurrence of a URL (in list order, then rank order) gives the hit its provider and
    title; a later duplicate only fills a missing snippet.
    """
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    order: dict[str, tuple[int, int]] = {}
    for list_no, hits in enumerate(lists):
        seen_here: set[str] = set()
        for position, hit in enumerate(sorted(hits, key=lambda h: h.rank)):
            key = normalize_url(hit.url)
            if key in seen_here:  # a provider repeating itself does not vote twice
                continue
            seen_here.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + position + 1)
            if key not in first:
                first[key] = hit
                order[key] = (position, list_no)
            elif not first[key].snippet and hit.snippet:
                first[key] = first[key].model_copy(update={"snippet": hit.snippet})
    ranked = sorted(scores, key=lambda k: (-scores[k], order[k]))
    out: list[SearchHit] = []
    for key in ranked[: max(0, limit)]:
        hit = first[key]
        location = hit.location if hit.location and hit.location != hit.url else key
        out.append(hit.model_copy(update={"url": key, "rank": len(out) + 1, "location": location}))
    return out


# --------------------------------------------------------------------------- reformulation

_OPERATOR = re.compile(r"(?i)\b(?:site|filetype|intitle|inurl|intext|before|after|ext|lang):\S*")
_BOOLEAN = frozenset({"AND", "OR", "NOT"})
_WORD = re.compile(r"[\w][\w'’.+#-]*")
_QUERY_STOPWORDS = STOPWORDS | QUERY_EXTRA
_VAGUE = frozenset(
    str.split(
        """latest recent current new newest best top exact exactly specific specifically detailed
    official complete full total overall actual really very please"""
    )
)
_YEAR = re.compile(r"^(?:19|20)\d{2}$")

# Groups of interchangeable terms; the first is the most general. Small on purpose: it is a
# fallback for empty results, not a thesaurus.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("revenue", "sales", "turnover"),
    ("profit", "earnings", "income"),
    ("cost", "price", "expense"),
    ("company", "firm", "corporation", "business"),
    ("car", "automobile", "vehicle"),
    ("buy", "purchase", "acquire"),
    ("acquisition", "takeover", "merger"),
    ("error", "exception", "failure", "bug"),
    ("vulnerability", "exploit", "cve"),
    ("fast", "quick", "rapid"),
    ("slow", "sluggish", "latency"),
    ("study", "research", "paper"),
    ("guide", "tutorial", "howto"),
    ("effect", "impact", "influence"),
    ("increase", "rise", "growth"),
    ("decrease", "decline", "drop"),
    ("employee", "worker", "staff"),
    ("law", "regulation", "legislation"),
    ("medicine", "drug", "medication"),
    ("illness", "disease", "condition"),
    ("config", "configuration", "settings"),
    ("install", "setup", "installation"),
)
_SYNONYM = {term: group for group in SYNONYM_GROUPS for term in group}


def strip_operators(query: str) -> str:
    """``query`` without search operators, quotes, grouping, exclusions and boolean words."""
    text = _OPERATOR.sub(" ", query)
    text = re.sub(r"(?:^|\s)-\S+", " ", text)  # exclusions: -word, -"phrase"
    text = re.sub(r"[\"“”()\[\]{}|*~^]", " ", text)
    text = re.sub(r"(?:^|\s)\+", " ", text)
    words = [w for w in text.split() if w not in _BOOLEAN]
    return " ".join(words)


def _content_words(query: str) -> list[str]:
    words = _WORD.findall(strip_operators(query))
    return [w.strip(".'’-") for w in words if w.lower().strip(".'’-") not in _QUERY_STOPWORDS]


def _synonym_variant(words: Sequence[str]) -> str:
    """Each word with a synonym replaced by the group's most general other term."""
    out = []
    for word in words:
        lowered, plural = word.lower(), ""
        if lowered not in _SYNONYM and lowered.endswith("s") and lowered[:-1] in _SYNONYM:
            lowered, plural = lowered[:-1], "s"  # "failures" -> "errors"
        group = _SYNONYM.get(lowered)
        if group is None:
            out.append(word)
            continue
        out.append(next(t for t in group if t != lowered) + plural)
    return " ".join(out)


def _key(query: str) -> str:
    return " ".join(query.lower().split())


def reformulate(query: str, max_variants: int = 4) -> list[str]:
    """Broader variants of ``query``, least drastic first, none equal to it or to each other.

    1. operators, quotes and exclusions removed; 2. stopwords and vague modifiers dropped;
    3. synonyms from ``SYNONYM_GROUPS``; 4. years and numbers dropped; 5. only the first three
    content words. Returns fewer (possibly none) when nothing broader is left.
    """
    plain = strip_operators(query)
    words = [w for w in _content_words(query) if w]
    focused = [w for w in words if w.lower() not in _VAGUE]
    candidates = [
        plain,
        " ".join(focused),
        _synonym_variant(focused),
        " ".join(w for w in focused if not _YEAR.match(w) and not w.replace(",", "").isdigit()),
        " ".join(focused[:3]),
    ]
    seen = {_key(query)}
    variants: list[str] = []
    for candidate in candidates:
        key = _key(candidate)
        if not key or key in seen:
            continue
        seen.add(key)
        variants.append(" ".join(candidate.split()))
        if len(variants) >= max_variants:
            break
    return variants
