"""The Answer section answers: one figure, a trend table in time order, one line per entity;
composed lines hold only cited cells and headers, so the citation verifier accepts them."""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.llm_messages import SourceText, WriteTask
from deepresearch.policies.verification import verify
from deepresearch.providers.llm.extractive import answer_write
from deepresearch.schemas import Evidence, Finding, Report, ReportSection, Source
from deepresearch.text.question import analyze
from deepresearch.text.tables import TableRow, format_row

TITLE = "Condensed consolidated statements of operations"


def row(label: str, *cells: tuple[str, str], unit: str = "in millions") -> str:
    return format_row(TableRow(TITLE, unit, label, cells))


Q3 = row(
    "Total net sales",
    ("Three Months Ended July 1, 2023", "81,797"),
    ("Three Months Ended June 25, 2022", "82,959"),
    ("Nine Months Ended July 1, 2023", "293,787"),
)
Q2 = row(
    "Total net sales",
    ("Three Months Ended April 1, 2023", "94,836"),
    ("Three Months Ended March 26, 2022", "97,278"),
)
PRODUCTS = row("Products net sales", ("Three Months Ended July 1, 2023", "60,584"))
PROSE = "Deferred revenue was recognized over the period as services were delivered."


def test_one_figure_names_its_period_and_unit_and_cites_the_row() -> None:
    composed = compose(
        "What was Initech's total net sales for the quarter ended July 1, 2023?",
        [(PROSE, (3,), 0), (PRODUCTS, (2,), 0), (Q3, (1,), 0)],
    )
    assert composed == (
        "Initech: Total net sales (in millions), Three Months Ended July 1, 2023: 81,797 [1].",
        (1,),
    )


def test_the_asked_date_picks_the_prior_year_column_too() -> None:
    composed = compose(
        "What were total net sales for the quarter ended June 25, 2022?", [(Q3, (1,), 0)]
    )
    assert composed is not None and "82,959" in composed[0] and "81,797" not in composed[0]


def test_a_trend_is_a_table_in_time_order_across_filings() -> None:
    composed = compose(
        "How have Initech's total net sales changed over time?", [(Q3, (1,), 0), (Q2, (2,), 0)]
    )
    assert composed is not None
    lines = [line for line in composed[0].splitlines() if line]
    assert lines[0] == "| Three Months Ended | Initech: Total net sales (in millions) |"
    assert lines[1] == "| --- | --- |"
    assert lines[2:] == [
        "| Three Months Ended March 26, 2022 | 97,278 [2]",
        "| Three Months Ended June 25, 2022 | 82,959 [1]",
        "| Three Months Ended April 1, 2023 | 94,836 [2]",
        "| Three Months Ended July 1, 2023 | 81,797 [1]",
    ]
    assert composed[1] == (2, 1)  # in the order the table cites them


def test_a_comparison_gives_one_line_per_entity_sub_question() -> None:
    other = row("Total revenue", ("Three Months Ended June 30, 2023", "56,189"))
    composed = compose(
        "How did Initech's and Globex's revenue compare in the quarter?",
        [(Q3, (1,), 0), (other, (2,), 1)],
        ["What was Initech's total net sales?", "What was Globex's total revenue?"],
    )
    assert composed is not None
    lines = composed[0].split("\n\n")
    assert len(lines) == 2
    assert lines[0].startswith(
        "Initech: Total net sales (in millions), Three Months Ended July 1, 2023: 81,797; "
    )
    assert lines[0].endswith("[1].")
    assert lines[1] == (
        "Globex: Total revenue (in millions), Three Months Ended June 30, 2023: 56,189 [2]."
    )


def test_explanations_naming_no_line_item_and_rowless_findings_compose_nothing() -> None:
    assert compose("Why did Initech change its pricing strategy?", [(Q3, (1,), 0)]) is None
    assert compose("What was Initech's total net sales?", [(PROSE, (1,), 0)]) is None


def test_an_explanation_of_a_named_line_item_leads_with_its_figure() -> None:
    question = "How did Initech's total net sales reflect on its supply chain efficiency?"
    composed = compose(question, [(PROSE, (3,), 0), (PRODUCTS, (2,), 0), (Q3, (1,), 0)])
    assert composed is not None and "81,797" in composed[0] and composed[1] == (1,), composed


def _task(query: str, findings: list[tuple[str, str]]) -> WriteTask:
    urls = list(dict.fromkeys(u for _, u in findings))
    return WriteTask(
        query=query,
        sections=(
            ReportSection(
                heading=query, findings=tuple(Finding(text=t, citations=(u,)) for t, u in findings)
            ),
        ),
        sources=tuple(  # filings' pages: the writer composes through the filing domain
            SourceText(n=i + 1, url=u, title=u, location=u, text="", domain="filings")
            for i, u in enumerate(urls)
        ),
    )


def _verified_answer(query: str, found: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The extractive writer's answer for ``found`` (text, url) after the citation verifier,
    and the reasons of any claim it did not accept."""
    task = _task(query, found)
    draft = verify.adopt_answer_markers(task, answer_write(task))
    by_n = {s.n: s.url for s in task.sources}
    urls = list(dict.fromkeys(u for _, u in found))
    report = Report(
        query=query,
        title="t",
        answer=draft.answer,
        sections=(
            ReportSection(
                heading=query,
                findings=tuple(
                    Finding(text=f.text, citations=tuple(by_n[n] for n in f.sources))
                    for f in draft.sections[0].findings
                ),
            ),
        ),
        sources=tuple(Source(url=u, title=u, location=u) for u in urls),
        answer_citations=tuple(by_n[n] for n in draft.answer_sources),
    )
    evidence = {u: tuple(Evidence(url=u, quote=t) for t, v in found if v == u) for u in urls}
    checked = verify.check_report(report, evidence, 0.5)
    failed = [c.reason for c in checked.checks if not c.ok]
    final, dropped = verify.finalize(checked, {}, evidence, report.sources, 0.5)
    assert dropped == []
    return final.answer, failed


def test_the_extractive_writer_leads_with_the_figure_and_the_verifier_keeps_the_table() -> None:
    a, b = "doc:q3.pdf#page=4", "doc:q2.pdf#page=4"
    query = "How have Initech's total net sales changed over time?"
    assert answer_write(_task(query, [(PROSE, a), (Q3, a), (Q2, b)])).answer.startswith(
        "| Three Months Ended | Initech: Total net sales"
    )
    answer, failed = _verified_answer(query, [(PROSE, a), (Q3, a), (Q2, b)])
    assert failed == []
    table = [line for line in answer.split("\n\n")[0].splitlines()]
    assert len(table) == 6 and all(line.startswith("|") for line in table)  # one table
    assert table[-1].startswith("| Three Months Ended July 1, 2023 | 81,797 [")


def test_a_table_whose_headers_share_no_start_passes_the_verifier_whole() -> None:
    a, b = "doc:q3.pdf#page=9", "doc:q1.pdf#page=9"
    rows = [
        (row("Cash", ("July 1, 2023 Adjusted Cost", "25,337")), a),
        (row("Cash", ("December 31, 2022 Adjusted Cost", "17,908")), b),
    ]
    answer, failed = _verified_answer("How has Initech's cash changed over time?", rows)
    assert failed == [], failed  # no word of ours ("Period") in the header line
    assert answer.startswith("| | Initech: Cash (in millions) |\n| --- | --- |\n"), answer


def test_a_composed_figure_that_the_row_does_not_state_is_dropped() -> None:
    a = "doc:q3.pdf#page=4"
    wrong = "Total net sales (in millions), Three Months Ended July 1, 2023: 99,999"
    report = Report(
        query="q",
        title="t",
        answer=f"{wrong} [{a}].",
        sections=(ReportSection(heading="q", findings=(Finding(text=Q3, citations=(a,)),)),),
        sources=(Source(url=a, title="q3", location="q3, p. 4"),),
        answer_citations=(a,),
    )
    checked = verify.check_report(report, {a: (Evidence(url=a, quote=Q3),)}, 0.5)
    assert [c.ok for c in checked.checks] == [False, True]


def test_a_trend_takes_each_dates_quarter_column_not_the_year_to_date_repeat() -> None:
    mdna = format_row(
        TableRow(
            "",
            "",
            "Total net sales",
            (
                ("June 25, 2022", "82,959"),
                ("Three Months Ended June 26, 2021", "81,434"),
                ("Change", "2 %"),
                ("June 25, 2022", "304,182"),  # the nine-month column lost its span header
                ("Nine Months Ended June 26, 2021", "282,457"),
            ),
        )
    )
    composed = compose("How have Initech's total net sales changed over time?", [(mdna, (1,), 0)])
    assert composed is not None
    values = [line.split("|")[2].split()[0] for line in composed[0].splitlines()[4::2]]
    assert values == ["81,434", "82,959"]


def test_an_entity_led_comparison_line_verifies_against_its_row() -> None:
    a = "doc:q3.pdf#page=4"
    line = "Initech: Total net sales (in millions), Three Months Ended July 1, 2023: 81,797"
    report = Report(
        query="q",
        title="t",
        answer=f"{line} [{a}].",
        sections=(ReportSection(heading="q", findings=(Finding(text=Q3, citations=(a,)),)),),
        sources=(Source(url=a, title="q3", location="q3, p. 4"),),
        answer_citations=(a,),
    )
    checked = verify.check_report(report, {a: (Evidence(url=a, quote=Q3),)}, 0.5)
    assert [c.ok for c in checked.checks] == [True, True]


def test_a_company_that_says_revenue_answers_a_net_sales_question() -> None:
    revenue = row("Revenue", ("Three Months Ended July 30, 2023", "13,507"))
    composed = compose(
        "What were Globex's total net sales in the latest quarter?", [(revenue, (1,), 0)]
    )
    assert composed is not None and "13,507" in composed[0]


def test_the_exact_line_item_beats_a_longer_label_with_a_tidier_header() -> None:
    share = row("Percentage of total net sales", ("Three Months Ended July 1, 2023", "7 %"))
    mdna = format_row(TableRow("", "", "Total net sales", (("July 1, 2023", "81,797"),)))
    composed = compose(
        "What was Initech's total net sales for the quarter ended July 1, 2023?",
        [(share, (1,), 0), (mdna, (2,), 0)],
    )
    assert composed is not None and "81,797" in composed[0]


CASH = "Condensed consolidated statements of cash flows"
CASH_2023 = format_row(
    TableRow(
        CASH,
        "in millions",
        "Cash generated by operating activities",
        (
            ("Nine Months Ended July 1, 2023", "88,945"),
            ("Nine Months Ended June 25, 2022", "98,024"),
        ),
    )
)
CASH_2022 = format_row(
    TableRow(
        CASH,
        "in millions",
        "Cash generated by operating activities",
        (
            ("Nine Months Ended June 25, 2022", "98,024"),
            ("Nine Months Ended June 26, 2021", "83,838"),
        ),
    )
)


def test_a_quarter_named_without_a_date_takes_the_row_of_that_quarters_filing() -> None:
    question = "What was Initech's cash generated by operating activities in the Q3 2022 10-Q?"
    findings = [(CASH_2023, (1,), 0), (CASH_2022, (2,), 0)]
    titled = compose(question, findings, (), {1: "2023 Q3 INIT.pdf", 2: "2022 Q3 INIT.pdf"})
    assert titled == (
        "Initech: Cash generated by operating activities (in millions), Nine Months Ended "
        "June 25, 2022: 98,024; Nine Months Ended June 26, 2021: 83,838 [2].",
        (2,),
    )
    untitled = compose(question, findings)  # no titles: the row whose current period is 2022
    assert untitled is not None and untitled[1] == (2,) and "98,024" in untitled[0]


def test_a_title_naming_another_quarter_loses_to_the_asked_one() -> None:
    q1 = row("Total net sales", ("Three Months Ended December 31, 2022", "117,154"))
    composed = compose(
        "What were Initech's total net sales in Q1 2023?",
        [(Q3, (1,), 0), (q1, (2,), 0)],
        (),
        {1: "Initech Q3 2023 report", 2: "Initech Q1 2023 report"},
    )
    assert composed is not None and "117,154 [2]" in composed[0]  # its fiscal Q1 ends in 2022


def test_an_undated_question_takes_the_current_period_even_when_it_is_the_last_column() -> None:
    oldest_first = row(
        "Net sales",
        ("Three Months Ended September 30, 2022", "127,101"),
        ("Three Months Ended September 30, 2023", "143,083"),
        ("Nine Months Ended September 30, 2023", "404,332"),
    )
    composed = compose(
        "What were Globex's net sales in the latest quarter?", [(oldest_first, (1,), 0)]
    )
    assert composed == (
        "Globex: Net sales (in millions), Three Months Ended September 30, 2023: 143,083; "
        "Three Months Ended September 30, 2022: 127,101; Nine Months Ended September 30, 2023: "
        "404,332 [1].",
        (1,),
    )


def test_the_latest_quarter_is_the_newest_filings_row() -> None:
    composed = compose(
        "What were Initech's total net sales in the most recent quarter?",
        [(Q2, (2,), 0), (Q3, (1,), 0)],
    )
    assert composed is not None and "2023: 81,797; " in composed[0]
    assert composed[0].endswith("[1].")


def test_a_trend_never_mixes_a_near_namesake_line_item_into_the_series() -> None:
    rnd = row(
        "Research and development expense",
        ("Three Months Ended July 1, 2023", "(7,442)"),
        ("Three Months Ended June 25, 2022", "(6,797)"),
    )
    other = row(
        "Other corporate expenses, net",
        ("Three Months Ended April 1, 2023", "(1,713)"),
        ("Three Months Ended March 26, 2022", "(1,849)"),
    )
    composed = compose(
        "Has there been a change in Initech's operating expenses over the reported quarters?",
        [(other, (2,), 0), (rnd, (1,), 0)],
    )
    assert composed is not None
    cells = [line.split("|")[2].strip() for line in composed[0].split("\n\n")[2:]]
    assert cells in (["(6,797) [1]", "(7,442) [1]"], ["(1,849) [2]", "(1,713) [2]"])


def test_without_an_exact_date_the_figure_comes_with_its_rows_context_and_verifies() -> None:
    a = "doc:q3.pdf#page=4"
    composed = compose("What were Initech's total net sales in the Q3 2023 10-Q?", [(Q3, (1,), 0)])
    assert composed is not None
    line = composed[0]
    assert line == (
        "Initech: Total net sales (in millions), Three Months Ended July 1, 2023: 81,797; "
        "Three Months Ended June 25, 2022: 82,959; Nine Months Ended July 1, 2023: 293,787 [1]."
    )
    report = Report(
        query="q",
        title="t",
        answer=line.replace("[1]", f"[{a}]"),
        sections=(ReportSection(heading="q", findings=(Finding(text=Q3, citations=(a,)),)),),
        sources=(Source(url=a, title="q3", location="q3, p. 4"),),
        answer_citations=(a,),
    )
    checked = verify.check_report(report, {a: (Evidence(url=a, quote=Q3),)}, 0.5)
    assert all(c.ok for c in checked.checks), [c.reason for c in checked.checks if not c.ok]


def test_a_one_section_comparison_gives_one_line_per_entity_its_sources_title_names() -> None:
    globex = row("Revenue", ("Three Months Ended June 30, 2023", "56,189"))
    composed = compose(
        "How did Initech's and Globex's revenue compare in Q3 2023?",
        [(Q3, (1,), 0), (globex, (2,), 0)],
        (),
        {1: "Initech Q3 2023 results", 2: "Globex reports Q3 2023 results"},
    )
    assert composed is not None
    lines = composed[0].split("\n\n")
    assert [line.split(":")[0] for line in lines] == ["Initech", "Globex"]
    assert "81,797" in lines[0] and lines[0].endswith("[1].")
    assert "56,189" in lines[1] and lines[1].endswith("[2].")
    untitled = compose(
        "How did Initech's and Globex's revenue compare in Q3 2023?",
        [(Q3, (1,), 0), (globex, (2,), 0)],
    )
    assert untitled is not None and not untitled[0].startswith(("Initech", "Globex"))


def test_one_entitys_two_metrics_compared_get_one_line_each() -> None:
    opex = row("Total operating expenses", ("Three Months Ended December 31, 2022", "14,316"))
    sales = row("Total net sales", ("Three Months Ended December 31, 2022", "117,154"))
    composed = compose(
        "How did Initech's operating expenses for Q1 2023 compare to its revenue?",
        [(opex, (1,), 0), (sales, (2,), 0), (PROSE, (3,), 0)],
    )
    assert composed is not None
    lines = composed[0].split("\n\n")
    assert len(lines) == 2 and all(line.startswith("Initech: Total ") for line in lines)
    assert "14,316 [1]" in lines[0] and "117,154 [2]" in lines[1]


def test_an_explanation_composes_the_figure_of_what_it_explains_not_of_a_later_word() -> None:
    """ "Legal proceedings or contingent liabilities": the balance sheet's "Total liabilities"
    shares a word with the second thing asked and is no figure of either; "operating income"
    explained is its own row."""
    balance = format_row(
        TableRow(
            "Balance sheets", "in millions", "Total liabilities", (("July 30, 2023", "22,054"),)
        )
    )
    litigation = "We are defending a putative securities class action lawsuit filed in 2018."
    findings = [(balance, (1,), 0), (litigation, (2,), 0)]
    question = (
        "What legal proceedings or contingent liabilities were disclosed in Initech's Q2 2023 "
        "10-Q, and what impact could they have on the company?"
    )
    assert analyze(question).shape == "explanation"
    assert compose(question, findings) is None
    income = format_row(
        TableRow(
            "Income statements",
            "in millions",
            "Operating income",
            (("Three Months Ended March 31, 2023", "22,352"),),
        )
    )
    composed = compose(
        "For Q2 2023, what was the chief factor affecting Initech's operating income and liabilities?",
        [(income, (1,), 0), (balance, (2,), 0)],
    )
    assert composed is not None and "22,352" in composed[0] and "22,054" not in composed[0]


def test_an_explanation_of_a_segments_figure_leads_with_that_segments_row() -> None:
    """ "What drove the increase in Initech's Intelligent Cloud revenue?": the segment's row,
    not the company's total revenue, which shares the metric's word only."""
    cells = (("Three Months Ended September 30, 2023", "56,517"),)
    total = format_row(TableRow("Income statements", "in millions", "Total revenue", cells))
    segment = format_row(
        TableRow(
            "Segment results",
            "in millions",
            "Revenue - Intelligent Cloud",
            (("Three Months Ended September 30, 2023", "24,259"),),
        )
    )
    reason = "Intelligent Cloud revenue increased driven by Azure and other cloud services."
    question = "What drove the increase in Initech's Intelligent Cloud revenue in the quarter?"
    composed = compose(question, [(total, (1,), 0), (segment, (2,), 1), (reason, (2,), 2)])
    assert composed is not None and composed[0].find("24,259") >= 0, composed
    assert "56,517" not in composed[0].split("\n")[0]


def test_a_comparison_of_two_parts_of_one_company_states_each_part() -> None:
    """ "Initech's AWS and North America segments' operating income": one line per segment;
    the row naming more of the question's words (North America's) was the only line."""
    cells = "Three Months Ended June 30, 2023 = {}"
    title = "Information on reportable segments (in millions): {}: " + cells
    rows = [
        (title.format("North America - Operating income", "3,211"), (1,), 0),
        (title.format("AWS - Operating income", "5,365"), (1,), 1),
        (title.format("AWS - Net sales", "22,140"), (1,), 2),
    ]
    question = (
        "How did Initech's AWS and North America segments' operating income compare in Q2 2023?"
    )
    composed = compose(question, rows, titles={1: "2023 Q2 Initech 10-Q"})
    assert composed is not None and "3,211" in composed[0] and "5,365" in composed[0], composed
    assert "22,140" not in composed[0]


def _split_task(query: str, sections: list[tuple[str, list[tuple[str, str]]]]) -> WriteTask:
    """A split plan's WriteTask: the whole question's section first, then each part's."""
    whole = _task(query, [f for _, found in sections for f in found])
    return whole.model_copy(
        update={
            "sections": tuple(
                ReportSection(
                    heading=heading,
                    findings=tuple(Finding(text=t, citations=(u,)) for t, u in found),
                )
                for heading, found in sections
            )
        }
    )


def test_a_row_the_whole_question_and_a_part_cite_on_two_pages_of_a_filing_is_said_once() -> None:
    """The whole question cites the row on page 4, a part on page 10: its line differs by its
    marker, and by its entity lead when the part's heading names none."""
    globex = row("Total revenue", ("Three Months Ended June 30, 2023", "56,189"))
    page4, page10, other = "doc:initech.pdf#page=4", "doc:initech.pdf#page=10", "doc:globex.pdf"
    query = "How did Initech's and Globex's total net sales compare in the quarter?"
    for part in (
        "What was Initech's total net sales in the quarter?",
        "What were total net sales?",
    ):
        task = _split_task(
            query,
            [
                (query, [(Q3, page4)]),
                (part, [(Q3, page10)]),
                ("What was Globex's total revenue in the quarter?", [(globex, other)]),
            ],
        )
        answer = answer_write(task).answer
        assert answer.count("81,797") == 1, answer
        assert answer.startswith("Initech: Total net sales") and "56,189 [3]" in answer, answer


def test_a_parts_table_keeps_its_rule_line_or_goes_whole() -> None:
    """A part's table under its own title keeps the rule line an earlier table has too (without
    it Markdown renders no table and the title joins the table before); a part's table whose
    rows are all said, from other pages of the same filings, leaves no title behind."""
    p3 = row("Products net sales", ("Three Months Ended July 1, 2023", "60,584"))
    p2 = row("Products net sales", ("Three Months Ended April 1, 2023", "73,929"))
    query = "How have Initech's total net sales and products net sales changed over time?"
    q3, q2 = "doc:q3.pdf#page=4", "doc:q2.pdf#page=4"
    task = _split_task(
        query,
        [
            (query, [(Q3, q3), (Q2, q2)]),
            ("How have Initech's products net sales changed over time?", [(p3, q3), (p2, q2)]),
            (
                "How have total net sales changed over time?",
                [(Q3, "doc:q3.pdf#page=10"), (Q2, "doc:q2.pdf#page=10")],
            ),
        ],
    )
    paragraphs = answer_write(task).answer.split("\n\n")
    titles = [i for i, p in enumerate(paragraphs) if p.startswith("| Three Months Ended |")]
    assert [paragraphs[i] for i in titles] == [
        "| Three Months Ended | Initech: Total net sales (in millions) |",
        "| Three Months Ended | Initech: Products net sales (in millions) |",
    ], paragraphs
    assert all(paragraphs[i + 1] == "| --- | --- |" for i in titles), paragraphs
    assert sum("97,278" in p for p in paragraphs) == 1, paragraphs
