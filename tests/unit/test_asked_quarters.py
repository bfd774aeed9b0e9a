"""A question naming two quarters ("Q3 2023 compared to Q3 2022") is answered with those two,
not with every quarter the filings state; a quarter is read as the filings' titles name them
("2023 Q1 ..." of a fiscal year ending in September is the quarter ended in December), and
without titles as the calendar quarter a 52-week period ends nearest ("October 1, 2022" is the
third quarter, "July 1, 2023" the second).
"""

from __future__ import annotations

import datetime

from deepresearch.domains.filings.compose import compose
from deepresearch.domains.filings.periods import calendar_quarter

ROW = "Statements of income (in millions): Net revenue: Three Months Ended {} = {}; Three Months Ended {} = {}"


def _day(y: int, m: int, d: int) -> int:
    return datetime.date(y, m, d).toordinal()


def test_a_52_week_quarter_is_the_calendar_quarter_it_ends_nearest() -> None:
    assert calendar_quarter(_day(2022, 10, 1)) == (2022, 3)
    assert calendar_quarter(_day(2023, 7, 1)) == (2023, 2)
    assert calendar_quarter(_day(2023, 9, 30)) == (2023, 3)
    assert calendar_quarter(_day(2022, 12, 31)) == (2022, 4)


def _lines(text: str) -> list[str]:
    """The table's period lines (its header line names no date)."""
    return [
        x
        for x in text.split("\n")
        if x.startswith("|") and any(c.isdigit() for c in x.split("|")[1])
    ]


def test_two_named_quarters_are_the_two_lines_of_the_trend() -> None:
    findings = [
        (ROW.format("Oct 1, 2022", "15,338", "Sep 25, 2021", "19,192"), (1,), 0),
        (ROW.format("Jul 1, 2023", "12,949", "Jul 2, 2022", "15,321"), (2,), 1),
        (ROW.format("Sep 30, 2023", "14,158", "Oct 1, 2022", "15,338"), (3,), 2),
    ]
    question = "How did Initech's revenue change between Q3 2022 and Q3 2023?"
    titled = {1: "2022 Q3 ITK.pdf", 2: "2023 Q2 ITK.pdf", 3: "2023 Q3 ITK.pdf"}
    for titles in (titled, {}):  # by the titles, and by the calendar
        composed = compose(question, findings, titles=titles)
        assert composed is not None
        lines = _lines(composed[0])
        assert [line.split("|")[1].strip() for line in lines] == [
            "Three Months Ended Oct 1, 2022",
            "Three Months Ended Sep 30, 2023",
        ], composed[0]
    # one quarter named: the trend over every quarter stated
    over = compose("How has Initech's revenue changed across quarters?", findings, titles=titled)
    assert over is not None and len(_lines(over[0])) == 5


def test_a_fiscal_quarter_is_read_as_the_titles_name_it() -> None:
    """ "Q1 2023" of a filer whose fiscal year ends in September is its quarter ended December
    31, 2022, as its filing's title says; "Q1 2022", which no title names, the quarter a year
    before it. Without titles the calendar quarters answer (March 2022, April 1, 2023)."""
    findings = [
        (ROW.format("December 31, 2022", "65,775", "December 25, 2021", "71,628"), (1,), 0),
        (ROW.format("April 1, 2023", "51,334", "March 26, 2022", "50,570"), (2,), 1),
    ]
    question = "What was Initech's revenue in Q1 2023 compared with Q1 2022?"
    titles = {1: "2023 Q1 ITK.pdf", 2: "2023 Q2 ITK.pdf"}
    fiscal = compose(question, findings, titles=titles)
    assert fiscal is not None
    assert "71,628" in fiscal[0] and "65,775" in fiscal[0], fiscal[0]
    assert "51,334" not in fiscal[0] and "50,570" not in fiscal[0]
    calendar = compose(question, findings, titles={})
    assert calendar is not None
    assert "51,334" in calendar[0] and "50,570" in calendar[0], calendar[0]
    assert "65,775" not in calendar[0]
