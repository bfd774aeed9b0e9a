"""Which filings a question's period names ("Apple's Q1 2023 10-Q"), read from their covers.

A periodic report's cover states the period it covers ("for the quarterly period ended
December 31, 2022"). People name that report in more than one way: by the calendar quarter its
period ends in, by the company's fiscal quarter (a fiscal calendar that ends a month after the
calendar quarter), or by the quarter it was filed in, some weeks after the period's end. A
quarter named in a question is matched against every such reading, so each reading finds its
filing; filings that match none count less (``PERIOD_PENALTY``), never nothing, because a
question may also mean a period its filing only compares against.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence

import numpy as np

from deepresearch.text.periods import MONTH, month_number
from deepresearch.text.question import periods_of

PERIOD_PENALTY = 0.3  # passages of a filing whose period matches none the query names
FISCAL_LAG_DAYS = 35  # a fiscal quarter may end up to about a month after the calendar one
FILING_LAG_DAYS = 45  # a quarterly report is filed within about six weeks of its period's end
DATE_SLACK_DAYS = 7  # "the quarter ended July 1" names a period that ends within this of it
_PERIOD_END = re.compile(
    rf"\b(?:period|quarter|months|year|weeks)\s+ended\s+({MONTH})\s+(\d{{1,2}}),?\s+((?:19|20)\d{{2}})",
    re.IGNORECASE,
)


def period_end(cover: str) -> int:
    """The end of the period a report's cover says it covers, as a date ordinal; 0 when the
    cover states none. The first such date: a cover may name a later date (shares outstanding
    "as of ..."), which is not the period."""
    for m in _PERIOD_END.finditer(cover):
        try:
            return datetime.date(int(m[3]), month_number(m[1]), int(m[2])).toordinal()
        except ValueError:
            continue
    return 0


def _quarter(day: datetime.date) -> tuple[int, int]:
    return day.year, (day.month - 1) // 3 + 1


def calendar_quarter(end: int) -> tuple[int, int]:
    """The calendar quarter a period ending on ordinal ``end`` is: the one whose last day is
    within ``DATE_SLACK_DAYS`` before it or after it ("three months ended October 1, 2022" is
    the third quarter of 2022, "July 1, 2023" the second of 2023, as 52-week calendars end)."""
    return _quarter(datetime.date.fromordinal(end - DATE_SLACK_DAYS))


def quarter_readings(end: int) -> frozenset[tuple[int, int]]:
    """The (year, quarter) a report whose period ends on ordinal ``end`` may be called: the
    calendar quarter of its end, the fiscal quarter of a calendar a month late, the quarter
    it was filed in."""
    if end <= 0:
        return frozenset()
    day = datetime.date.fromordinal(end)
    lags = (0, -FISCAL_LAG_DAYS, FILING_LAG_DAYS)
    return frozenset(_quarter(day + datetime.timedelta(days=lag)) for lag in lags)


def in_fiscal_quarter(end: int, year: int, quarter: int) -> bool:
    """Whether a period ending on ordinal ``end`` may be fiscal ``quarter`` of fiscal ``year``:
    a fiscal year ends in the calendar year it is named for, in any month (Apple's fiscal 2023
    in September 2023, NVIDIA's fiscal 2024 in January 2024), so its quarter ``quarter`` ends
    within the twelve months that lie ``3 * (4 - quarter)`` months before that year's end."""
    if end <= 0:
        return False
    back = 3 * (4 - quarter)
    first = year * 12 - back  # months since year 0 of the window's first month (January = 0)
    lo = datetime.date(first // 12, first % 12 + 1, 1).toordinal()
    last = first + 12  # the month after the window
    hi = datetime.date(last // 12, last % 12 + 1, 1).toordinal() - 1
    return lo <= end <= hi + DATE_SLACK_DAYS


def period_weights(query: str, ends: Sequence[int] | np.ndarray) -> np.ndarray:
    """Per document: 1 when one of its period readings is a period ``query`` names, else
    ``PERIOD_PENALTY``; all ones when the query names no period or no document matches it.

    Two or more quarters name a range ("from Q1 2023 to Q3 2023"): every quarter between them
    counts; a fiscal quarter ("Q3 FY24", "the third quarter of fiscal 2024") counts every period
    it may be (``in_fiscal_quarter``). An explicit date matches a period ending within
    ``DATE_SLACK_DAYS`` of it; a bare year, any reading in that year."""
    n = len(ends)
    periods = periods_of(query)
    quarters = sorted((p.year, p.quarter) for p in periods if p.year and p.quarter)
    dates = [datetime.date(*p.date).toordinal() for p in periods if p.date]
    years = {p.year for p in periods if p.year and not p.quarter and not p.date}
    fiscal = [(p.year, p.quarter) for p in periods if p.fiscal and p.year and p.quarter]
    if not (quarters or dates or years):
        return np.ones(n)
    first, last = (quarters[0], quarters[-1]) if quarters else (None, None)
    out = np.full(n, PERIOD_PENALTY)
    for d, end in enumerate(ends):
        readings = quarter_readings(int(end))
        hit = any(abs(int(end) - day) <= DATE_SLACK_DAYS for day in dates) if end else False
        if first is not None and last is not None:
            hit = hit or any(first <= r <= last for r in readings)
        hit = hit or any(year in years for year, _ in readings)
        hit = hit or any(in_fiscal_quarter(int(end), y, q) for y, q in fiscal)
        if hit:
            out[d] = 1.0
    return out if (out == 1.0).any() else np.ones(n)


__all__ = [
    "PERIOD_PENALTY",
    "calendar_quarter",
    "in_fiscal_quarter",
    "period_end",
    "period_weights",
    "quarter_readings",
]
