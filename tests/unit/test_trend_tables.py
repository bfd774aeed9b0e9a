"""Which rows a composed trend or table takes: the line item of every filing in one unit, not
a note's part of it, a "% of revenue" table's figure or a row quoted twice."""

from __future__ import annotations

from test_answer_shapes import row

from deepresearch.domains.filings.compose import compose
from deepresearch.text.tables import TableRow, format_row


def test_a_trend_takes_the_label_that_states_the_most_quarters() -> None:
    """The discussion's table of one quarter ("Research and development expenses": this quarter
    and a year ago) names the item a little better than the statements' nested label of every
    filing; the trend is the statements' line over every quarter."""
    discussion = row(
        "Research and development expenses",
        ("Three Months Ended October 29, 2023", "2,294"),
        ("Three Months Ended October 30, 2022", "1,945"),
    )
    statements = [
        row("Operating expenses - Research and development", (f"Three Months Ended {d}", v))
        for d, v in (
            ("October 29, 2023", "2,294"),
            ("July 30, 2023", "2,040"),
            ("April 30, 2023", "1,875"),
        )
    ]
    findings = [(discussion, (1,), 0)] + [(s, (n,), 0) for n, s in enumerate(statements, 2)]
    composed = compose(
        "How has Initech's research and development spending changed over the reported quarters?",
        findings,
    )
    assert composed is not None
    for value in ("2,294", "2,040", "1,875"):
        assert value in composed[0], composed[0]


def test_a_row_several_sub_questions_quoted_is_one_line_of_a_table() -> None:
    rows = [
        row(f"Operating expenses - {label}", ("Three Months Ended Sep 30, 2023", v))
        for label, v in (("Cost of sales", "75,022"), ("Fulfillment", "22,314"), ("Other", "10"))
    ]
    findings = [(r, (1,), g) for g in (0, 1, 2) for r in rows]  # each section quoted them all
    composed = compose("What were Initech's operating expenses by category?", findings)
    assert composed is not None
    assert composed[0].count("Cost of sales") == 1 and composed[0].count("22,314") == 1


def test_a_trend_is_one_unit_and_takes_the_line_item_not_a_notes_part() -> None:
    """The statements' R&D of each filing, not the "% of revenue" table's 12.7 for the latest
    quarter nor the stock-compensation note's part (701), though both share its label."""

    def statement(date: str, value: str, title: str = "Statements of income") -> str:
        return format_row(
            TableRow(
                title,
                "in millions, except per share data",
                "Operating expenses - Research and development",
                ((f"Three Months Ended {date}", value),),
            )
        )

    share = format_row(
        TableRow(
            "Items of the statements of income expressed as a percentage of revenue",
            "",
            "Operating expenses - Research and development",
            (("Three Months Ended October 29, 2023", "12.7"),),
        )
    )
    part = format_row(
        TableRow(
            "Stock-based compensation expense is as follows",
            "in millions",
            "Research and development",
            (("Three Months Ended October 29, 2023", "701"),),
        )
    )
    findings = [
        (share, (1,), 0),
        (part, (1,), 0),
        (statement("October 29, 2023", "2,294"), (1,), 0),
        (statement("July 30, 2023", "2,040"), (2,), 0),
        (statement("April 30, 2023", "1,875"), (3,), 0),
    ]
    composed = compose("How has Initech's research and development changed over time?", findings)
    assert composed is not None
    assert "2,294" in composed[0] and "2,040" in composed[0] and "1,875" in composed[0]
    assert "12.7" not in composed[0] and "701" not in composed[0]


def test_the_line_item_outweighs_a_notes_part_of_the_same_label() -> None:
    """ "Cost of revenue" 38 in the stock-compensation note, 4,720 in the statements: a part is
    never more than its line item."""
    part = format_row(
        TableRow(
            "Stock-based compensation expense is as follows",
            "in millions",
            "Cost of revenue",
            (("Three Months Ended October 29, 2023", "38"),),
        )
    )
    item = format_row(
        TableRow(
            "Statements of income",
            "in millions",
            "Cost of revenue",
            (("Three Months Ended October 29, 2023", "4,720"),),
        )
    )
    composed = compose(
        "What was Initech's cost of revenue in the latest quarter?",
        [(part, (1,), 0), (item, (1,), 0)],
    )
    assert composed is not None and "4,720" in composed[0] and "38" not in composed[0]


def test_a_totals_trend_shows_its_parts_beside_it_and_the_verifier_keeps_every_line() -> None:
    """ "Total operating expenses" over the quarters, with its parts ("Operating expenses -
    Research and development", "- Selling, general and administrative") as columns: what
    changed is read from the parts. Each line cites the filing whose statement holds all three."""
    from test_answer_shapes import _verified_answer

    found = []
    for n, (date, rd, sga, total) in enumerate(
        (
            ("July 1, 2023", "7,442", "5,973", "13,415"),
            ("April 1, 2023", "7,457", "6,201", "13,658"),
        )
    ):
        cell = f"Three Months Ended {date}"
        url = f"doc:q{n}.pdf#page=4"
        found += [
            (row("Operating expenses - Research and development", (cell, rd)), url),
            (row("Operating expenses - Selling, general and administrative", (cell, sga)), url),
            (row("Total operating expenses", (cell, total)), url),
        ]
    answer, failed = _verified_answer(
        "Has there been any significant change in Initech's operating expenses over the reported quarters?",
        found,
    )
    assert failed == []
    lines = answer.split("\n\n")[0].splitlines()
    assert lines[0].startswith(
        "| Three Months Ended | Research and development | Selling, general and administrative |"
    ), lines
    assert lines[2].startswith("| Three Months Ended April 1, 2023 | 7,457 | 6,201 | 13,658 ["), (
        lines
    )
    assert lines[3].startswith("| Three Months Ended July 1, 2023 | 7,442 | 5,973 | 13,415 ["), (
        lines
    )


def test_a_total_without_named_parts_shows_the_rows_that_add_up_to_it() -> None:
    """A statement may print "Operating expenses" below "Research and development", "Marketing,
    general, and administrative" and "Restructuring and other charges", none of them named
    under it: the parts are the rows whose figures add up to it in both columns (a gross margin
    beside them is none), one column per part however each filing punctuates its label."""
    from test_answer_shapes import _verified_answer

    filings = (  # (quarter, a year before), per part and the total, and the marketing label
        ("Oct 1, 2022", "Sep 25, 2021", "Marketing, general and administrative"),
        ("Sep 30, 2023", "Oct 1, 2022", "Marketing, general, and administrative"),
    )
    figures = (
        (("4,302", "3,803"), ("1,744", "1,674"), ("664", "42"), ("6,710", "5,519")),
        (("3,870", "4,302"), ("1,340", "1,744"), ("816", "664"), ("6,026", "6,710")),
    )
    found = []
    for n, ((now, before, marketing), (rd, mga, charges, total)) in enumerate(
        zip(filings, figures, strict=True)
    ):
        url = f"doc:q{n}.pdf#page=6"

        def line(label: str, values: tuple[str, str], now: str = now, before: str = before) -> str:
            return row(
                label,
                (f"Three Months Ended {now}", values[0]),
                (f"Three Months Ended {before}", values[1]),
            )

        found += [
            (line("Gross margin", ("6,535", "6,018")), url),
            (line("Operating expenses", total), url),
            (line("Restructuring and other charges", charges), url),
            (line("Research and development", rd), url),
            (line(marketing, mga), url),
        ]
    answer, failed = _verified_answer(
        "Has there been a substantial shift in Initech's operating expenses over the reported quarters?",
        found,
    )
    assert failed == []
    lines = answer.split("\n\n")[0].splitlines()
    assert lines[0].startswith(
        "| Three Months Ended | Restructuring and other charges | Research and development | "
        "Marketing, general and administrative | Initech: Operating expenses"
    ), lines
    expected = [
        "| Three Months Ended Sep 25, 2021 | 42 | 3,803 | 1,674 | 5,519 [",
        "| Three Months Ended Oct 1, 2022 | 664 | 4,302 | 1,744 | 6,710 [",
        "| Three Months Ended Sep 30, 2023 | 816 | 3,870 | 1,340 | 6,026 [",
    ]
    assert [x[: len(e)] for x, e in zip(lines[2:], expected, strict=True)] == expected, lines


def test_a_total_of_more_parts_than_columns_shows_none_of_them() -> None:
    """Two of six segments beside a total would read as its sum: all parts or none."""
    parts = [("A", "1", "2"), ("B", "2", "3"), ("C", "3", "4"), ("D", "4", "5"), ("E", "5", "6")]
    found = []
    for n, (now, before) in enumerate(
        (("Oct 1, 2022", "Sep 25, 2021"), ("Sep 30, 2023", "Oct 1, 2022"))
    ):
        cells = (f"Three Months Ended {now}", f"Three Months Ended {before}")
        found += [
            (row(f"Segment {x}", (cells[0], a), (cells[1], b)), (n + 1,), 0) for x, a, b in parts
        ]
        found.append((row("Total net revenue", (cells[0], "15"), (cells[1], "20")), (n + 1,), 0))
    composed = compose(
        "How has Initech's total net revenue changed over the reported quarters?", found
    )
    assert composed is not None
    assert composed[0].startswith("| Three Months Ended | Initech: Total net revenue"), composed[0]


def test_a_trend_of_a_part_the_question_names_is_that_parts_row() -> None:
    """ "Contoso's Services segment revenue": Services is what is measured of Contoso, and its
    row ("Net sales - Services") is the line item, not the total its metric word also names."""
    found = []
    for n, (date, services, total) in enumerate(
        (("April 1, 2023", "20,907", "94,836"), ("July 1, 2023", "21,213", "81,797"))
    ):
        cell = f"Three Months Ended {date}"
        found += [
            (row("Total net sales", (cell, total)), (n + 1,), 0),
            (row("Net sales - Services", (cell, services)), (n + 1,), 0),
        ]
    composed = compose(
        "Can any trends be identified in Contoso's Services segment revenue over the reported periods?",
        found,
    )
    assert composed is not None
    assert "| Contoso: Net sales - Services" in composed[0], composed[0]
    assert "20,907" in composed[0] and "81,797" not in composed[0], composed[0]
    one = compose(
        "What was Contoso's Services segment revenue in the quarter ended July 1, 2023?", found
    )
    assert one is not None and "Net sales - Services" in one[0] and "21,213" in one[0], one


def test_parts_one_filing_of_several_states_are_no_columns_of_the_trend() -> None:
    """One filing's segment table adds up its quarter's net sales; the other filings' do not
    reach the findings: columns of dashes but for two quarters would hide the trend."""
    found = []
    quarters = (("Mar 31, 2022", "Mar 31, 2021"), ("Jun 30, 2022", "Jun 30, 2021"))
    quarters += (("Sep 30, 2022", "Sep 30, 2021"),)
    for n, (now, before) in enumerate(quarters):
        cells = (f"Three Months Ended {now}", f"Three Months Ended {before}")
        total = (str(100 + 10 * n), str(90 + 10 * n))
        found.append(
            (row("Total net sales", (cells[0], total[0]), (cells[1], total[1])), (n + 1,), 0)
        )
        if n == 1:  # only this filing's parts
            found += [
                (row("Products", (cells[0], "70"), (cells[1], "60")), (n + 1,), 0),
                (row("Services", (cells[0], "40"), (cells[1], "40")), (n + 1,), 0),
            ]
    composed = compose("How has Initech's total net sales changed over the quarters?", found)
    assert composed is not None
    assert composed[0].startswith("| Three Months Ended | Initech: Total net sales"), composed[0]
    assert "Products" not in composed[0] and "—" not in composed[0], composed[0]
