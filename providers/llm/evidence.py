"""Which candidate units may become evidence: boilerplate never does, and neither does a unit
that shares nothing with the question but the entity's name or a period.

Separate from ``sentences`` (how units are cut and scored) because it needs the question's
analysis and the documents the units came from (repetition across documents is a template).
"""

from __future__ import annotations

from deepresearch.text.boilerplate import boilerplate, document_of, off_topic
from deepresearch.text.question import analyze
from deepresearch.text.sentences import Unit, build_units
from deepresearch.text.terms import terms


def evidence_units(question: str, sources: list[tuple[int, str, str]]) -> list[Unit]:
    """The units of ``(n, url, text)`` sources that may be evidence for ``question``.

    Off-topic filtering falls back to the unfiltered units when it would leave none, so a
    question phrased unlike its sources still gets the scorer's best guess."""
    units = build_units([(n, text) for n, _, text in sources])
    docs = {n: document_of(url) for n, url, _ in sources}
    flags = boilerplate([(docs.get(u.source, str(u.source)), u.text) for u in units])
    kept = [u for u, bad in zip(units, flags, strict=True) if not bad]
    q = analyze(question)
    # the first name is the subject (a filing calls it "the Company"); later names are what is
    # measured of it ("Apple's Services segment") or its peers, and count as topic words
    wanted = {t for word in (*q.metric_words, *q.entities[1:]) for t in terms(word)}
    on_topic = [u for u in kept if not off_topic(u.terms, wanted)]
    return on_topic or kept


__all__ = ["evidence_units"]
