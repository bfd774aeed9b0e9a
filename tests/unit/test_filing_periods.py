"""A question's quarter finds its filing, read from the filings' covers.

* a cover's period is the date after "period ended", not a later date on it (shares outstanding);
* a quarter names the filing of any of its readings: the calendar quarter the period ends in,
  a fiscal calendar a month late, or the quarter it was filed in;
* an explicit date names the period ending on it; two quarters name the range between them;
* a query that names no period, or none a filing covers, weighs every filing alike;
* in the corpus index, the asked quarter's filing outranks another quarter's, although the other
  filing's page repeats the question's words more.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
from test_local_search import inline

from deepresearch.domains.filings.periods import (
    PERIOD_PENALTY,
    in_fiscal_quarter,
    period_end,
    period_weights,
    quarter_readings,
)
from deepresearch.providers.search.corpus_index import CorpusIndex


def _day(year: int, month: int, day: int) -> int:
    return datetime.date(year, month, day).toordinal()


def test_the_cover_period_is_the_date_after_period_ended() -> None:
    cover = (
        "FORM 10-Q\nFor the quarterly period ended December 31, 2022\n"
        "As of January 20, 2023, there were 15,892,723,000 shares outstanding."
    )
    assert period_end(cover) == _day(2022, 12, 31)
    assert period_end("Annual meeting, January 20, 2023") == 0  # no period stated


def test_a_period_is_named_by_its_calendar_fiscal_and_filing_quarters() -> None:
    assert quarter_readings(_day(2023, 3, 31)) == {(2023, 1), (2023, 2)}  # filed in May
    # a fiscal quarter ending a month after the calendar one (April 30) is still "Q1"
    assert (2023, 1) in quarter_readings(_day(2023, 4, 30))
    # a quarter ended December 31 is reported in the first quarter of the next year
    assert (2023, 1) in quarter_readings(_day(2022, 12, 31))
    assert (2023, 3) not in quarter_readings(_day(2022, 12, 31))
    assert quarter_readings(0) == frozenset()


def test_a_quarter_weighs_its_filings_up_and_the_others_down() -> None:
    ends = [_day(2022, 9, 30), _day(2023, 3, 31), _day(2023, 6, 30), _day(2023, 9, 30), 0]
    weights = period_weights("Contoso debt in the Q1 2023 10-Q", ends)
    assert weights.tolist() == [PERIOD_PENALTY, 1.0, PERIOD_PENALTY, PERIOD_PENALTY, PERIOD_PENALTY]
    # the quarter ended on an explicit date, within a few days of it
    weights = period_weights(
        "net sales for the quarter ended July 1, 2023", [_day(2023, 7, 1), *ends]
    )
    assert weights[0] == 1.0 and weights[4] == PERIOD_PENALTY
    # two quarters: every filing between them
    weights = period_weights("from Q3 2022 to Q2 2023", ends)
    assert weights[:3].tolist() == [1.0, 1.0, 1.0] and weights[3] == PERIOD_PENALTY
    # a bare year: its filings
    assert period_weights("Contoso revenue in 2022", ends).tolist()[:2] == [1.0, PERIOD_PENALTY]


def test_no_period_or_no_matching_filing_changes_nothing() -> None:
    ends = [_day(2023, 3, 31), _day(2023, 6, 30)]
    assert np.all(period_weights("Contoso inventory levels", ends) == 1.0)
    assert np.all(period_weights("Contoso inventory in Q3 2019", ends) == 1.0)


def test_the_asked_quarters_filing_outranks_another_quarters(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    cover = "CONTOSO CORPORATION\nFORM 10-Q\nFor the quarterly period ended {}\n\n"
    (root / "a.txt").write_text(
        cover.format("March 31, 2023")
        + "Long-term debt was 4,100 million at the end of the quarter.\n"
    )
    (root / "b.txt").write_text(
        cover.format("September 30, 2023")
        + "Debt. Long-term debt and debt issuance: the debt was 4,900 million; debt costs rose.\n"
    )
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    assert index.search("Contoso long-term debt", 2)[0].url == "doc:b.txt"  # more debt words
    hits = index.search("Contoso long-term debt Q1 2023", 2)
    assert [h.url for h in hits] == ["doc:a.txt", "doc:b.txt"], hits


def test_a_fiscal_quarter_is_every_period_its_fiscal_year_allows() -> None:
    """A fiscal year ends in the year it is named for, in any month: "the third quarter of fiscal
    2024" of a year ending in January 2024 ended in October 2023, which no calendar, fiscal-lag
    or filing reading calls Q3 2024; the filings of other quarters weigh less."""
    day = _day
    ends = [day(2022, 10, 30), day(2023, 4, 30), day(2023, 7, 30), day(2023, 10, 29)]
    got = period_weights("Initech's gross margin in the third quarter of fiscal 2024?", ends)
    assert got.tolist() == [PERIOD_PENALTY, PERIOD_PENALTY, PERIOD_PENALTY, 1.0]
    # Apple-like: fiscal 2023 ends in September 2023, its third quarter in July 2023
    assert in_fiscal_quarter(day(2023, 7, 1), 2023, 3)
    assert not in_fiscal_quarter(day(2023, 10, 20), 2023, 3)
    assert period_weights("Revenue in Q3 2023?", ends).tolist() == [
        PERIOD_PENALTY,
        PERIOD_PENALTY,
        1.0,
        1.0,
    ]  # a calendar quarter is read as before
