"""Period expressions: the one pattern for dates, quarters, halves and fiscal years.

``PERIOD_RE`` finds every period expression of a text verbatim ("quarter ended July 1, 2023",
"Q3 2023", "fiscal 2022", "2022"), longest forms first, so the question decomposer can freeze them
as single tokens, the follow-up reader can carry them over and the verifier can tell a sentence
that names a period. ``FULL_DATE`` (month, day, year as groups) and ``MONTH`` are its parts, for
callers that need the date's value (cover dates in ``policies.ranking``) or that must not read
a date's day as a figure (``text.figures``). ``periods_of`` reads each period of a text as its
parts (``Period``: a date, a quarter and year, a fiscal year, a span of months such as "the
first nine months"), for the question's analysis (``text.question``) and the Answer's columns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

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
_YEAR_WORD = r"(?:19|20)\d{2}"
PERIOD_RE = re.compile(
    "|".join(
        [
            rf"\b(?:(?:three|six|nine|twelve|\d{{1,2}})[- ]months?|(?:fiscal\s+)?(?:quarter|year"
            rf"|period)|weeks?)\s+end(?:ed|ing)\s+(?:on\s+)?{_DATE}",
            rf"\b{_ORD}\s+(?:fiscal\s+)?quarter(?:\s+of)?(?:\s+(?:fiscal\s+(?:year\s+)?)?{_YEAR_WORD})?",
            rf"\b{_ORD}\s+half(?:\s+of)?(?:\s+(?:fiscal\s+)?{_YEAR_WORD})?",
            rf"\bQ[1-4]\s*(?:FY\s*)?'?(?:{_YEAR_WORD}|\d{{2}})\b(?![-\w])",  # not "Q3 10-Q"
            rf"\b(?:FY|fiscal\s+(?:year\s+)?)\s*'?(?:{_YEAR_WORD}|\d{{2}})\b",
            rf"\bH[12]\s*{_YEAR_WORD}\b",
            rf"\b{_DATE}\b",
            r"\bQ[1-4]\b",
            rf"\b{_YEAR_WORD}\b",
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


_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
}
_QUARTER = re.compile(
    r"\b(?:Q([1-4])\s*(?:FY\s*|fiscal\s+(?:year\s+)?)?'?((?:19|20)\d{2}|\d{2}(?![\w-]))?"
    r"|((?:19|20)\d{2})\s*Q([1-4])"
    r"|(first|second|third|fourth|1st|2nd|3rd|4th)\s+(fiscal\s+)?quarter"
    r"(?:\s+of)?(?:\s+(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d{2}))?)\b",
    re.IGNORECASE,
)
_FISCAL_YEAR = re.compile(r"\b(?:FY|fiscal\s+(?:year\s+)?)\s*'?((?:19|20)\d{2}|\d{2})\b", re.I)
_YEAR = re.compile(r"(?<![\w-])((?:19|20)\d{2})(?![\w-])")
# a span of months from the start of a year ("the first nine months", "six months ended ...",
# "the first half", "year to date"): a statement's cumulative column, not its quarter's
_SPAN = re.compile(
    r"\b(?:first\s+)?(six|nine|twelve)[- ]months?\b|\b(?:first|1st)\s+half\b|\bH1\b"
    r"|\byear[- ]to[- ]date\b|\bYTD\b",
    re.IGNORECASE,
)
_SPAN_MONTHS = {"six": 6, "nine": 9, "twelve": 12}


@dataclass(frozen=True)
class Period:
    """One period the question names, verbatim and as comparable parts."""

    text: str
    year: int | None = None
    quarter: int | None = None  # 1-4 for "Q3", "third quarter"
    fiscal: bool = False  # "fiscal 2023", "Q3 FY23", "third fiscal quarter"
    date: tuple[int, int, int] | None = None  # (year, month, day) of an explicit date
    span: int = 0  # months of a cumulative period ("first nine months": 9; year to date: -1)


def _year(text: str) -> int:
    value = int(text)
    return value + 2000 if value < 100 else value


# Asked of every column header of every table row a report weighs, run after run: memoized (the
# answer is a tuple of frozen periods, so sharing it is safe).
@functools.lru_cache(maxsize=1 << 14)
def periods_of(text: str) -> tuple[Period, ...]:
    """Every period expression of ``text``: dates, quarters, fiscal years, bare years."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []

    def untaken(m: re.Match[str]) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in taken)

    for m in FULL_DATE.finditer(text):
        date = (int(m[3]), month_number(m[1]), int(m[2]))
        found.append((m.start(), Period(m[0], year=date[0], date=date)))
        taken.append(m.span())
    for m in _QUARTER.finditer(text):
        if not untaken(m):
            continue
        if m[1]:
            quarter, year = int(m[1]), _year(m[2]) if m[2] else None
        elif m[4]:
            quarter, year = int(m[4]), _year(m[3])
        else:
            quarter, year = _ORDINALS[m[5].lower()], _year(m[7]) if m[7] else None
        fiscal = "fy" in m[0].lower() or "fiscal" in m[0].lower()
        found.append((m.start(), Period(m[0].strip(), year=year, quarter=quarter, fiscal=fiscal)))
        taken.append(m.span())
    for m in _SPAN.finditer(text):
        if untaken(m):
            months = _SPAN_MONTHS.get((m[1] or "").lower(), 6 if "half" in m[0].lower() else -1)
            months = 6 if m[0].upper() == "H1" else months
            found.append((m.start(), Period(m[0], span=months)))
            taken.append(m.span())
    for m in _FISCAL_YEAR.finditer(text):
        if untaken(m):
            found.append((m.start(), Period(m[0], year=_year(m[1]), fiscal=True)))
            taken.append(m.span())
    for m in _YEAR.finditer(text):
        if untaken(m):
            found.append((m.start(), Period(m[0], year=int(m[1]))))
            taken.append(m.span())
    return tuple(p for _, p in sorted(found, key=lambda item: item[0]))


__all__ = [
    "FULL_DATE",
    "MONTH",
    "MONTHS",
    "PERIOD_RE",
    "Period",
    "find_periods",
    "month_number",
    "periods_of",
]
