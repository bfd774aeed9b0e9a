"""The one rule that splits the reviewed SEC questions into a development and a validation part.

Fixed once, by the SHA-256 of the question text: a question whose hash starts with the hex digit
0-4 (five in sixteen; 48 of the 147) is held out for validation and never looked at while tuning,
since designing from its misses would fit the reader to it. The rest (99) is for development.
The bench prints every metric per part; a question never changes part.
"""

from __future__ import annotations

import hashlib

PARTS = ("development", "validation")


def part_of(question: str) -> str:
    """``validation`` when the SHA-256 of the stripped question starts with 0-4, else
    ``development``. Pass the question as its table writes it (before ``--lowercase``)."""
    digest = hashlib.sha256(question.strip().encode()).hexdigest()
    return "validation" if digest[0] in "01234" else "development"
