"""The domain registry: which kind of document each one is, and the one way core code reaches
a domain's knowledge.

Core modules import this registry and ``domains.protocol``, never an implementation: each
(``domains/<name>/domain.py``, exposing ``DOMAIN``) is imported on first use, by name. Which
domain applies is decided per document from its content (``recognize``); evidence from
documents of several kinds is composed by the kind most of it is (``compose``), so a corpus
mixing filings and manuals reads each as what it is.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from deepresearch.domains.protocol import (
    GENERIC,
    AnswerTask,
    Composed,
    Domain,
    Identity,
    Write,
    WriteSource,
)

KNOWN = ("filings",)  # the domains a document's content may claim, besides the generic default
RECOGNIZED = 0.5  # a domain's ``recognize`` score that claims a document
RECOGNITION_PAGES = 12  # a document's first pages are read to recognize it
_LOADED: dict[str, Domain] = {}

Finding = tuple[str, tuple[int, ...], int]  # (text, source numbers, section)


def domain(name: str) -> Domain:
    """The domain called ``name``, imported on first use; an unknown name (an index of an
    older version) is the generic domain."""
    name = name if name in KNOWN else GENERIC
    if name not in _LOADED:
        module = importlib.import_module(f"deepresearch.domains.{name}.domain")
        _LOADED[name] = module.DOMAIN
    return _LOADED[name]


def recognize(text: str) -> str:
    """The name of the domain a document is, from its text (its first pages): the known domain
    scoring highest, at least ``RECOGNIZED``, else the generic one."""
    best, name = 0.0, GENERIC
    for known in KNOWN:
        score = domain(known).recognize(text)
        if score >= RECOGNIZED and score > best:
            best, name = score, known
    return name


def recognize_pages(pages: Sequence[str]) -> str:
    """``recognize`` of a document's first ``RECOGNITION_PAGES`` pages."""
    return recognize("\n".join(pages[:RECOGNITION_PAGES]))


def identity(name: str, cover: str, by: str) -> Identity:
    """The identity domain ``name`` reads from a document's cover (see ``Domain.identity``)."""
    return domain(name).identity(cover, by)


def period_weights(query: str, names: Sequence[str], ends: np.ndarray) -> np.ndarray:
    """Per document (``names``: each one's domain; ``ends``: its period end), how much it counts
    for the periods ``query`` names: each domain weighs its own documents."""
    out = np.ones(len(names))
    kinds = np.asarray(names)
    for name in dict.fromkeys(names):
        if name != GENERIC:
            mask = kinds == name
            out[mask] = domain(name).period_weights(query, ends[mask])
    return out


def of_sources(sources: Iterable[WriteSource]) -> dict[int, str]:
    """Source number -> the domain of its document."""
    return {s.n: s.domain or GENERIC for s in sources}


def of_evidence(
    findings: Sequence[Finding], by_source: Mapping[int, str]
) -> list[tuple[str, list[Finding]]]:
    """The findings grouped by the domain of their sources (a finding citing documents of two
    kinds is of the first that is not generic), the largest group first."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        kinds = [by_source.get(n, GENERIC) for n in finding[1]]
        kind = next((k for k in kinds if k != GENERIC), GENERIC)
        groups.setdefault(kind, []).append(finding)
    return sorted(groups.items(), key=lambda item: -len(item[1]))


def answer_task(task: Write) -> AnswerTask:
    """What a composer reads of a write task: its cited findings with their source numbers and
    section, the sections' headings and the sources' titles."""
    numbers = {s.url: s.n for s in task.sources}
    findings = [
        (f.text, tuple(sorted({numbers[u] for u in f.citations if u in numbers})), si)
        for si, section in enumerate(task.sections)
        for f in section.findings
    ]
    return AnswerTask(
        question=task.query,
        findings=tuple(f for f in findings if f[1]),
        headings=tuple(s.heading for s in task.sections),
        titles=tuple((s.n, s.title) for s in task.sources),
    )


def compose(task: Write) -> Composed | None:
    """The Answer of a write task composed through its evidence's domain: what the model-free
    writer states and a model writer is shown as its draft (``compose_evidence``)."""
    return compose_evidence(answer_task(task), of_sources(task.sources))


def compose_evidence(task: AnswerTask, by_source: Mapping[int, str]) -> Composed | None:
    """The Answer composed by the domain of the task's evidence: each domain present, the one
    holding the most findings first, composes from its own findings; the first that composes
    wins, a specific domain before the generic one (a filing's figures over its statements).
    None leaves the writer to quote findings."""
    groups = of_evidence(task.findings, by_source)
    groups.sort(key=lambda item: item[0] == GENERIC)  # stable: the largest specific one first
    for name, findings in groups:
        found = domain(name).compose(replace(task, findings=tuple(findings)))
        if found is not None:
            return found
    return None


__all__ = [
    "GENERIC",
    "KNOWN",
    "AnswerTask",
    "Composed",
    "Domain",
    "Identity",
    "answer_task",
    "compose",
    "compose_evidence",
    "domain",
    "identity",
    "of_evidence",
    "of_sources",
    "period_weights",
    "recognize",
    "recognize_pages",
]
