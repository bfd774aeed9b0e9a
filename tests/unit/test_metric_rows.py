"""Each metric a question names gets its evidence: its own row, in the words a filer uses.

"How did operating expenses compare to revenue?": rows naming both ("Total cost of sales": cost
~ expenses, sales ~ revenue) and prose repeating the question outscore "Total net sales", which
names only one and shares its label's "total" and "net" with no question word."""

from __future__ import annotations

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


def test_a_debt_question_reads_the_notes_and_paper_a_filer_says_instead() -> None:
    """A filer tells its debt as notes, commercial paper and loans; a sentence about them is
    evidence for "changes in debt" though it never says "debt"."""
    page = "\n".join(
        [
            "As of December 31, 2022, the Company had $1.7 billion of Commercial Paper "
            "outstanding under its borrowings program.",
            "The Company issued $5.5 billion of fixed-rate notes during the quarter.",
            "Changes in customer demand affected the Company's structure of sales channels.",
            "Changes in structure and interest in new products were reported by the Company.",
        ]
    )
    source = SourceText(n=1, url="doc:q1.pdf#page=9", title="q1.pdf", location="p", text=page)
    draft = answer_findings(
        FindingsTask(
            question="What changes in debt structure did Initech disclose in the Q1 2023 10-Q?",
            sources=(source,),
            max_findings=2,
        )
    )
    texts = " ".join(f.text for f in draft.findings)
    assert "$1.7 billion of Commercial Paper" in texts and "$5.5 billion" in texts, texts


def test_a_legal_question_reads_the_litigation_a_filer_tells() -> None:
    """A filer tells its legal proceedings as litigation and lawsuits; those sentences are
    evidence for "legal proceedings" though they never say "legal"."""
    page = "\n".join(
        [
            "In May 2023, a competitor filed a lawsuit alleging that our processors infringe "
            "four patents, seeking damages of $1.5 billion.",
            "We have accrued a charge of $2.2 billion related to the patent litigation.",
            "Proceeds from the sale of equipment were reported in other income.",
            "Our proceedings with suppliers on new products continued during the quarter.",
        ]
    )
    source = SourceText(n=1, url="doc:q2.pdf#page=31", title="q2.pdf", location="p", text=page)
    draft = answer_findings(
        FindingsTask(
            question="What legal proceedings did Initech disclose in the Q2 2023 10-Q?",
            sources=(source,),
            max_findings=2,
        )
    )
    texts = " ".join(f.text for f in draft.findings)
    assert "filed a lawsuit" in texts and "patent litigation" in texts, texts
