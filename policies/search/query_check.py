"""Which of the model's search queries are run, and so listed in a could-not-research report.

A query is model text the user sees ("What was searched: ..."), so it is held to what the rest of
the model's unsourced text is (``policies.unsourced``: no invented figure or citation), and it must
be about the sub-question: it shares at least one of the question's key terms (the same terms,
stems and equivalents source scoring weighs). A junk-speaking model's "Reply with the JSON object
now." is neither searched nor shown; when no query passes, the question itself is searched. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from deepresearch.config.trust import ScoringSettings
from deepresearch.policies import unsourced
from deepresearch.policies.search.source_scoring import coverage, key_terms, normalized_terms

MAX_QUERY_CHARS = 300  # a search query, not a paragraph


def checked_queries(proposed: Iterable[str], question: str, cfg: ScoringSettings) -> list[str]:
    """The proposed queries that pass, each once, in the model's order."""
    key = key_terms(question, cfg)
    out: list[str] = []
    for query in unsourced.vet_all(proposed, question):
        if len(query) > MAX_QUERY_CHARS or query in out:
            continue
        if key and coverage(key, normalized_terms(query)) <= 0:
            continue  # about nothing the question asks
        out.append(query)
    return out
