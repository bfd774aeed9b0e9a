"""Fuse ranked hit lists from several queries (and providers) into one candidate order.

Reciprocal rank fusion needs no score calibration across providers: a page that ranks well for
several of the researcher's queries rises above one that ranks first for a single query.
Inside one corpus, document-level evidence (a document prior and cover dates) reweights passages.
"""

from __future__ import annotations

import contextlib
import datetime
import difflib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

import numpy as np

from deepresearch.policies.urls import normalize_url
from deepresearch.schemas import SearchHit
from deepresearch.text.names import CAPITALIZED
from deepresearch.text.periods import FULL_DATE, MONTH, month_number
from deepresearch.text.terms import FUNCTION_WORDS

RRF_K = 60
_MONTH = re.compile(MONTH, re.IGNORECASE)
T = TypeVar("T")


def fuse(result_lists: Sequence[Sequence[SearchHit]], k: int = RRF_K) -> list[SearchHit]:
    """Hits ordered by summed ``1 / (k + rank)``; ties keep first-seen order. Deterministic."""
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    order: dict[str, int] = {}
    for hits in result_lists:
        for hit in hits:
            key = normalize_url(hit.url)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + hit.rank)
            if key not in first:
                first[key] = hit
                order[key] = len(order)
    ranked = sorted(scores, key=lambda key: (-scores[key], order[key]))
    return [
        first[key].model_copy(update={"url": key, "rank": i + 1}) for i, key in enumerate(ranked)
    ]


# --------------------------------------------------------------------------- document-level ranking

DOC_PRIOR_WEIGHT = 2.0  # a passage of the document most about the query scores up to 3x
NAME_WEIGHT = 3.0  # a capitalized query word counts this much more in the document prior
RECENCY_PENALTY = 0.5  # "latest ..." queries: passages of older documents count this much
IDENTITY_PENALTY = 0.1  # passages of a document whose cover names none of the query's names
COVER_CHARS = 2000  # a document's identity: the names in the first characters of its first page
_RECENT = re.compile(r"\b(?:latest|most\s+recent|newest|most\s+current)\b", re.IGNORECASE)


def name_words(query: str) -> list[str]:
    """Capitalized words of ``query``: the companies, products and places it names. A query
    typed without capitals ("apple total net sales") may name them in any word: each counts,
    and the covers decide which tell documents apart (``identity_weights``)."""
    found: list[str] = CAPITALIZED.findall(query)
    if found:
        return found
    return [w.capitalize() for w in re.findall(r"[a-z][\w&'’.-]*", query)]


def prior_names(query: str, covers: Sequence[AbstractSet[str]]) -> list[str]:
    """The words of ``query`` a document prior weighs as names (``document_prior``): its
    capitalized words; of a query typed without capitals, only those that tell documents
    apart by their covers (``identity_weights``), not every word: "might" and "implications"
    taken for names made one filing, whichever used them most, "about" the question."""
    if CAPITALIZED.search(query):
        return name_words(query)
    return [w for w in name_words(query) if telling_names(name_tokens(w), covers)]


def telling_names(tokens: AbstractSet[str], covers: Sequence[AbstractSet[str]]) -> set[str]:
    """The name ``tokens`` that tell documents apart: on the covers of some documents, at most
    half of them, or spelt like a name that is (``misspelt``: the filings a typo means)."""
    n = len(covers)
    telling = {t for t in tokens if 0 < sum(t in c for c in covers) <= n / 2}
    return telling | {m for t in tokens - telling if (m := misspelt(t, covers))}


def name_tokens(text: str) -> frozenset[str]:
    """Lower-cased word parts of the capitalized words of ``text`` ("AMAZON.COM, INC." ->
    amazon, com, inc; "Apple's" -> apple): names compared case- and punctuation-blind. A
    function word is no name, capitalized or not ("If so, ..." starts a sentence), and neither
    is a month ("July 1, 2023" is a period: it would tell apart the covers of one quarter)."""
    out: set[str] = set()
    for word in CAPITALIZED.findall(text):
        out.update(t for t in re.findall(r"[a-z0-9]+", word.lower()) if len(t) > 1)
    return frozenset(
        t for t in out if not t.isdigit() and t not in FUNCTION_WORDS and not _MONTH.fullmatch(t)
    )


def cover_names(first_page: str) -> frozenset[str]:
    """Who a document is by or about: the names at the top of its first page (a report's cover
    names its company, an article's heading its subject), computed from the text, not the file."""
    return name_tokens(first_page[:COVER_CHARS])


COVER_TITLE_WORDS = 6  # a name line on a cover is short: "Apple Inc.", "NVIDIA CORPORATION"
COVER_TITLE_SHARE = 0.5  # of a name's passages, the share in documents whose cover gives it


def cover_title(
    first_page: str,
    covers: Sequence[AbstractSet[str]],
    running: Callable[[str], bool],
    share: Callable[[str], float],
) -> str:
    """The line of a document's cover saying who it is by ("Apple Inc.", "AMAZON.COM, INC."),
    "" when none does (one document, covers alike). A file's name ("2023 Q3 AAPL.pdf") names no
    company: quoted rows are told apart by this line.

    Candidates are short lines of capitalized words, without figures or brackets, that hold a
    name at most half the corpus's covers carry (as in ``identity_weights``) and are no
    ``running`` head of the pages ("Table of Contents"). The first of these whose name the
    corpus's text uses mostly in documents with that name on their cover (``share`` of the
    name's passages): "MICROSOFT CORPORATION", not "For the Transition Period From to", whose
    capitalized "Period" only one filer's cover has but every filing's text uses."""
    telling = {t for t in cover_names(first_page) if sum(t in c for c in covers) <= len(covers) / 2}
    for raw in first_page[:COVER_CHARS].splitlines():
        line = raw.strip()
        words = line.split()
        if not 0 < len(words) <= COVER_TITLE_WORDS or re.search(r"[\d()\[\]]", line):
            continue
        if not all(w[0].isupper() or w.lower() in FUNCTION_WORDS for w in words):
            continue
        names = name_tokens(line) & telling
        if any(share(t) >= COVER_TITLE_SHARE for t in names) and not running(line):
            return line
    return ""


def identity_weights(query: str, covers: Sequence[AbstractSet[str]]) -> np.ndarray:
    """Per document: 1 when its cover names one of the query's names, else ``IDENTITY_PENALTY``.

    Only names that tell documents apart count (on the cover of some documents, at most half of
    them): a name on no cover (a product) or on every cover (the form's title) changes nothing,
    and neither does a query without names. A filing calls its company "the Company" on most
    pages, so passage text alone lets a competitor's page on the same topic outrank the right
    company's; the cover does not.
    """
    n = len(covers)
    telling = telling_names(name_tokens(" ".join(name_words(query))), covers)
    if not telling:
        return np.ones(n)
    return np.array([1.0 if telling & c else IDENTITY_PENALTY for c in covers])


MISSPELT = 0.8  # difflib ratio of a name on no cover to a cover's ("appel" / "apple")
MISSPELT_CHARS = 5  # shorter names are too easily like another word


def misspelt(token: str, covers: Sequence[AbstractSet[str]]) -> str:
    """The name of some covers (at most half) that ``token``, on none, is a misspelling of
    ("appel": apple), so a typo still searches the filings it means (the findings check then
    says whose they are and the report asks "did you mean ...?"); "" when none is that close."""
    n = len(covers)
    if len(token) < MISSPELT_CHARS or any(token in c for c in covers):
        return ""
    counts = Counter(t for c in covers for t in c)
    names = sorted(t for t, k in counts.items() if k <= n / 2)
    near = difflib.get_close_matches(token, names, n=1, cutoff=MISSPELT)
    return near[0] if near else ""


def identity_groups(query: str, covers: Sequence[AbstractSet[str]]) -> list[int]:
    """Per document, which of the query's telling names (``identity_weights``) its cover holds
    first, in query order; -1 for none. Two or more groups: the query compares entities."""
    n = len(covers)
    wanted = [t for w in name_words(query) for t in sorted(name_tokens(w))]
    telling = [t for t in dict.fromkeys(wanted) if 0 < sum(t in c for c in covers) <= n / 2]
    return [next((g for g, t in enumerate(telling) if t in c), -1) for c in covers]


def round_robin(items: Sequence[T], group: Sequence[int]) -> list[T]:
    """``items`` (best first) taken in turn from each group, groups in order of first
    appearance, so a comparison's hits hold each entity's best pages, not one entity's."""
    queues: dict[int, list[T]] = {}
    for item, g in zip(items, group, strict=True):
        queues.setdefault(g, []).append(item)
    out: list[T] = []
    while any(queues.values()):
        for q in queues.values():
            if q:
                out.append(q.pop(0))
    return out


def wants_latest(query: str) -> bool:
    return bool(_RECENT.search(query))


def document_prior(term_counts: Sequence[tuple[np.ndarray, bool]]) -> np.ndarray:
    """Per document, in [0, 1]: how much the document *as a whole* is about the query.

    ``term_counts`` holds, per distinct query term, how many passages of each document contain it
    and whether the term is a name. Passages rarely repeat what the whole document is about (a
    company's filing says "the Company", not its name, on most pages), so passage BM25 alone ranks
    a competitor's page on the same topic as high as the right one. Terms found in few documents
    tell documents apart: each adds its document-level idf, saturated by its passage count; terms
    in every document weigh nearly nothing, and names weigh ``NAME_WEIGHT`` times more so a rare
    topic word cannot outvote the name of what the question is about.
    """
    if not term_counts:
        return np.zeros(0)
    n_docs = len(term_counts[0][0])
    score = np.zeros(n_docs, dtype=np.float64)
    total = 0.0
    for counts, is_name in term_counts:
        counts = counts.astype(np.float64)
        present = counts > 0
        df = int(present.sum())
        if df == 0:
            continue
        idf = float(np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)))
        idf *= NAME_WEIGHT if is_name else 1.0
        score += idf * counts / (counts + 0.5 * counts[present].mean())
        total += idf
    return score / total if total > 0 else score


def cover_date(text: str) -> int:
    """The latest full date in ``text`` (a document's first page) as an ordinal; 0 when none.

    A report's cover names its period and issue date ("for the quarter ended July 1, 2023");
    later dates in the body (maturities, forecasts) are not on the cover.
    """
    best = 0
    for m in FULL_DATE.finditer(text):
        month = month_number(m.group(1))
        with contextlib.suppress(ValueError):
            best = max(best, datetime.date(int(m.group(3)), month, int(m.group(2))).toordinal())
    return best


def recency_weights(prior: np.ndarray, dates: np.ndarray) -> np.ndarray:
    """Per document: 1 for the newest of the documents the query is about, else a penalty.

    For "the latest report" questions: among the documents the prior ranks near the top (all
    dated documents when the query names nothing in particular), the newest wins.
    """
    dated = dates > 0
    top = float(prior.max()) if prior.size else 0.0
    relevant = dated & (prior >= 0.5 * top) if top > 0 else dated
    if not relevant.any():
        return np.ones(len(dates))
    newest = dates[relevant].max()
    return np.where(relevant & (dates >= newest), 1.0, RECENCY_PENALTY)
