"""BM25 over the passages of a corpus folder, built once and then loaded from the cache.

The index is cached under a fingerprint of (every file's relpath and content hash, passage size,
index format), so an unchanged corpus opens without extraction or indexing, in this process or in a
Ray actor elsewhere (``load_cached``). Hits are grouped by page so one long page cannot fill the
result list. Passage scores are weighted by a document prior (is the whole document about the
query's names and rare terms?) and, for "latest ..." queries, by the document's cover date.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from deepresearch import domains
from deepresearch.errors import CorpusError, FetchBlocked, FetchError, StorageError
from deepresearch.policies.search.ranking import (
    DOC_PRIOR_WEIGHT,
    document_prior,
    identity_groups,
    identity_weights,
    prior_names,
    recency_weights,
    round_robin,
    wants_latest,
)
from deepresearch.providers.documents.extract import PAGE_LABELS, ExtractionPool
from deepresearch.providers.documents.extracted_doc import ExtractedDoc
from deepresearch.providers.search.corpus_covers import read_covers
from deepresearch.providers.search.corpus_store import (
    INDEX_VERSION,
    CorpusCache,
    Warn,
    atomic_write,
    gather_documents,
    inside,
    read_json,
    scan_corpus,
)
from deepresearch.providers.search.doc_ids import DocEntry, doc_id, doc_location, parse_doc_id
from deepresearch.providers.search.passages import passage_table, snippet, tokenize
from deepresearch.schemas import FetchedDoc, SearchHit
from deepresearch.storage.private_files import PRIVATE_FILE, make_private_dirs
from deepresearch.text.boilerplate import boilerplate_share, template_pages
from deepresearch.text.line_items import LabelIndex, best_pages, flow_line
from deepresearch.text.question import flow_asked

TEMPLATE_SHARE = 0.5  # a passage this much boilerplate (by line) is no search hit
KEPT_INDEXES = 4  # loaded indexes a process keeps (by corpus, fingerprint and meta.json's stat)
_LOADED: dict[tuple[str, str, int, int, int], CorpusIndex] = {}
_LOADING = threading.Lock()  # one load at a time: 32 runs prepared at once parse meta.json once


class CorpusIndex:
    """A loaded index: search passages, resolve document ids to cached page text."""

    def __init__(
        self, corpus_dir: Path, root: Path, cache: CorpusCache, retriever: Any, meta: Any
    ) -> None:
        self._corpus_dir = corpus_dir
        self._root = root
        self._cache = cache
        self._bm25 = retriever
        self._docs = [DocEntry(str(r), str(s), str(k), int(n)) for r, s, k, n in meta["docs"]]
        self._by_rel = {d.relpath: i for i, d in enumerate(self._docs)}
        self._p_doc = np.asarray(meta["passages"]["doc"], dtype=np.int32)
        self._p_page = np.asarray(meta["passages"]["page"], dtype=np.int32)
        self._p_text: list[str] = list(meta["passages"]["text"])
        self._pages_cache: dict[str, tuple[str, ...]] = {}
        # each document's kind, recognized from its content when the index was built
        self._domains: list[str] = [str(k) for k in meta["domains"]]
        covers = read_covers(
            self._p_doc, self._p_page, self._p_text, self._docs, self._bm25, self._domains
        )
        self._doc_dates, self._covers, self._doc_ends = covers.dates, covers.names, covers.ends
        self._by = covers.titles  # who each document is by, as its cover says
        # built on the first search that needs it, once for every copy ``_load`` hands out
        self._labels: list[LabelIndex] = []
        self._templates: dict[int, bool] = {}  # passage -> mostly boilerplate, as searches meet it
        self._signed: list[frozenset[tuple[int, int]]] = []  # template pages, on the first search
        self.built = False  # True when this open extracted or indexed anything

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        corpus_dir: Path,
        cache_dir: Path,
        *,
        passage_chars: int,
        pool_factory: Callable[[], ExtractionPool],
        on_warning: Callable[[str, str], None] | None = None,
    ) -> CorpusIndex:
        """Load the cached index for this corpus, or extract and index what is new."""
        return cls._open(corpus_dir, cache_dir, passage_chars, pool_factory, on_warning)

    @classmethod
    def load_cached(cls, corpus_dir: Path, cache_dir: Path, passage_chars: int) -> CorpusIndex:
        """Open an index another process built; ``CorpusError`` when none matches the corpus."""
        return cls._open(corpus_dir, cache_dir, passage_chars, None, None)

    @classmethod
    def _open(
        cls,
        corpus_dir: Path,
        cache_dir: Path,
        passage_chars: int,
        pool_factory: Callable[[], ExtractionPool] | None,
        on_warning: Warn | None,
    ) -> CorpusIndex:
        warn: Warn = on_warning or (lambda _kind, _msg: None)
        cache = CorpusCache(cache_dir.expanduser().resolve())
        root, files = scan_corpus(corpus_dir, cache.dir, warn)
        hashes = cache.hashes(root, files, warn)
        index_dir = cache.index_dir(hashes, passage_chars)
        loaded = cls._load(corpus_dir, root, cache, index_dir)
        if loaded is not None:
            for rel, reason in cache.failures(files, hashes, loaded._by_rel.keys()):
                warn("extract_failed", f"{rel}: {reason}")
            return loaded
        if pool_factory is None:
            raise CorpusError(
                str(corpus_dir), "no cached index matches this corpus; build it first"
            )
        docs = gather_documents(files, hashes, cache, pool_factory, warn)
        if not docs:
            raise CorpusError(str(corpus_dir), f"no readable document among {len(files)} files")
        meta = passage_table(
            [(f.relpath, sha, f.kind, d.pages) for f, sha, d in docs], passage_chars
        )
        meta["domains"] = [domains.recognize_pages(d.pages) for _, _, d in docs]  # by content
        if not meta["passages"]["text"]:
            raise CorpusError(str(corpus_dir), "no text could be extracted from any document")
        tokens = tokenize(_indexed_texts(meta))
        if not any(tokens):  # bm25s cannot build a vocabulary of nothing
            raise CorpusError(
                str(corpus_dir),
                f"no document has a word to index ({len(docs)} read: only symbols, numbers "
                "or stop words)",
            )
        try:
            _build(meta, tokens, cache.dir / "bm25", index_dir, passage_chars)
        except OSError as exc:
            raise StorageError(str(cache.dir), f"cannot write the index cache ({exc})") from None
        index = cls._load(corpus_dir, root, cache, index_dir)
        if index is None:
            raise CorpusError(str(corpus_dir), f"index cache under {cache.dir} cannot be read back")
        index.built = True
        return index

    @classmethod
    def _load(
        cls, corpus_dir: Path, root: Path, cache: CorpusCache, index_dir: Path
    ) -> CorpusIndex | None:
        """The index in ``index_dir``; one this process loaded before is shared (a service opens
        the same corpus for every run), unless its ``meta.json`` was rewritten since."""
        try:
            info = (index_dir / "meta.json").stat()
        except OSError:
            return None
        key = (str(corpus_dir), str(index_dir), info.st_ino, info.st_size, info.st_mtime_ns)
        if key in _LOADED:
            return copy.copy(_LOADED[key])  # its own ``built`` flag, the same data
        with _LOADING:  # the thread this one waited for may have loaded it
            if key not in _LOADED:
                meta = read_json(index_dir / "meta.json")
                if not isinstance(meta, dict) or meta.get("version") != INDEX_VERSION:
                    return None
                try:
                    retriever = bm25s.BM25.load(str(index_dir), mmap=True, show_progress=False)
                    _LOADED[key] = cls(corpus_dir, root, cache, retriever, meta)
                except (OSError, ValueError, KeyError, TypeError):
                    return None
                while len(_LOADED) > KEPT_INDEXES:
                    _LOADED.pop(next(iter(_LOADED)))
            return copy.copy(_LOADED[key])

    # ------------------------------------------------------------------ queries

    @property
    def corpus_dir(self) -> Path:
        return self._corpus_dir

    @property
    def documents(self) -> int:
        return len(self._docs)

    @property
    def pages(self) -> int:
        return sum(d.pages for d in self._docs)

    @property
    def passages(self) -> int:
        return len(self._p_text)

    def domains(self) -> dict[str, str]:
        """Each document's domain (``deepresearch.domains``), by its path in the corpus."""
        return {d.relpath: self._domains[i] for i, d in enumerate(self._docs)}

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """One hit per (file, page), ranked by its best passage's BM25 score."""
        tokens = tokenize([query])[0]
        ids = self._bm25.get_tokens_ids(tokens)
        if not ids or limit <= 0:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        names = set(
            self._bm25.get_tokens_ids(tokenize([" ".join(prior_names(query, self._covers))])[0])
        )
        prior = self.doc_prior(ids, names)
        periods = domains.period_weights(query, self._domains, self._doc_ends)
        identity = identity_weights(query, self._covers) * periods
        scores = scores * (1.0 + DOC_PRIOR_WEIGHT * prior[self._p_doc]) * identity[self._p_doc]
        recency = np.ones(len(self._docs))
        if wants_latest(query):
            recency = recency_weights(prior * identity, self._doc_dates)
            scores = scores * recency[self._p_doc]
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        groups = identity_groups(query, self._covers)
        best: dict[tuple[int, int], int] = {}  # (doc, page) -> its best passage, best first
        for i in order.tolist():
            if self._template(i):
                continue
            best.setdefault((int(self._p_doc[i]), int(self._p_page[i])), i)
            if len(best) >= limit * max(1, len(set(groups))):
                break
        # a comparison ("Acme and Zeta"): each entity's best pages in turn, not one entity's
        keys = round_robin(list(best), [groups[d] for d, _ in best])
        items = self._line_item_pages(query, identity * recency, prior, limit // 2)
        keys = list(dict.fromkeys([*items, *keys]))[:limit]
        terms = [t for t in tokens if len(t) > 2] or tokens
        return [
            self._hit(key, best[key], terms, rank)
            if key not in items
            else self._hit(key, items[key][0], terms, rank, items[key][1])
            for rank, key in enumerate(keys, 1)
        ]

    def plain_passages(self, query: str, limit: int) -> list[str]:
        """The ``limit`` best passages by BM25 alone (no priors, no identity, no templates): the
        baseline the reader is measured against (``bench/sec10q.py``)."""
        ids = self._bm25.get_tokens_ids(tokenize([query])[0])
        if not ids or limit <= 0:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        candidates = np.flatnonzero(scores > 0)
        order = candidates[np.argsort(-scores[candidates], kind="stable")][:limit]
        return [self._p_text[i] for i in order.tolist()]

    def _template(self, i: int) -> bool:
        """Whether passage ``i`` is mostly boilerplate lines (a table of contents, signatures,
        certifications) or on a signed page most filings carry (``template_pages``): it may
        share every word of a query and still answer nothing."""
        if (flag := self._templates.get(i)) is None:
            page = (int(self._p_doc[i]), int(self._p_page[i]))
            signed = self.signed_pages()
            flag = boilerplate_share(self._p_text[i]) >= TEMPLATE_SHARE or page in signed
            self._templates[i] = flag
        return flag

    def signed_pages(self) -> frozenset[tuple[int, int]]:
        """The (document, page) keys of the signed pages most documents carry
        (``template_pages``), found by the first search (a second of CPU on a large corpus, which
        a service's warm-up pays instead) and shared by every copy of this loaded index."""
        if not self._signed:
            keys = zip(self._p_doc.tolist(), self._p_page.tolist(), strict=True)
            self._signed.append(template_pages(zip(keys, self._p_text, strict=True)))
        return self._signed[0]

    def labels(self) -> LabelIndex:
        """The row labels of every passage (``text.line_items``), built by the first search that
        needs them and shared by every copy of this loaded index."""
        if not self._labels:
            self._labels.append(LabelIndex.build(self._p_text))
        return self._labels[0]

    def _line_item_pages(
        self, query: str, identity: np.ndarray, prior: np.ndarray, limit: int
    ) -> dict[tuple[int, int], tuple[int, str]]:
        """Up to ``limit`` pages holding a table row the query names (``text.line_items``), each
        document's best page in turn, of the documents the query is about (by their cover, and
        at least half as much as the one most about it, by ``doc_prior``); -> (passage, row)."""
        if limit <= 0:
            return {}
        scores = self.labels().passage_scores(query)
        pages = best_pages(
            scores, ((i, (int(self._p_doc[i]), int(self._p_page[i]))) for i in scores)
        )
        # a balance ("inventory levels") or a flow ("capital expenditures"), not the other
        if (flow := flow_asked(query)) is not None:
            pages = {
                k: i
                for k, i in pages.items()
                if flow_line(self._p_text[i].split("\n")[scores[i][1]]) == flow
            }
        about = (identity >= 1.0) & (prior >= 0.5 * float(prior.max(initial=0.0)))
        weight = 1.0 + DOC_PRIOR_WEIGHT * prior
        ranked = sorted(
            (k for k in pages if about[k[0]]),
            key=lambda k: (-scores[pages[k]][0] * weight[k[0]], k),
        )
        out: dict[tuple[int, int], tuple[int, str]] = {}
        for key in round_robin(ranked, [d for d, _ in ranked])[:limit]:
            i = pages[key]
            out[key] = (i, self._p_text[i].split("\n")[scores[i][1]])
        return out

    def _hit(
        self, key: tuple[int, int], i: int, terms: list[str], rank: int, row: str = ""
    ) -> SearchHit:
        """A page hit; a page found for a table row shows that row (the reason it was found)."""
        doc, page = self._docs[key[0]], key[1]
        return SearchHit(
            url=doc_id(doc.relpath, page, doc.kind),
            title=doc.name,
            snippet=snippet(row, terms) if row else snippet(self._p_text[i], terms),
            provider="local",
            rank=rank,
            location=doc_location(doc.relpath, page, doc.kind),
        )

    def doc_prior(self, ids: list[int], names: AbstractSet[int] = frozenset()) -> np.ndarray:
        """Per document, in [0, 1]: how much the whole document is about the query's terms
        (``ranking.document_prior`` over each term's passage count per document)."""
        indices, indptr = self._bm25.scores["indices"], self._bm25.scores["indptr"]
        counts = []
        for t in dict.fromkeys(ids):
            rows = np.asarray(indices[int(indptr[t]) : int(indptr[t + 1])])
            counts.append((np.bincount(self._p_doc[rows], minlength=len(self._docs)), t in names))
        return document_prior(counts) if counts else np.zeros(len(self._docs))

    def page_text(self, url: str) -> FetchedDoc:
        """The full text of the page a ``doc:`` id names, from the cache; never reads outside."""
        rel, page = parse_doc_id(url)
        index = self._by_rel.get(rel)
        if index is None:
            raise FetchError(url, "no such document in the corpus")
        if not inside(self._root, self._root / rel):
            raise FetchBlocked(url, "document resolves outside the corpus folder")
        doc = self._docs[index]
        if page is None:
            if doc.kind in PAGE_LABELS:
                raise FetchError(url, f"a {doc.kind.upper()} document id needs #page=N")
            page = 1
        if page > doc.pages:
            raise FetchError(url, f"page {page} out of range (1-{doc.pages})")
        pages = self._pages_cache.get(doc.sha256)
        if pages is None:
            cached = self._cache.load_doc(doc.sha256, doc.kind)
            if not isinstance(cached, ExtractedDoc):
                raise FetchError(url, "document text is no longer in the cache")
            pages = self._pages_cache[doc.sha256] = cached.pages
        return FetchedDoc(
            url=doc_id(rel, page, doc.kind),
            title=doc.name,
            by=self._by[index],
            domain=self._domains[index],
            location=doc_location(rel, page, doc.kind),
            text=pages[page - 1],
            content_type="text/plain",
            provider="local",
        )


def _indexed_texts(meta: dict[str, Any]) -> list[str]:
    """Each passage as BM25 indexes it: its file's name (without extension) above its text."""
    names = [e[0].rsplit("/", 1)[-1].rsplit(".", 1)[0] for e in meta["docs"]]
    passages = meta["passages"]
    return [f"{names[d]}\n{t}" for d, t in zip(passages["doc"], passages["text"], strict=True)]


def _build(
    meta: dict[str, Any], tokens: list[list[str]], parent: Path, index_dir: Path, passage_chars: int
) -> None:
    """Index and publish atomically: write a temp folder, then rename it to its fingerprint."""
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    make_private_dirs(parent)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=".build-"))  # 0700
    try:
        retriever.save(str(tmp), show_progress=False)
        for saved in tmp.iterdir():  # bm25s writes with the umask: the index holds corpus text
            os.chmod(saved, PRIVATE_FILE)
        payload = {"version": INDEX_VERSION, "passage_chars": passage_chars, **meta}
        atomic_write(
            tmp / "docs.json", json.dumps(meta["docs"]).encode()
        )  # corpus_store.index_is_fresh reads it
        atomic_write(tmp / "meta.json", json.dumps(payload).encode())
        if index_dir.exists():  # left by an older build that cannot be loaded any more
            shutil.rmtree(index_dir, ignore_errors=True)
        try:
            tmp.rename(index_dir)
        except OSError:
            if not (index_dir / "meta.json").exists():
                raise  # not a lost race with another builder: a real failure
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
