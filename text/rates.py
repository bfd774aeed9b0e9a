"""Whether a question asks for a rate and whether a table row states it: "effective tax rate"
is answered by a percent, never by an amount that merely shares a word with it. Shared by the
extractive writer's quotes and the filing composer. Pure.
"""

from __future__ import annotations

from deepresearch.text.question import Question, metric_terms
from deepresearch.text.tables import TableRow
from deepresearch.text.terms import terms

_RATE_WORDS = frozenset(terms("rate rates percentage percent"))


def asks_rate(q: Question) -> bool:
    """Whether the asked metric is a rate ("effective tax rate", "interest rate"): its answer
    is a percent, never an amount that merely shares a word with it. A share of a whole
    ("what percentage of revenue did Services contribute") is answered by the two amounts."""
    return not q.share_of and bool(metric_terms(q) & _RATE_WORDS)


def states_rate(row: TableRow, q: Question) -> bool:
    """Whether a row states the asked rate: a percent cell or unit ("2.85% Notes" is a name,
    not a rate), under a label or title naming what the rate is of ("tax" of "effective tax
    rate"; "interest rates" of a notes table is another rate)."""
    unit = row.unit.lower()
    percent = any(v.strip().endswith("%") for _, v in row.cells) or "%" in unit or "percent" in unit
    of = metric_terms(q) - _RATE_WORDS
    named = set(terms(f"{row.label} {row.title}"))
    return percent and (not of or bool(of & named))
