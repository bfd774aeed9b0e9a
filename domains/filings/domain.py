"""The financial-filing domain: periodic reports with a cover naming the filer and the period,
and statement tables. The registry (``domains``) loads it by name; nothing else imports it.
"""

from __future__ import annotations

import numpy as np

from deepresearch.domains.filings import compose as filing_compose
from deepresearch.domains.filings import periods
from deepresearch.domains.filings.recognize import filing_score
from deepresearch.domains.protocol import AnswerTask, Composed, Identity


class FilingsDomain:
    """Filings: recognized by cover and statement tables; identity is the filer and the period
    the cover states; the Answer is composed from table rows (``compose``)."""

    name = "filings"

    def recognize(self, text: str) -> float:
        return filing_score(text)

    def identity(self, cover: str, by: str) -> Identity:
        return Identity(by=by, period_end=periods.period_end(cover))

    def period_weights(self, query: str, ends: np.ndarray) -> np.ndarray:
        return periods.period_weights(query, ends)

    def compose(self, task: AnswerTask) -> Composed | None:
        found = filing_compose.compose(
            task.question, task.findings, task.headings, dict(task.titles)
        )
        return Composed(found[0], found[1]) if found else None


DOMAIN = FilingsDomain()
