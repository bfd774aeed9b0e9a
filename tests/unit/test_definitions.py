"""A line item the filing defines in its own words answers the question asking for the defined
thing: "R&D expenditure" is the row whose costs "include ... the research and development of new
products", when no row is called research and development."""

from __future__ import annotations

from deepresearch.domains.filings.compose import compose
from deepresearch.domains.filings.definitions import defined_as, definitions
from deepresearch.text.tables import TableRow, format_row
from deepresearch.text.terms import terms

DEFINITION = (
    "Technology and infrastructure costs include payroll and related expenses for employees "
    "involved in the research and development of new and existing products and services."
)
FULFILLMENT = "Fulfillment costs primarily consist of those costs incurred in operating centers."


def test_a_sentence_defining_a_line_item_is_read_as_its_definition() -> None:
    found = definitions([f"{FULFILLMENT} {DEFINITION}", "Our costs rose 5% in the quarter."])
    assert [item for item, _ in found] == ["Fulfillment", "Technology and infrastructure"]


def test_the_defined_row_stands_for_a_metric_no_row_names() -> None:
    labels = ["Fulfillment", "Technology and infrastructure", "Total operating expenses"]
    wanted = set(terms("research and development"))
    assert defined_as(wanted, labels, [FULFILLMENT, DEFINITION]) == "Technology and infrastructure"
    # a row named for it wins: no definition is needed
    assert defined_as(wanted, [*labels, "Research and development"], [DEFINITION]) == ""
    # a definition of no row of the table, or none at all, stands for nothing
    assert defined_as(wanted, ["Fulfillment"], [DEFINITION]) == ""
    assert defined_as(set(terms("marketing")), labels, [DEFINITION]) == ""


def _row(label: str, quarter: str, value: str) -> str:
    cells = ((f"Three Months Ended {quarter}", value),)
    return format_row(
        TableRow("Consolidated statements of operations", "in millions", label, cells)
    )


def test_a_trend_of_a_defined_metric_is_the_defining_rows_trend() -> None:
    findings = [
        (
            _row("Operating expenses - Technology and infrastructure", "June 30, 2023", "21,931"),
            (1,),
            0,
        ),
        (
            _row(
                "Operating expenses - Technology and infrastructure", "September 30, 2023", "21,203"
            ),
            (2,),
            0,
        ),
        (_row("Total operating expenses", "June 30, 2023", "126,702"), (1,), 0),
        (_row("Total operating expenses", "September 30, 2023", "131,895"), (2,), 0),
        (DEFINITION, (2,), 0),
    ]
    question = "How does Initech's R&D expenditure in the most recent quarter compare to previous quarters?"
    composed = compose(question, findings)
    assert composed is not None
    assert "21,203" in composed[0] and "21,931" in composed[0], composed[0]
    assert "131,895" not in composed[0]
