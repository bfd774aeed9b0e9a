"""A level is a balance at a date, not a period's change: "inventory levels" are the balance
sheet's Inventories, not the cash-flow statement's "Changes in ... - Inventories".

The question says it ("levels", "balance", "position", "outstanding"); a row says it by its label
("Changes in", "Increase") or by columns that are all spans of time ("Three Months Ended"). The
search, the evidence and the Answer each prefer the balance.
"""

from __future__ import annotations

from pathlib import Path

from test_local_search import inline

from deepresearch.domains.filings.compose import compose
from deepresearch.providers.llm.evidence import line_item_boost
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.text.line_items import is_flow
from deepresearch.text.question import analyze
from deepresearch.text.sentences import build_units
from deepresearch.text.tables import parse_row

FLOW = (
    "Consolidated statements of cash flows (in millions): Changes in operating assets and "
    "liabilities - Inventories: Three Months Ended September 30, 2023 = (808); Three Months "
    "Ended September 30, 2022 = 732"
)
BALANCE = (
    "Consolidated balance sheets (in millions): Current assets - Inventories: "
    "September 30, 2023 = 35,406; December 31, 2022 = 34,405"
)
INCOME = (
    "Statements of operations (in millions): Net sales: Three Months Ended September 30, 2023 "
    "= 143,083; Three Months Ended September 30, 2022 = 127,101"
)


def _row(text: str):  # type: ignore[no-untyped-def]
    row = parse_row(text)
    assert row is not None
    return row


def test_questions_and_rows_say_whether_they_are_balances() -> None:
    assert analyze("How have Initech's inventory levels changed across quarters?").level
    assert analyze("What was Initech's cash position at the end of Q3 2023?").level
    assert not analyze("How much did Initech's inventories change in Q3 2023?").level
    assert is_flow(_row(FLOW)) and is_flow(_row(INCOME)) and not is_flow(_row(BALANCE))


def test_the_answer_to_a_level_is_the_balance() -> None:
    question = "What were Initech's inventory levels in Q3 2023?"
    composed = compose(question, [(FLOW, (1,), 0), (BALANCE, (2,), 0)])
    assert composed is not None and "35,406" in composed[0] and "(808)" not in composed[0]


def test_the_evidence_for_a_level_raises_only_the_balance() -> None:
    units = build_units([(1, FLOW), (2, BALANCE)])
    boosted = line_item_boost("What were Initech's inventory levels?", units, [1.0, 1.0])
    assert boosted[1] > boosted[0] == 1.0


def test_the_search_for_a_level_finds_the_balance_sheet(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "p1-cash-flows.txt").write_text(f"INITECH 10-Q\n{FLOW}\n")
    (root / "p2-balance-sheet.txt").write_text(f"INITECH 10-Q\n{BALANCE}\n")
    for i in range(3):
        (root / f"p{i + 3}-prose.txt").write_text(
            "INITECH 10-Q\nOur staffing levels depend on demand and on hiring levels.\n"
        )
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    hits = index.search("Initech inventory levels", 4)
    urls = [h.url for h in hits]
    assert urls[0] == "doc:p2-balance-sheet.txt", urls
    assert "35,406" in hits[0].snippet
