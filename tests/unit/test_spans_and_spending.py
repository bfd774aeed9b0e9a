"""Questions as people ask them of a filing's statements: a cumulative span ("the first nine
months", "six months ended ...", "year to date"), a fiscal quarter written "Q3 fiscal 2024", what
a company has ("how much cash did X have": a balance) and what it spent under another name
("capital expenditures", "capex": the cash-flow statement's purchases of property and equipment,
never its operating expenses nor the equipment it holds); a figure's growth to a date is the
figure and the year before's, and a row the metric names beats a table that only shares its
words ("Net income", not "the detail of other income/(expense), net").
"""

from __future__ import annotations

from pathlib import Path

from pdf_layout import write_pdf
from test_balances import _row
from test_local_search import inline

from deepresearch.config.settings import ScoringSettings
from deepresearch.domains.filings.compose import compose
from deepresearch.domains.filings.rows import pick_cell
from deepresearch.policies.search.source_scoring import coverage, key_terms, normalized_terms
from deepresearch.providers.llm.evidence import line_item_boost
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.text.line_items import LabelIndex, query_terms
from deepresearch.text.question import analyze, asks_flow, metric_terms
from deepresearch.text.sentences import build_units

INCOME = (
    "Condensed consolidated statements of operations (in millions): Net income: Three Months "
    "Ended July 1, 2023 = 19,881; Three Months Ended June 25, 2022 = 19,442; Nine Months Ended "
    "July 1, 2023 = 74,039; Nine Months Ended June 25, 2022 = 79,082"
)
CAPEX = (
    "Condensed consolidated statements of cash flows (in millions): Investing activities - "
    "Payments for acquisition of property, plant and equipment: Nine Months Ended July 1, 2023 "
    "= (8,796); Nine Months Ended June 25, 2022 = (7,419)"
)
EQUIPMENT_HELD = (
    "Condensed consolidated balance sheets (in millions): Property, plant and equipment, net: "
    "July 1, 2023 = 43,550; September 24, 2022 = 42,117"
)
# a filer's own wording: more words than the balance sheet's "Property and equipment, net"
PURCHASES = (
    "Statements of cash flows (in millions): Purchases related to property and equipment and "
    "intangible assets: Nine Months Ended October 29, 2023 = (815)"
)
EQUIPMENT_NET = (
    "Balance sheets (in millions): Property and equipment, net: October 29, 2023 = 3,799"
)
OPEX = (
    "Condensed consolidated statements of operations (in millions): Total operating expenses: "
    "Nine Months Ended July 1, 2023 = 41,469; Nine Months Ended June 25, 2022 = 38,422"
)
PAID_IN = (
    "Condensed consolidated statements of shareholders' equity (in millions): Common stock and "
    "additional paid-in capital - Ending balances: Nine Months Ended July 1, 2023 = 70,667; "
    "Nine Months Ended June 25, 2022 = 62,115"
)
CASH_HELD = (
    "Liquidity and Capital Resources (in millions): Cash and cash equivalents: October 29, 2023 "
    "= 5,519; January 29, 2023 = 3,389"
)
CASH_USED = (
    "Liquidity and Capital Resources (in millions): Net cash used in financing activities: Nine "
    "Months Ended October 29, 2023 = (10,004); Nine Months Ended October 30, 2022 = (9,961)"
)


def test_a_span_of_months_is_a_period_and_no_metric() -> None:
    q = analyze("What were Initech's capital expenditures in the first nine months of fiscal 2023?")
    assert q.metrics == ("capital expenditures",)  # "first" was a metric
    assert [(p.text, p.span) for p in q.periods] == [("first nine months", 9), ("fiscal 2023", 0)]
    six = analyze("What was Initech's revenue for the six months ended July 1, 2023?").periods
    assert [(p.span, p.date) for p in six] == [(6, None), (0, (2023, 7, 1))]
    assert [p.span for p in analyze("Initech's net sales in the first half of 2023").periods] == [
        6,
        0,
    ]
    ytd = analyze("What was Initech's YTD revenue?")
    assert ytd.entities == ("Initech",) and [p.span for p in ytd.periods] == [-1]
    assert [p.span for p in analyze("Initech's year-to-date revenue?").periods] == [-1]


def test_a_fiscal_quarter_written_after_its_label_is_one_period() -> None:
    (period,) = analyze("What was Initech's revenue in Q3 fiscal 2024?").periods
    assert (period.quarter, period.year, period.fiscal) == (3, 2024, True)


def test_the_cell_of_the_asked_span() -> None:
    row = _row(INCOME)
    assert pick_cell(row, analyze("What was Initech's net income in Q3 2023?")) == (
        "Three Months Ended July 1, 2023",
        "19,881",
    )
    nine = analyze("What was Initech's net income in the first nine months of 2023?")
    assert pick_cell(row, nine) == ("Nine Months Ended July 1, 2023", "74,039")
    ytd = analyze("What was Initech's year-to-date net income?")
    assert pick_cell(row, ytd) == ("Nine Months Ended July 1, 2023", "74,039")
    dated = analyze("What was Initech's net income for the nine months ended July 1, 2023?")
    assert pick_cell(row, dated) == ("Nine Months Ended July 1, 2023", "74,039")
    composed = compose(nine.text, [(INCOME, (1,), 0)])
    assert composed is not None and "Nine Months Ended July 1, 2023: 74,039" in composed[0]


def test_what_a_company_has_is_a_balance_and_its_revenue_is_not() -> None:
    assert analyze("How much cash did Initech have at the end of Q3 fiscal 2024?").level
    assert analyze("What debt did Initech hold at the end of the quarter?").level
    assert analyze("How much debt does Initech have?").level
    assert not analyze("How much revenue did Initech have in Q3?").level
    assert not analyze("How much did Initech spend on R&D at the end of 2023?").level
    assert "hold" not in analyze("What inventory did Initech hold in Q2 2023?").metrics
    balance = analyze("What was Initech's cash balance at the end of the quarter?")
    assert balance.metrics == ("cash",) and balance.level  # "balance" frames, as "levels" does


def test_cash_names_cash_and_cash_equivalents() -> None:
    """A filing calls its cash "Cash and cash equivalents": the rarer "equivalents" made the
    row too little of what "how much cash" asks for, and the evidence kept the cash flows."""
    scores = LabelIndex.build([CASH_USED, CASH_HELD]).passage_scores(
        "How much cash did Initech have at the end of Q3 fiscal 2024?"
    )
    assert 1 in scores
    question = "How much cash did Initech have at the end of Q3 fiscal 2024?"
    composed = compose(question, [(CASH_USED, (1,), 0), (CASH_HELD, (1,), 1)])
    assert composed is not None and "5,519" in composed[0] and "10,004" not in composed[0]


def test_a_cash_balance_is_the_balance_sheets_cash_and_cash_equivalents() -> None:
    """ "Cash balance": the balance sheet's "Cash and cash equivalents" (its rarer word cost it
    the match), not the investments table's component "Cash"."""
    held = (
        "Condensed consolidated balance sheets (in millions): Current assets - Cash and cash "
        "equivalents: July 1, 2023 = 28,408; September 24, 2022 = 23,646"
    )
    component = (
        "The following tables show the Company's cash and marketable securities (in millions): "
        "Cash: July 1, 2023 Adjusted Cost = 25,337; July 1, 2023 Fair Value = 25,337"
    )
    question = "What was Initech's cash balance at the end of Q3 2023?"
    composed = compose(question, [(held, (1,), 0), (component, (1,), 1)])
    assert composed is not None and "28,408" in composed[0].split("\n")[0], composed


def test_capital_expenditures_are_filed_as_purchases_of_equipment() -> None:
    q = analyze("What were Initech's capital expenditures in the first nine months of 2023?")
    assert asks_flow(q.text) and not q.level
    assert {"properti", "equip"} <= metric_terms(q) and "expens" not in metric_terms(q)
    wanted = query_terms(q.text)
    assert {"properti", "equip", "capit"} <= wanted and "expens" not in wanted
    findings = [(OPEX, (1,), 0), (EQUIPMENT_HELD, (1,), 1), (PAID_IN, (1,), 2), (CAPEX, (1,), 3)]
    composed = compose(q.text, findings)
    assert composed is not None
    assert "Payments for acquisition of property, plant and equipment" in composed[0]
    assert "(8,796)" in composed[0]
    for other in ("41,469", "43,550", "70,667"):
        assert other not in composed[0]
    # "capex" is the same question: spelled out before it is judged or matched
    capex = compose("What was Initech's capex in the first nine months of 2023?", findings)
    assert composed == capex
    held_first = [(EQUIPMENT_NET, (1,), 0), (PURCHASES, (1,), 1)]
    worded = compose("What were Initech's capital expenditures?", held_first)
    assert worded is not None and "(815)" in worded[0] and "3,799" not in worded[0]


def test_a_capex_row_is_relevant_evidence() -> None:
    """Judged by the words a filing writes for it: "capex" shares none with the row."""
    key = key_terms("What was Initech's capex?", ScoringSettings())
    assert coverage([k for k in key if k.term != "initech"], normalized_terms(CAPEX)) == 1.0
    units = build_units([(1, EQUIPMENT_HELD), (2, CAPEX)])
    boosted = line_item_boost("What were Initech's capital expenditures?", units, [1.0, 1.0])
    assert boosted[1] > boosted[0] == 1.0


def test_the_search_for_capital_expenditures_finds_the_cash_flow_statement(
    tmp_path: Path,
) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    prose = "Our capital resources and our working capital are ample for capital expenditures."
    purchases = "Cash flows (in millions): Purchases related to property and equipment: "
    write_pdf(
        root / "2023 Q3 INITECH.pdf",
        [
            ["INITECH CORPORATION", "FORM 10-Q"],
            [prose],
            [prose],
            [EQUIPMENT_NET],
            [purchases + "Nine Months Ended October 29, 2023 = (815)"],
        ],
    )
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    urls = [h.url for h in index.search("Initech capital expenditures", 4)]
    assert "doc:2023 Q3 INITECH.pdf#page=5" in urls, urls
    assert "doc:2023 Q3 INITECH.pdf#page=4" not in urls, urls  # the equipment held


def test_growth_to_a_date_shows_the_year_before() -> None:
    """ "Revenue growth year over year in the quarter ended ..." stated one figure: the year
    before's, of the same length, is half of the answer (a bare date still gets one cell)."""
    row = (
        "Income statements (in millions): Total revenue: Three Months Ended September 30, 2023 = "
        "56,517; Three Months Ended September 30, 2022 = 50,122"
    )
    growth = (
        "What was Initech's revenue growth year over year in the quarter ended September 30, 2023?"
    )
    composed = compose(growth, [(row, (1,), 0)])
    assert composed is not None and "56,517" in composed[0] and "50,122" in composed[0]
    changed = compose(
        "How much did Initech's revenue change in the quarter ended September 30, 2023?",
        [(row, (1,), 0)],
    )
    assert changed is not None and "50,122" in changed[0]
    plain = compose(
        "What was Initech's revenue for the quarter ended September 30, 2023?", [(row, (1,), 0)]
    )
    assert plain is not None and "56,517" in plain[0] and "50,122" not in plain[0]
    nine = compose(
        "How did Initech's net income grow in the nine months ended July 1, 2023?",
        [(INCOME, (1,), 0)],
    )
    assert (
        nine is not None and "74,039" in nine[0] and "79,082" in nine[0] and "19,881" not in nine[0]
    )


def test_a_row_named_by_the_metric_beats_a_table_sharing_its_words() -> None:
    """ "Net income": the "detail of other income/(expense), net" table holds both words, and
    was answered as a table instead of the statement's Net income row."""
    other = "The following table shows the detail of other income/(expense), net (in millions): "
    cells = "Nine Months Ended July 1, 2023 = {}"
    rows = [
        other + "Interest and dividend income: " + cells.format("2,752"),
        other + "Interest expense: " + cells.format("(2,811)"),
        other + "Total other income/(expense), net: " + cells.format("(594)"),
        INCOME,
    ]
    question = "What was Initech's net income for the nine months ended July 1, 2023?"
    composed = compose(question, [(r, (1,), i) for i, r in enumerate(rows)])
    assert composed is not None and "74,039" in composed[0] and "(594)" not in composed[0]
    # a line of the table it names: "inventory levels" are the Inventories table
    inventories = "Inventories (in millions): {}: June 30, 2023 = {}"
    table = [
        inventories.format("Finished goods", "30,000"),
        inventories.format("Components", "6,587"),
        inventories.format("Total inventories", "36,587"),
    ]
    levels = compose(
        "What were Initech's inventory levels at June 30, 2023?",
        [(r, (1,), i) for i, r in enumerate(table)],
    )
    assert levels is not None and "Finished goods" in levels[0]


def test_two_metrics_that_are_one_rows_name_are_that_row() -> None:
    """ "Cash and investments balance": Intel's "Total cash and investments", not its cash and
    its equity investments apart; "revenue and net income" stay two metrics."""
    title = "Liquidity (in millions): {}: Jul 1, 2023 = {}; Dec 31, 2022 = {}"
    rows = [
        (title.format("Cash and cash equivalents", "8,349", "11,144"), (1,), 0),
        (title.format("Equity investments", "5,893", "5,912"), (1,), 1),
        (title.format("Total cash and investments", "24,321", "28,801"), (1,), 2),
    ]
    question = "What was Initech's cash and investments balance at the end of Q2 2023?"
    composed = compose(question, rows)
    assert composed is not None and "24,321" in composed[0] and "8,349" not in composed[0]
    both = compose(
        "What were Initech's net income and capital expenditures?",
        [(INCOME, (1,), 0), (CAPEX, (1,), 1)],
    )
    assert both is not None and "74,039" in both[0] and "(8,796)" in both[0]
