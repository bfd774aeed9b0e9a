"""Text into passages, tokens and snippets: the pure half of the local BM25 index.

Index and query must tokenize the same way, so both go through ``tokenize`` here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import bm25s

from deepresearch.text.terms import stem

SNIPPET_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def _stem(words: list[str]) -> list[str]:
    """The project's one stemmer (``text.terms.stem``): a query's "operations" finds a page's
    "operating activities", as the scorers that rank the page's rows see it."""
    return [stem(w) for w in words]


def tokenize(texts: list[str]) -> list[list[str]]:
    tokens = bm25s.tokenize(
        texts, stopwords="en", stemmer=_stem, return_ids=False, show_progress=False
    )
    return [list(t) for t in tokens]


def split_passages(text: str, size: int) -> list[str]:
    """Passages of about ``size`` chars, cut at line ends, then sentence ends, then spaces."""
    pieces: list[str] = []
    for line in text.split("\n"):
        if len(line) <= size:
            pieces.append(line)
            continue
        for sentence in _SENTENCE_END.split(line):
            while len(sentence) > size:
                cut = sentence.rfind(" ", size // 2, size)
                cut = cut if cut > 0 else size
                pieces.append(sentence[:cut])
                sentence = sentence[cut:].lstrip()
            pieces.append(sentence)
    passages: list[str] = []
    current: list[str] = []
    length = 0
    for piece in pieces:
        if current and length + len(piece) + 1 > size:
            passages.append("\n".join(current))
            current, length = [], 0
        current.append(piece)
        length += len(piece) + 1
    if current:
        passages.append("\n".join(current))
    return [p.strip() for p in passages if p.strip()]


def _best_line(text: str, terms: list[str]) -> str | None:
    """The line holding the most distinct query terms, when that beats the passage's first
    line: a passage of table rows then shows the row asked for, not the header lines above it."""
    lines = text.lower().split("\n")
    if len(lines) < 2:
        return None
    unique = set(terms)
    counts = [sum(1 for t in unique if t in line) for line in lines]
    best = max(range(len(lines)), key=lambda i: (counts[i], -i))
    if best == 0 or counts[best] <= counts[0]:
        return None
    return " ".join(text.split("\n")[best].split())


def snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` chars of ``text``, starting shortly before the first query term in it."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    low = flat.lower()
    line = _best_line(text, terms)
    if line is not None:  # a table row (or line) naming most of the query: start right there
        start = max(0, flat.find(line))
    else:
        found = [i for i in (low.find(t) for t in terms) if i >= 0]
        start = max(0, min(found, default=0) - width // 5)
        if start > 0:
            start = flat.find(" ", start) + 1 or start
    end = min(len(flat), start + width)
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


def passage_table(docs: Sequence[tuple[str, str, str, Sequence[str]]], size: int) -> dict[str, Any]:
    """The index's ``meta``: each (relpath, sha256, kind, pages) document and its passages."""
    entries, p_doc, p_page, p_text = [], [], [], []
    for d, (relpath, sha, kind, pages) in enumerate(docs):
        entries.append([relpath, sha, kind, len(pages)])
        for page, text in enumerate(pages, start=1):
            for passage in split_passages(text, size):
                p_doc.append(d)
                p_page.append(page)
                p_text.append(passage)
    return {"docs": entries, "passages": {"doc": p_doc, "page": p_page, "text": p_text}}
