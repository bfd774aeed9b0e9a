"""A total is read with its parts: the rows directly above it whose figures add up to it.

* ``row_sums.parts`` finds them by arithmetic in every column (a difference is no sum, a
  bracketed figure is negative, a dash is zero);
* a question about the total ("operating expenses") gets the parts in its findings, though they
  name none of its words ("Research and development", "Restructuring and other charges"), and
  the parts of a total it does not name stay out;
* the researcher's relevance check keeps a part whose total it keeps, and no other row that
  shares nothing with the question.
"""

from __future__ import annotations

from deepresearch.config.settings import load_settings
from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.policies.synthesis.sufficiency import check_findings
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.schemas import Finding
from deepresearch.text.row_sums import differences, parts, summing, totals_of_parts
from deepresearch.text.tables import TableRow, format_row

QUESTION = "How did Initech's operating expenses change in the third quarter of 2023?"
INCOME = "Consolidated Statements of Income"
COLUMNS = ("Three Months Ended Sep 30, 2023", "Three Months Ended Oct 1, 2022")
STATEMENT = [
    ("Net revenue", "14,158", "15,338"),
    ("Cost of sales", "8,140", "8,803"),
    ("Gross margin", "6,018", "6,535"),
    ("Research and development", "3,870", "4,302"),
    ("Marketing, general, and administrative", "1,340", "1,744"),
    ("Restructuring and other charges", "816", "664"),
    ("Operating expenses", "6,026", "6,710"),
    ("Operating income (loss)", "(8)", "(175)"),
]
PARTS = ("Research and development", "Marketing, general, and administrative", "Restructuring")
EQUITY = [  # a total the question does not name: its parts are no evidence
    ("Common stock", "36,059", "31,580"),
    ("Retained earnings", "67,021", "70,405"),
    ("Accumulated other comprehensive income (loss)", "(861)", "(562)"),
    ("Total stockholders' equity", "102,219", "101,423"),
]


def _row(title: str, label: str, *values: str) -> TableRow:
    return TableRow(title, "in millions", label, tuple(zip(COLUMNS, values, strict=True)))


def _page(title: str, rows: list[tuple[str, str, str]]) -> list[str]:
    return [format_row(_row(title, *r)) for r in rows]


def _findings(title: str, rows: list[tuple[str, str, str]], question: str, most: int) -> list[str]:
    """The findings' texts for ``question`` over one page holding ``rows`` of one table."""
    page = "\n".join(_page(title, rows))
    source = SourceText(n=1, url="doc:q.pdf#page=4", title="q.pdf", location="p. 4", text=page)
    task = FindingsTask(question=question, sources=(source,), max_findings=most)
    return [f.text for f in answer_findings(task).findings]


def test_a_total_is_the_rows_above_that_add_up_to_it_in_every_column() -> None:
    rows = [_row(INCOME, *r) for r in STATEMENT]
    assert parts(rows) == {6: (3, 4, 5)}  # not gross margin: revenue less cost is no sum
    debt = [
        _row("Debt", "Total debt", "48,116", "49,781"),
        _row("Debt", "Current portion of long-term debt", "(3,997)", "(2,749)"),
        _row("Debt", "Long-term debt", "44,119", "47,032"),
    ]
    assert parts(debt) == {2: (0, 1)}  # a bracketed figure is negative
    dash = [_row("T", "A", "10", "—"), _row("T", "B", "5", "7"), _row("T", "Total", "15", "7")]
    assert parts(dash) == {2: (0, 1)}  # a dash is zero
    disagree = [_row("T", "A", "10", "1"), _row("T", "B", "5", "7"), _row("T", "C", "15", "9")]
    assert parts(disagree) == {}  # every column must add up


def test_out_of_order_the_parts_are_the_fewest_rows_that_add_up_in_every_column() -> None:
    """A report's findings come in relevance order: the parts are found by the sum alone."""
    rows = [_row(INCOME, *r) for r in STATEMENT]
    shuffled = [rows[7], rows[5], rows[0], rows[3], rows[2], rows[4]]
    assert summing(rows[6], shuffled) == (1, 3, 5)  # restructuring, R&D, marketing
    assert summing(rows[6], shuffled[:3]) == ()  # a part missing: no sum
    one = [_row("T", "A", "10", "7"), _row("T", "B", "5", "—"), _row("T", "C", "5", "0")]
    assert summing(_row("T", "Total", "15", "7"), one) == (0, 1)  # a dash is zero
    assert summing(_row("T", "Total", "15", "8"), one) == ()  # every column must add up


def test_a_question_about_a_total_finds_its_parts_and_no_other_totals_parts() -> None:
    page = "\n".join(
        [
            "Operating expenses were lower as we continued to reduce spending.",
            *_page(INCOME, STATEMENT),
            *_page("Consolidated Balance Sheets", EQUITY),
        ]
    )
    source = SourceText(n=1, url="doc:q3.pdf#page=6", title="q3.pdf", location="p. 6", text=page)
    task = FindingsTask(question=QUESTION, sources=(source,), max_findings=6)
    texts = [f.text for f in answer_findings(task).findings]
    assert any(": Operating expenses: " in t for t in texts), texts
    assert all(any(f": {label}" in t for t in texts) for label in PARTS), texts
    assert not any("Retained earnings" in t or "Common stock" in t for t in texts), texts


def test_the_relevance_check_keeps_a_part_of_a_kept_total() -> None:
    cfg = load_settings(None, {}, env={}).scoring
    lines = _page(INCOME, STATEMENT)
    # read under its file name, which names no company; the page does, in a line of its own
    text = "\n".join(["Initech Corp. | Q3 2023 Form 10-Q", *lines])
    total, part = Finding(text=lines[6], citations=("u",)), Finding(text=lines[3], citations=("u",))
    other = Finding(text=lines[0], citations=("u",))  # revenue: part of no total
    check = check_findings(QUESTION, [total, part, other], [text], cfg, True, {"u": "q3.pdf"})
    assert check.kept == (total, part)
    alone = check_findings(QUESTION, [part], [text], cfg, True, {"u": "q3.pdf"})
    assert alone.kept == ()  # its total is not kept: nothing says it is on the topic
    assert totals_of_parts([text])[lines[3]] == {lines[6]}


DEBT = [  # "Total debt" is a part of "Long-term debt", with the current portion taken off
    ("2015 issuance of $23.8 billion", "9,805", "10,805"),
    ("2016 issuance of $19.8 billion", "9,430", "9,430"),
    ("Total face value", "53,812", "55,511"),
    ("Unamortized discount and issuance costs", "(455)", "(471)"),
    ("Premium on debt exchange", "(5,138)", "(5,191)"),
    ("Total debt", "48,219", "49,849"),
    ("Current portion of long-term debt", "(3,997)", "(2,749)"),
    ("Long-term debt", "44,222", "47,100"),
]


def test_a_named_total_brings_the_total_it_is_a_part_of_and_that_totals_other_parts() -> None:
    """ "Total debt" is what the question names; the filing's "Long-term debt" is that total
    less its current portion (3,997), a row that names neither word of "total debt"."""
    question = "What changes in Initech's total debt were reported in the Q1 2023 10-Q?"
    texts = _findings("The components of debt were as follows", DEBT, question, 6)
    assert any(": Total debt: " in t for t in texts), texts
    assert any(": Current portion of long-term debt: " in t for t in texts), texts
    assert any(": Long-term debt: " in t for t in texts), texts


def test_a_named_part_is_read_beside_its_total_and_the_other_parts() -> None:
    """ "Services" net sales is a part of "Total net sales": a reader judges it against the
    total and the other part, neither of which names services."""
    rows = [
        ("Products", "60,584", "63,355"),
        ("Services", "21,213", "19,604"),
        ("Total net sales", "81,797", "82,959"),
        ("Cost of sales - Products", "39,136", "41,485"),
        ("Cost of sales - Services", "5,719", "5,589"),
    ]
    question = "How did Initech's Services segment perform in the third quarter of 2023?"
    texts = _findings("Condensed consolidated statements of operations", rows, question, 2)
    assert any(": Services: " in t for t in texts), texts
    assert any(": Total net sales: " in t for t in texts), texts
    assert any(": Products: " in t for t in texts), texts


def test_a_subtotal_is_the_first_item_above_it_less_or_plus_the_items_between() -> None:
    """A statement prints its subtotals without signs: gross margin is revenue less cost of
    sales, operating income is gross margin less operating expenses (whose own parts lie
    between them and count in their total), income before taxes is operating income plus the
    other income whose parts lie between."""
    rows = [_row(INCOME, *r) for r in STATEMENT]
    assert differences(rows, parts(rows)) == {2: (0, 1), 7: (2, 6)}
    more = [
        *STATEMENT,
        ("Interest income", "200", "100"),
        ("Other, net", "(50)", "(25)"),
        ("Other income, net", "150", "75"),
        ("Income (loss) before taxes", "142", "(100)"),
    ]
    rows = [_row(INCOME, *r) for r in more]
    assert differences(rows, parts(rows))[11] == (7, 10)
    single = [_row("T", "A", "10", "a"), _row("T", "B", "4", "b"), _row("T", "C", "6", "c")]
    assert differences(single, {}) == {}  # one column's difference may be chance


def test_a_question_about_a_subtotal_finds_what_it_is_made_of() -> None:
    question = "What drove Initech's operating income (loss) in the third quarter of 2023?"
    texts = _findings(INCOME, STATEMENT, question, 8)
    assert any(": Operating income (loss): " in t for t in texts), texts
    assert any(": Gross margin: " in t for t in texts), texts
    assert any(": Operating expenses: " in t for t in texts), texts


def test_a_chosen_part_brings_the_total_it_makes_up() -> None:
    """ "Changes in debt": the notes table's "Unamortized debt discount" names debt, and its
    total, "Net carrying amount" (the notes less the discount), names nothing of the question:
    it is the debt a reader wants, and comes with the part."""
    notes = [
        ("1.55% Notes Due 2028", "1,250", "1,250"),
        ("2.85% Notes Due 2030", "1,500", "1,500"),
        ("3.50% Notes Due 2040", "1,000", "1,000"),
        ("Unamortized debt discount and issuance costs", "(46)", "(47)"),
        ("Net carrying amount", "3,704", "3,703"),
    ]
    question = "What changes in Initech's debt were reported in the Q1 2023 10-Q?"
    texts = _findings("The carrying value of our outstanding notes", notes, question, 1)
    assert any(": Unamortized debt discount" in t for t in texts), texts
    assert any(": Net carrying amount: " in t for t in texts), texts
