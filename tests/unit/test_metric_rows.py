"""Each metric a question names gets its evidence: its own row, in the words a filer uses.

"How did operating expenses compare to revenue?": rows naming both ("Total cost of sales": cost
~ expenses, sales ~ revenue) and prose repeating the question outscore "Total net sales", which
names only one and shares its label's "total" and "net" with no question word."""

from __future__ import annotations

import pytest

from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.text.tables import TableRow, format_row

QUESTION = (
    "How did Initech's operating expenses for Q1 2023 compare to its revenue for the same quarter?"
)


def _row(label: str, value: str, date: str = "December 31, 2022") -> str:
    cells = ((f"Three Months Ended {date}", value),)
    return format_row(TableRow("Statements of operations", "in millions", label, cells))


def _source(n: int, date: str, values: tuple[str, str, str, str]) -> SourceText:
    sales, cost, opex, rd = values
    page = "\n".join(
        [
            _row("Total net sales", sales, date),
            _row("Total cost of sales", cost, date),
            _row("Operating expenses - Research and development", rd, date),
            _row("Total operating expenses", opex, date),
            "Operating expenses and revenue for the quarter were affected by costs of sales growth.",
            "New product introductions can significantly impact net sales, cost of sales and "
            "operating expenses.",
        ]
    )
    return SourceText(n=n, url=f"doc:q{n}.pdf#page=4", title=f"q{n}.pdf", location="p", text=page)


def test_each_metric_named_gets_its_best_row_into_the_evidence() -> None:
    sources = (
        _source(1, "March 31, 2023", ("117,154", "66,822", "14,316", "7,709")),
        _source(2, "June 30, 2023", ("94,836", "51,334", "13,658", "7,457")),
    )
    draft = answer_findings(FindingsTask(question=QUESTION, sources=sources, max_findings=3))
    texts = " ".join(f.text for f in draft.findings)
    assert "14,316" in texts, texts
    assert "117,154" in texts, texts  # the revenue line, which names one metric only


@pytest.mark.parametrize(
    ("question", "lines", "wanted"),
    [
        # a filer tells its debt as notes, commercial paper and loans
        (
            "What changes in debt structure did Initech disclose in the Q1 2023 10-Q?",
            [
                "As of December 31, 2022, the Company had $1.7 billion of Commercial Paper "
                "outstanding under its borrowings program.",
                "The Company issued $5.5 billion of fixed-rate notes during the quarter.",
                "Changes in customer demand affected the Company's structure of sales channels.",
                "Changes in structure and interest in new products were reported by the Company.",
            ],
            ("$1.7 billion of Commercial Paper", "$5.5 billion"),
        ),
        # and its legal proceedings as litigation and lawsuits
        (
            "What legal proceedings did Initech disclose in the Q2 2023 10-Q?",
            [
                "In May 2023, a competitor filed a lawsuit alleging that our processors infringe "
                "four patents, seeking damages of $1.5 billion.",
                "We have accrued a charge of $2.2 billion related to the patent litigation.",
                "Proceeds from the sale of equipment were reported in other income.",
                "Our proceedings with suppliers on new products continued during the quarter.",
            ],
            ("filed a lawsuit", "patent litigation"),
        ),
    ],
)
def test_a_question_reads_what_a_filer_says_instead(
    question: str, lines: list[str], wanted: tuple[str, ...]
) -> None:
    """A sentence in the filer's words is evidence for what the question names, though it never
    says "debt" or "legal"; sentences sharing only the question's other words are not."""
    text = "\n".join(lines)
    source = SourceText(n=1, url="doc:q1.pdf#page=9", title="q1.pdf", location="p", text=text)
    draft = answer_findings(FindingsTask(question=question, sources=(source,), max_findings=2))
    texts = " ".join(f.text for f in draft.findings)
    assert all(w in texts for w in wanted), texts
