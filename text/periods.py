"""Period expressions: the one pattern for dates, quarters, halves and fiscal years.

``PERIOD_RE`` finds every period expression of a text verbatim ("quarter ended July 1, 2023",
"Q3 2023", "fiscal 2022", "2022"), longest forms first, so the question decomposer can freeze them
as single tokens, the follow-up reader can carry them over and the verifier can tell a sentence
that names a period. ``FULL_DATE`` (month, day, year as groups) and ``MONTH`` are its parts, for
callers that need the date's value (``text.question``, cover dates in ``policies.ranking``) or
that must not read a date's day as a figure (``text.figures``).
"""

from __future__ import annotations

import re

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
# "July 1, 2023": groups are the month, the day and the year.
FULL_DATE = re.compile(rf"\b({MONTH})\s+(\d{{1,2}}),?\s+((?:19|20)\d{{2}})\b", re.IGNORECASE)
_DATE = rf"(?:{MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|{MONTH}\s+\d{{4}})"
_ORD = r"(?:first|second|third|fourth|1st|2nd|3rd|4th)"
_YEAR = r"(?:19|20)\d{2}"
PERIOD_RE = re.compile(
    "|".join(
        [
            rf"\b(?:(?:three|six|nine|twelve|\d{{1,2}})[- ]months?|(?:fiscal\s+)?(?:quarter|year"
            rf"|period)|weeks?)\s+end(?:ed|ing)\s+(?:on\s+)?{_DATE}",
            rf"\b{_ORD}\s+(?:fiscal\s+)?quarter(?:\s+of)?(?:\s+(?:fiscal\s+(?:year\s+)?)?{_YEAR})?",
            rf"\b{_ORD}\s+half(?:\s+of)?(?:\s+(?:fiscal\s+)?{_YEAR})?",
            rf"\bQ[1-4]\s*(?:FY\s*)?'?(?:{_YEAR}|\d{{2}})\b(?![-\w])",  # not "Q3 10-Q"
            rf"\b(?:FY|fiscal\s+(?:year\s+)?)\s*'?(?:{_YEAR}|\d{{2}})\b",
            rf"\bH[12]\s*{_YEAR}\b",
            rf"\b{_DATE}\b",
            r"\bQ[1-4]\b",
            rf"\b{_YEAR}\b",
        ]
    ),
    re.IGNORECASE,
)


def find_periods(text: str) -> list[str]:
    """Period expressions of ``text``, verbatim, in order."""
    return [m.group(0) for m in PERIOD_RE.finditer(text)]


def month_number(name: str) -> int:
    """1-12 for a month name or its abbreviation ("Sept." -> 9)."""
    return next(i for i, month in enumerate(MONTHS, 1) if month.startswith(name[:3].lower()))


__all__ = ["FULL_DATE", "MONTH", "MONTHS", "PERIOD_RE", "find_periods", "month_number"]
