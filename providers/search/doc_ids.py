"""Corpus document ids (``doc:<relpath>#page=N``), where they point, and the documents they name.

Kept apart from the index: every fetcher, the URL pool and the reports read ids, and none of them
needs BM25 to do it.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepresearch.errors import FetchError
from deepresearch.providers.documents.extract import PAGE_LABELS
from deepresearch.providers.search.corpus_store import check_relative


@dataclass(frozen=True)
class DocEntry:
    relpath: str
    sha256: str
    kind: str  # "pdf" | "html" | "text" | an office kind (extract.OFFICE_SUFFIXES)
    pages: int

    @property
    def name(self) -> str:
        return self.relpath.rsplit("/", 1)[-1]


def doc_id(relpath: str, page: int, kind: str) -> str:
    return f"doc:{relpath}#page={page}" if kind in PAGE_LABELS else f"doc:{relpath}"


def doc_location(relpath: str, page: int, kind: str) -> str:
    """``a.pdf, p. 2``, ``deck.pptx, slide 3``, ``book.xlsx, sheet 2``, ``b.epub, section 4``."""
    label = PAGE_LABELS.get(kind)
    return f"{relpath}, {label} {page}" if label else relpath


def parse_doc_id(url: str) -> tuple[str, int | None]:
    """``doc:<relpath>[#page=N]`` -> (relpath, page); refuse paths that could leave the corpus."""
    if not url.startswith("doc:"):
        raise FetchError(url, "not a corpus document id")
    rel, _, fragment = url[4:].partition("#")
    page: int | None = None
    if fragment:
        key, _, value = fragment.partition("=")
        if key != "page" or not value.isdigit() or int(value) < 1:
            raise FetchError(url, f"bad page reference {fragment!r}")
        page = int(value)
    check_relative(url, rel, "document", "corpus")
    return rel, page


__all__ = ["DocEntry", "doc_id", "doc_location", "parse_doc_id"]
