"""What the first page of each corpus document says about it: the date on its cover, the names
on it and, where its domain reads one (``domains.identity``: a filing's cover), the end of the
period it covers and the line saying who the document is by.

Read once when an index is loaded (from the cached passages, no extraction): search weighs
documents by them (``ranking.identity_weights``, ``recency_weights``, ``period_weights``) and a
fetched page carries its document's ``by`` so quoted rows of two companies' filings can be told
apart (a file's name, "2023 Q3 AAPL.pdf", names no company).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepresearch import domains
from deepresearch.policies.search.ranking import cover_date, cover_names, cover_title
from deepresearch.providers.search.doc_ids import DocEntry
from deepresearch.providers.search.passages import tokenize


@dataclass(frozen=True)
class Covers:
    dates: np.ndarray  # per document, its cover date as an ordinal (0: none)
    names: list[frozenset[str]]  # the names on its cover (``ranking.cover_names``)
    ends: np.ndarray  # the end of the period it covers (``Identity.period_end``, 0: none)
    titles: list[str]  # who it is by (``Identity.by``, of ``ranking.cover_title``; "": none)


def read_covers(
    p_doc: np.ndarray,
    p_page: np.ndarray,
    p_text: Sequence[str],
    docs: Sequence[DocEntry],
    bm25: Any,
    kinds: Sequence[str],
) -> Covers:
    """The ``Covers`` of ``docs`` from their passages (document, page, text), their BM25
    index (which passages use a word) and their domains (``kinds``)."""
    dates = np.zeros(len(docs), dtype=np.int64)
    first: dict[int, list[str]] = {}
    for i in np.flatnonzero(p_page == 1).tolist():
        d = int(p_doc[i])
        dates[d] = max(int(dates[d]), cover_date(p_text[i]))
        first.setdefault(d, []).append(p_text[i])
    pages = ["\n".join(first.get(d, [])) for d in range(len(docs))]
    # of a document no domain reads an identity from, only the names its text never writes in
    # lower case: a manual's first page heads its topics ("Folding", "Saving"), which its pages
    # use as words, and a query word taken for one would outweigh every other document
    lower = _lowercase_words(p_text) if domains.GENERIC in kinds else frozenset()
    names = [
        cover_names(page) - lower if kinds[d] == domains.GENERIC else cover_names(page)
        for d, page in enumerate(pages)
    ]
    share = _share(names, p_doc, bm25)
    # each document's passages, grouped once (not a scan of the corpus per document)
    order = np.argsort(p_doc, kind="stable")
    rows = np.split(order, np.cumsum(np.bincount(p_doc, minlength=len(docs)))[:-1])
    found = [
        domains.identity(
            kinds[d],
            page,
            cover_title(
                page, names, _running(rows[d].tolist(), docs[d].pages, p_page, p_text), share
            ),
        )
        for d, page in enumerate(pages)
    ]
    ends = np.array([f.period_end for f in found], dtype=np.int64)
    return Covers(dates, names, ends, [f.by for f in found])


_LOWER_WORD = re.compile(r"(?<![\w.])[a-z][a-z0-9'’&-]*")


def _lowercase_words(texts: Sequence[str]) -> frozenset[str]:
    """The word parts (as ``ranking.name_tokens`` cuts names) that ``texts`` write in lower
    case."""
    seen: set[str] = set()
    for text in texts:
        seen.update(_LOWER_WORD.findall(text))
    return frozenset(t for word in seen for t in re.findall(r"[a-z0-9]+", word))


def _share(covers: list[frozenset[str]], p_doc: np.ndarray, bm25: Any) -> Callable[[str], float]:
    """Of the passages using a name, the share in documents whose cover gives it."""
    indices, indptr = bm25.scores["indices"], bm25.scores["indptr"]

    def share(name: str) -> float:
        ids = bm25.get_tokens_ids(tokenize([name])[0])
        if len(ids) != 1:
            return 0.0
        rows = np.asarray(indices[int(indptr[ids[0]]) : int(indptr[ids[0] + 1])])
        own = np.array([name in c for c in covers], dtype=bool)[p_doc[rows]]
        return float(own.mean()) if len(rows) else 0.0

    return share


def _running(
    rows: list[int], pages: int, p_page: np.ndarray, p_text: Sequence[str]
) -> Callable[[str], bool]:
    """Whether a line heads (or foots) at least half the pages of the document whose passages
    are ``rows``."""

    def running(line: str) -> bool:
        found = {int(p_page[i]) for i in rows if f"\n{line}\n" in f"\n{p_text[i]}\n"}
        return len(found) >= max(2, pages / 2)

    return running
