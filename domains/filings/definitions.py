"""Line items a filing defines in its own words: "Technology and infrastructure costs include
payroll and related expenses for employees involved in the research and development of new and
existing products" says which row holds a filer's research and development, though no row is
called that. A question asking for the defined thing is answered by the row that defines it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from deepresearch.text.sentences import split_sentences
from deepresearch.text.terms import terms

# "<Line item> [costs|expenses] (primarily) include(s) / consist(s) of / comprise(s) ..."
_DEFINES = re.compile(
    r"^(?P<item>[A-Z][\w,&' -]{2,60}?)\s+(?:costs?|expenses?)?\s*(?:primarily\s+)?"
    r"(?:includes?|consists?\s+of|comprises?|are\s+comprised\s+of)\s+(?P<body>.+)$"
)


def definitions(texts: Iterable[str]) -> list[tuple[str, str]]:
    """(line item, what it is said to include) for each sentence of ``texts`` defining one."""
    out: list[tuple[str, str]] = []
    for text in texts:
        for sentence in split_sentences(text):
            m = _DEFINES.match(sentence.strip())
            if m:
                out.append((m["item"].strip(), m["body"]))
    return out


def defined_as(wanted: set[str], labels: Iterable[str], texts: Iterable[str]) -> str:
    """The one of ``labels`` that ``texts`` define as including every one of ``wanted`` (stemmed
    terms), when no label names them itself; "" when none or more than one does."""
    labels = list(labels)
    if not wanted or any(wanted <= set(terms(label)) for label in labels):
        return ""
    found = {
        label
        for item, body in definitions(texts)
        if wanted <= set(terms(body))
        for label in labels
        if set(terms(label)) == set(terms(item))
    }
    return found.pop() if len(found) == 1 else ""


__all__ = ["defined_as", "definitions"]
