"""Which table rows a question names: line-item labels matched against the question's words.

A figure lives in a table row whose label names the metric ("Total net sales", "Research and
development", "Inventories"), on a page that passage BM25 ranks below prose that repeats the
metric's words (risk factors name "research and development" ten times, an income statement
once). So the label of every row is an index of its own: a row whose label the query covers is
the line item asked for, and its page is worth reading whatever its BM25 rank.

A label matches by how much of it the query covers, each word weighted by its rarity among all
labels, less its structure words ("total" and "net" say where a row sits, not what it is), with
the question's plain English equivalents of line items (``question_words.SYNONYMS``: "net
sales" ~ "revenue"); words that frame a question ("reported", "changes", "levels") name none.
A label joining two line items ("Server products and cloud services") is also matched by each.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from deepresearch.text.boilerplate import shape_of
from deepresearch.text.question_words import (
    COMPOUNDS,
    FRAME,
    SYNONYM_TERMS,
    equivalents,
    expand_abbreviations,
)
from deepresearch.text.tables import TableRow, parse_row
from deepresearch.text.terms import terms

K = TypeVar("K", bound=Hashable)
MIN_SCORE = 0.5  # a label at least this covered (rarity-weighted) by the query is asked for
# words that give a table its structure rather than name a line item: they never match alone
# (a "Total" row under a repurchase table is not what "total net sales" asks for)
STRUCTURE = frozenset(terms("total subtotal net"))


# the words a caption frames its table with ("The components of inventories were as follows",
# "The following table shows ...", "... consisted of the following"): a title names its table
# by what is left
CAPTION_FRAME = frozenset(
    terms(
        "following follows table tables shows show summarizes summary components consisted "
        "consist presents present sets forth below above detail details information"
    )
)


# a row that tells a period's change, not a balance: "Changes in operating assets and
# liabilities - Inventories", "Increase (decrease) in ...", or every column a span of time
_FLOW_LABEL = re.compile(r"\bchanges? in\b|\bincreases?\b|\bdecreases?\b", re.IGNORECASE)
_SPAN_HEADER = re.compile(r"\b(?:months|weeks|quarters?|years?)\s+ended\b", re.IGNORECASE)


def is_flow(row: TableRow) -> bool:
    """Whether a row states what changed over a period rather than a balance at a date."""
    return bool(_FLOW_LABEL.search(row.label)) or (
        bool(row.cells) and all(_SPAN_HEADER.search(h) for h, _ in row.cells)
    )


def flow_line(line: str) -> bool:
    """Whether a line is a self-describing table row that states a flow (``is_flow``)."""
    row = parse_row(line)
    return row is not None and is_flow(row)


def label_core(label: str) -> str:
    """The part of a nested label that names the row: its last part ("Cash flows from operating
    activities - Net income" is net income, whatever its heading says; "... - Other" names
    nothing), or the whole label when that part is only a structure word ("Operating expenses -
    Total")."""
    leaf = label.rsplit(" - ", 1)[-1]
    named = set(terms(leaf))
    # "Operating expenses - Total" is the heading's total; "... - Other" is none of it by name
    return label if named and named <= STRUCTURE else leaf


def core_terms(label: str) -> set[str]:
    """What a label's core names (``label_core``), without its ``STRUCTURE`` words: "Total net
    income" and "Net income" both {"incom"}."""
    return set(terms(label_core(label))) - STRUCTURE


_CONJUNCTION = re.compile(r"\s+and\s+", re.IGNORECASE)
_RESTATED_HEAD = re.compile(r"\s*(\w+)\s+and\s+\1\b", re.IGNORECASE)


def restated_head(label: str) -> str:
    """The word a label's rest repeats ("Cash and cash equivalents": "Cash"), "" when none:
    the row is what a filing calls that word ("how much cash")."""
    m = _RESTATED_HEAD.match(label)
    return m[1] if m else ""


def conjuncts(label: str) -> list[str]:
    """The line items a label joins with "and" ("Server products and cloud services": "Server
    products", "cloud services"), none when it names one thing ("Research and development"); a
    comma may only qualify ("Other comprehensive loss, net of tax")."""
    leaf = label_core(label)
    if any(c in leaf.lower() for c in COMPOUNDS):
        return []
    parts = [p for p in _CONJUNCTION.split(leaf) if p.strip()]
    return parts if len(parts) >= 2 else []


def broken_compounds(label: str, metrics: Sequence[str]) -> frozenset[str]:
    """The terms of each metric ("operating expenses") whose words the label holds in their
    order only with another word inside ("Operating lease cost": operating lease, its cost):
    a word inside a compound makes another thing of it, where a word around it does not
    ("Total operating expenses") and neither does another order ("Net cash provided by
    operating activities" is the operating cash flow). Synonyms count as the word."""
    held = terms(label)
    out: set[str] = set()
    for metric in metrics:
        wanted = [{t, *SYNONYM_TERMS.get(t, ())} for t in terms(metric)]
        runs = [_run(held, wanted, start) for start in range(len(held))]
        found = [gaps for gaps in runs if gaps is not None]
        if len(wanted) >= 2 and found and all(gaps for gaps in found):
            out.update(t for alike in wanted for t in alike)
    return frozenset(out)


def _run(held: Sequence[str], wanted: Sequence[set[str]], start: int) -> int | None:
    """From ``held[start]``, the words in order of ``wanted`` (each the next one that is):
    how many other words lie inside (structure words aside), or None when not all are."""
    if held[start] not in wanted[0]:
        return None
    at, inside = start, 0
    for alike in wanted[1:]:
        nxt = next((k for k in range(at + 1, len(held)) if held[k] in alike), None)
        if nxt is None:
            return None
        inside += sum(t not in STRUCTURE for t in held[at + 1 : nxt])
        at = nxt
    return inside


def _words(text: str) -> frozenset[str]:
    return frozenset(t for t in terms(text) if not t.isdigit())


def query_terms(query: str) -> frozenset[str]:
    """The stemmed content words of ``query`` and their line-item equivalents."""
    text = expand_abbreviations(query)
    words = text.split()
    base = set(terms(" ".join(w for w in words if w.lower().strip("?.,;:!") not in FRAME)))
    alike = equivalents(text)
    return frozenset(base | {s for t in base for s in alike.get(t, ())})


@dataclass(frozen=True)
class LabelIndex:
    """Row labels by the passages that hold them, with each label word's rarity."""

    # (passage index, line, label terms, core terms): a nested label ("Operating expenses -
    # Research and development") also as its core (``label_core``), which names the line item on
    # its own and must match for the whole label to (its headings only qualify it)
    labels: tuple[tuple[int, int, frozenset[str], frozenset[str]], ...]
    idf: dict[str, float]
    # label numbers by the words they hold: a query is scored against the labels sharing a word
    # with it (in label order, as a scan of all labels would meet them), not against every row
    by_term: dict[str, np.ndarray] = field(init=False, repr=False, compare=False)
    # each label's rarity weight (``score``'s denominator), summed once
    totals: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_term: dict[str, list[int]] = {}
        for n, (_, _, words, _) in enumerate(self.labels):
            for t in words:
                by_term.setdefault(t, []).append(n)
        arrays = {t: np.asarray(ns, dtype=np.intp) for t, ns in by_term.items()}
        object.__setattr__(self, "by_term", arrays)
        totals = [self.weight(words) for _, _, words, _ in self.labels]
        object.__setattr__(self, "totals", np.asarray(totals, dtype=np.float64))

    @classmethod
    def build(cls, passages: Sequence[str]) -> LabelIndex:
        labels: list[tuple[int, int, frozenset[str], frozenset[str]]] = []
        joined: list[tuple[int, int, frozenset[str], frozenset[str]]] = []
        for i, text in enumerate(passages):
            for k, line in enumerate(text.split("\n")):
                if " = " not in line:
                    continue
                row = parse_row(line)
                if row is None or shape_of(line) == "table of contents":
                    continue  # a contents row names a section, not a figure
                # and the table's title: "Inventories (in millions): Finished goods: ..." is
                # what "inventory levels" asks for, though its label never says so
                named = label_core(row.label)
                core = _words(named)
                for part in {row.label, named}:
                    if words := _words(part):
                        labels.append((i, k, words, core))
                if title := _words(row.title) - CAPTION_FRAME:
                    labels.append((i, k, title, title))
                # and each line item it joins, of two words or more ("cloud services"): the
                # query covering one names the row, the only figure the filing gives for it
                for item in conjuncts(row.label):
                    if len(words := _words(item) - STRUCTURE) >= 2:
                        joined.append((i, k, words, words))
                # "Cash and cash equivalents" is what a filing calls its cash: a word the rest
                # of the label repeats names the row ("how much cash did X have")
                if head := _words(restated_head(named)):
                    joined.append((i, k, head, head))
        # rarity is of the labels as printed: a joined line item is no label of its own
        df = Counter(t for _, _, words, _ in labels for t in words)
        n = len(labels) or 1
        idf = {t: math.log(1.0 + n / c) for t, c in df.items()}
        return cls(tuple(labels + joined), idf)

    def weight(self, label: frozenset[str]) -> float:
        """A label's rarity weight, without its ``STRUCTURE`` words: "Total net sales" is all
        covered by "sales" ("total" and "net" say where a row sits, not what it is)."""
        return sum(self.idf.get(t, 0.0) for t in label - STRUCTURE)

    def score(self, label: frozenset[str], wanted: frozenset[str]) -> float:
        """Rarity-weighted share of ``label`` the query covers, times the rarity it matched (two
        matched words beat one): 0 when it matched only ``STRUCTURE`` words. Those words weigh
        nothing in the label (``weight``) but count when the query names them: "total net
        sales" asks for the total row over "Net sales - Products"."""
        total = self.weight(label)
        matched = [self.idf.get(t, 0.0) for t in label if t in wanted]
        if not matched or total <= 0 or (label & wanted) <= STRUCTURE:
            return 0.0
        share = sum(matched) / total
        return share * sum(matched) if share >= MIN_SCORE else 0.0

    def passage_scores(self, query: str) -> dict[int, tuple[float, int]]:
        """Per passage holding an asked-for row: its best row's score and line number."""
        wanted = query_terms(query)
        out: dict[int, tuple[float, int]] = {}
        if not wanted:
            return out
        # a label that shares only ``STRUCTURE`` words with the query scores 0: never looked at
        named = [self.by_term[t] for t in wanted - STRUCTURE if t in self.by_term]
        if not named:
            return out
        # The matched weight of every label at once (a gateway's index holds ~15k labels, and a
        # common word is in thousands): only labels the query covers enough are scored exactly.
        matched = np.zeros(len(self.labels))
        for t in wanted & self.by_term.keys():
            matched[self.by_term[t]] += self.idf.get(t, 0.0)
        hit = np.zeros(len(self.labels), dtype=bool)
        hit[np.concatenate(named)] = True
        enough = matched >= (MIN_SCORE - 1e-9) * self.totals
        for passage, line, label, core in (self.labels[n] for n in np.flatnonzero(hit & enough)):
            s = self.score(label, wanted) if core & wanted else 0.0
            if s > out.get(passage, (0.0, 0))[0]:
                out[passage] = (s, line)
        return out


def best_pages(
    passage_scores: dict[int, tuple[float, int]], page_of: Iterable[tuple[int, K]]
) -> dict[K, int]:
    """Per page (``page_of`` maps each passage to its page), the passage with its best row."""
    out: dict[K, int] = {}
    for passage, key in page_of:
        if key not in out or passage_scores[passage][0] > passage_scores[out[key]][0]:
            out[key] = passage
    return out


MIN_TABLE_ROWS = 3  # a table a question may name as a whole (a breakdown, "inventory levels")
T = TypeVar("T")


def table_fit(title: str, wanted: set[str]) -> int:
    """How many of the question's metric terms a table's title names."""
    return len(set(terms(title)) & wanted)


def named_table(
    tables: dict[tuple[K, str], list[T]],
    wanted: set[str],
    tiebreak: Callable[[tuple[K, str]], float],
    first: AbstractSet[str] = frozenset(),
) -> tuple[K, str] | None:
    """Of ``tables`` keyed by (source, title), the one of ``MIN_TABLE_ROWS`` or more rows whose
    title names most of ``first`` (what a breakdown divides by: "segments"), then of ``wanted``,
    then the best ``tiebreak``; None when no title names any of ``wanted``: "revenue by segment"
    is a table whose title names revenue and whose rows name the parts."""
    fits = {k: table_fit(k[1], wanted) for k, rows in tables.items() if len(rows) >= MIN_TABLE_ROWS}
    named = [k for k, fit in fits.items() if fit > 0]
    return (
        max(named, key=lambda k: (table_fit(k[1], set(first)), fits[k], tiebreak(k)))
        if named
        else None
    )


__all__ = [
    "MIN_SCORE",
    "MIN_TABLE_ROWS",
    "LabelIndex",
    "best_pages",
    "conjuncts",
    "core_terms",
    "flow_line",
    "is_flow",
    "label_core",
    "named_table",
    "query_terms",
    "restated_head",
    "table_fit",
]
