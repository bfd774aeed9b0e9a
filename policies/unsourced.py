"""Model text with no passage to check it against: only what asserts nothing new reaches a user.

The citation verifier (``policies.verification.verify``) checks the report's sentences against the
passages they cite. Other model text reaches users too (the gate's reply, plan items, evaluator
reasons, section headings, search queries a could-not-research report lists) and has nothing to
cite. Such text may not state what its *grounds* (the user's query, the run's own questions, the
passages read) do not: a sentence that carries a citation marker (text with no sources cannot
cite) or states a figure the grounds lack is dropped; text left empty is replaced by the caller's
product wording. The same check as the verifier's figure rule (``text.figures.missing_figures``),
with the grounds as the passage. The gate, planner, evaluator, synthesis and search's query check
all use it, so it sits beside ``urls`` at the root of ``policies``, below them all. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from deepresearch.text.figures import missing_figures
from deepresearch.text.sentences import split_sentences

# "[99]", "[1, 2]", "[doc:a.pdf#p3]", "[https://...]", "[source 4]": citation-like brackets.
_CITATION = re.compile(
    r"\[\s*(?:\d+(?:\s*[,;–-]\s*\d+)*|(?:https?://|doc:)[^\]\n]*|(?:source|ref|src)\s*\d+)\s*\]",
    re.IGNORECASE,
)


def states_nothing_new(sentence: str, grounds: str) -> bool:
    """True when ``sentence`` cites nothing and states no figure ``grounds`` lacks."""
    return not _CITATION.search(sentence) and not missing_figures(sentence, grounds)


def vet(text: str, grounds: str = "", fallback: str = "") -> str:
    """``text`` without the sentences that assert beyond ``grounds``; ``fallback`` if none is left."""
    kept = [s for s in split_sentences(" ".join(text.split())) if states_nothing_new(s, grounds)]
    return " ".join(kept) or fallback


def vet_all(texts: Iterable[str], grounds: str = "") -> list[str]:
    """Each text vetted; the ones left empty are dropped (plan items, queries, new sub-questions)."""
    return [kept for text in texts if (kept := vet(text, grounds))]


def grounds_of(*parts: str | Iterable[str]) -> str:
    """One grounds text from strings and lists of strings."""
    out: list[str] = []
    for part in parts:
        out.extend([part] if isinstance(part, str) else part)
    return "\n".join(out)


def vet_summary(summary: str, question: str, quotes: Iterable[str]) -> str:
    """A researcher's summary, shown as the evaluator's grounds and in steering notes: only what
    its question and the passages its findings cite hold."""
    return vet(summary, grounds_of(question, quotes))
