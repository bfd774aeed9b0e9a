"""The generic domain: what every document is unless its content says it is of another kind.

It claims no document (``recognize`` is 0: the default needs no evidence), gives no identity
(a manual's first line is a title, not an author), weighs no period, and composes the Answer
from the statements of its findings that answer (``compose``).
"""

from __future__ import annotations

import numpy as np

from deepresearch.domains.protocol import GENERIC, AnswerTask, Composed, Identity


class GenericDomain:
    name = GENERIC

    def recognize(self, text: str) -> float:
        return 0.0

    def identity(self, cover: str, by: str) -> Identity:
        return Identity()

    def period_weights(self, query: str, ends: np.ndarray) -> np.ndarray:
        return np.ones(len(ends))

    def compose(self, task: AnswerTask) -> Composed | None:
        from deepresearch.domains.generic import compose  # loaded when something is composed

        return compose.compose(task)


DOMAIN = GenericDomain()
