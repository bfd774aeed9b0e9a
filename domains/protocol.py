"""What knows a kind of document: the one small protocol every domain implements.

A domain is chosen per document from its content (``recognize``), never from a file's name; the
corpus index stores the choice, fetched pages and sources carry it, and the writers compose the
Answer through it (``domains.compose``). The generic domain is the default: it claims nothing,
gives no identity beyond a title and composes nothing (the writer quotes its best findings).
Implementations are plain, pure objects; only the registry (``domains/__init__.py``) loads one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

GENERIC = "generic"  # the default domain's name: what a document is until its content says more


@dataclass(frozen=True)
class Identity:
    """Who a document is by and what period it covers, as its cover says; empty where it has
    none (a manual has a title, not a filer)."""

    by: str = ""  # the author its cover names ("" when none)
    period_end: int = 0  # the end of the period it covers, as a date ordinal (0: none)


@dataclass(frozen=True)
class AnswerTask:
    """What a composer reads: the question, the cited findings ``(text, source numbers,
    section)``, the sections' headings (deep mode's sub-questions) and the sources' titles by
    number. The same for the model-free writer and a model writer's draft."""

    question: str
    findings: tuple[tuple[str, tuple[int, ...], int], ...]
    headings: tuple[str, ...] = ()
    titles: tuple[tuple[int, str], ...] = field(default=())


@dataclass(frozen=True)
class Composed:
    """A composed Answer text and the source numbers it cites; ``whole`` when it is the entire
    Answer (the generic statements), not a figure the writer follows with prose."""

    text: str
    sources: tuple[int, ...]
    whole: bool = False


class Domain(Protocol):
    """A kind of document: how to recognize it, read its identity, weigh it for a question's
    periods and compose an Answer from its evidence."""

    name: str

    def recognize(self, text: str) -> float:
        """How much ``text`` (a document's first pages) is of this kind, in [0, 1]."""
        ...

    def identity(self, cover: str, by: str) -> Identity:
        """The document's identity from its first page; ``by`` is the line the corpus's covers
        tell apart as its author (``ranking.cover_title``), kept only where the kind has one."""
        ...

    def period_weights(self, query: str, ends: np.ndarray) -> np.ndarray:
        """Per document of this kind (``ends``: each one's ``Identity.period_end``), how much it
        counts for the periods ``query`` names."""
        ...

    def compose(self, task: AnswerTask) -> Composed | None:
        """The Answer composed from the task's evidence; None leaves the writer to quote it."""
        ...


class WriteSource(Protocol):
    """A numbered source of a write task, as the seam reads it (``llm_messages.SourceText``)."""

    @property
    def n(self) -> int: ...

    @property
    def url(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def domain(self) -> str: ...


class WriteFinding(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def citations(self) -> Sequence[str]: ...


class WriteSection(Protocol):
    @property
    def heading(self) -> str: ...

    @property
    def findings(self) -> Sequence[WriteFinding]: ...


class Write(Protocol):
    """A write task as the seam reads it (``llm_messages.WriteTask``), by shape: the seam sits
    below the messages, so both writers hand theirs in as it is."""

    @property
    def query(self) -> str: ...

    @property
    def sections(self) -> Sequence[WriteSection]: ...

    @property
    def sources(self) -> Sequence[WriteSource]: ...


def cite(sources: Sequence[int]) -> str:
    """A composed line's citation markers, in the order given: ``[2][1]``."""
    return "".join(f"[{n}]" for n in sources)


__all__ = [
    "GENERIC",
    "AnswerTask",
    "Composed",
    "Domain",
    "Identity",
    "Write",
    "WriteSource",
    "cite",
]
