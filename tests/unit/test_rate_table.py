"""A rate is answered with the two amounts of its table it is the ratio of: "Effective tax rate
696.2 %" tells a reader little without the provision (362) over the income before taxes (52).
The pair is found by arithmetic in every column, not by the rows' names."""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.text.row_sums import ratio_of
from deepresearch.text.tables import TableRow, format_row, parse_row

CELLS = (
    "Three Months Ended Sep 30, 2023",
    "Three Months Ended Oct 1, 2022",
    "Nine Months Ended Sep 30, 2023",
)
TITLE = "Note 9 - Income Taxes"


def _row(label: str, *values: str, title: str = TITLE) -> TableRow:
    return TableRow(title, "in millions", label, tuple(zip(CELLS, values, strict=True)))


INCOME = _row("Income (loss) before taxes", "(52)", "800", "1,250")
PROVISION = _row("Provision for (benefit from) taxes", "(362)", "120", "(25)")
RATE = _row("Effective tax rate", "696.2 %", "15.0 %", "(2.0)%")
OTHER = _row("Cash paid for income taxes", "40", "90", "300")


def test_the_rate_is_the_provision_over_the_income_in_every_column() -> None:
    assert ratio_of(RATE, [OTHER, INCOME, PROVISION]) == (2, 1)
    assert ratio_of(RATE, [INCOME, OTHER]) is None  # no two rows make it


def test_a_ratio_one_column_agrees_on_is_no_ratio() -> None:
    one = _row("Effective tax rate", "696.2 %", "", "")
    assert ratio_of(one, [INCOME, PROVISION]) is None
    # the first column agrees, the second does not (120 / 800 is 15.0 %, not 16.0 %)
    off = _row("Effective tax rate", "696.2 %", "16.0 %", "(2.0)%")
    assert ratio_of(off, [INCOME, PROVISION]) is None


def test_rounding_is_the_printed_decimals() -> None:
    rate = _row("Effective tax rate", "696 %", "15 %", "(2)%")
    assert ratio_of(rate, [INCOME, PROVISION]) == (1, 0)
    assert parse_row(format_row(RATE)) == RATE  # what the answer reads back


def _findings(*rows: TableRow, source: int = 1) -> list[tuple[str, tuple[int, ...], int]]:
    return [(format_row(r), (source,), 0) for r in rows]


def test_a_rate_question_is_answered_with_the_amounts_it_is_the_ratio_of() -> None:
    composed = compose(
        "What was Initech's effective tax rate in the most recent 10-Q?",
        _findings(RATE, OTHER, PROVISION, INCOME),
    )
    assert composed is not None
    text = composed[0]
    assert "696.2 %" in text and "(362)" in text and "(52)" in text, text
    assert "Cash paid" not in text
    lines = [line for line in text.split("\n\n") if line.startswith("| ")]
    assert lines[0].startswith(f"| Initech: {TITLE}") and len(lines) == 5, lines
    assert composed[1] == (1,)


def test_without_its_amounts_a_rate_is_its_line_alone() -> None:
    composed = compose(
        "What was Initech's effective tax rate in the most recent 10-Q?",
        _findings(RATE, OTHER, INCOME),
    )
    assert composed is not None and "696.2 %" in composed[0]
    assert "|" not in composed[0] and "(52)" not in composed[0]


def test_amounts_of_another_table_are_not_the_rates() -> None:
    moved = [
        _row(r.label, *(v for _, v in r.cells), title="Other table") for r in (PROVISION, INCOME)
    ]
    composed = compose(
        "What was Initech's effective tax rate in the most recent 10-Q?",
        _findings(RATE, *moved),
    )
    assert composed is not None and "(362)" not in composed[0]


def test_the_evidence_of_a_rate_holds_the_amounts_it_is_the_ratio_of() -> None:
    """ "What was the effective tax rate" names the rate's row only: the two rows of its table it
    is made of are handed on with it, as a total's parts are, so the Answer can show them."""
    prose = [
        f"Our effective tax rate reflected the tax rate of jurisdiction {k} and tax credits."
        for k in range(6)
    ]
    page = "\n".join([*prose, *(format_row(r) for r in (OTHER, INCOME, PROVISION, RATE))])
    source = SourceText(n=1, url="doc:q3.pdf#page=14", title="q3.pdf", location="p. 14", text=page)
    task = FindingsTask(
        question="What was Initech's effective tax rate in the most recent 10-Q?",
        sources=(source,),
        max_findings=3,
    )
    texts = [f.text for f in answer_findings(task).findings]
    assert any(": Effective tax rate: " in t for t in texts), texts
    assert any(": Provision for (benefit from) taxes: " in t for t in texts), texts
    assert any(": Income (loss) before taxes: " in t for t in texts), texts
