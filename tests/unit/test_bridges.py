"""Bridge (waterfall) tables read as rows: each amount with the cause or period figure it is,
under the heading and unit above, the causes as the change between the two periods' figures.

* two bridges printed one under the other are two tables; a cause wrapped onto the next line
  (in lower case, or after a cause cut on a lower-case word) is one label;
* footnotes, numbered lists, sentences wrapped after an amount and year-first prose are left as
  they are;
* a PDF page laid out that way is extracted as those rows (a chart's axis and note above are no
  heading).
"""

from __future__ import annotations

from pathlib import Path

from pdf_layout import write_pdf

from deepresearch.providers.documents.extract import extract_path
from deepresearch.text.bridges import rows_from_bridges
from deepresearch.text.tables import parse_row

BRIDGE = [
    "Operating Income Summary",
    "We had operating income of $71 million in Q3 2023.",
    "(In Millions)",
    "$ 71 Q3 2023 Operating Income",
    "405 Lower operating expenses driven by cost-cutting measures",
    "(299) Higher unit cost primarily from increased mix of",
    "newer products",
    "(1,935) Lower product margin due to lower revenue, partially offset by higher",
    "Other product revenue",
    "(76) Other",
    "$ (139) Q3 2022 Operating Income",
    "$ (608) YTD 2023 Operating Income",
    "990 Lower operating expenses driven by cost-cutting measures",
    "(2,437) Lower product margin",
    "$ 1,174 YTD 2022 Operating Income",
    "MD&A 27",
]


def _rows(text: str) -> list[tuple[str, str, str, str, str]]:
    out = []
    for line in text.split("\n"):
        row = parse_row(line)
        if row is not None:
            (header, value), *_ = row.cells
            out.append((row.title, row.unit, row.label, header, value))
    return out


def test_a_bridge_is_rows_of_figures_and_changes_under_its_heading() -> None:
    rows = _rows(rows_from_bridges("\n".join(BRIDGE)))
    change = "Change between Q3 2023 and Q3 2022"
    assert rows[0] == (
        "Operating Income Summary",
        "in millions",
        "Q3 2023 Operating Income",
        "Amount",
        "71",
    )
    labels = [(label, header, value) for _, _, label, header, value in rows]
    assert labels[1:6] == [
        ("Lower operating expenses driven by cost-cutting measures", change, "405"),
        ("Higher unit cost primarily from increased mix of newer products", change, "(299)"),
        (
            "Lower product margin due to lower revenue, partially offset by higher Other "
            "product revenue",
            change,
            "(1,935)",
        ),
        ("Other", change, "(76)"),
        ("Q3 2022 Operating Income", "Amount", "(139)"),
    ]
    # the second bridge, printed right under the first, is a table of its own
    assert labels[6:] == [
        ("YTD 2023 Operating Income", "Amount", "(608)"),
        (
            "Lower operating expenses driven by cost-cutting measures",
            "Change between YTD 2023 and YTD 2022",
            "990",
        ),
        ("Lower product margin", "Change between YTD 2023 and YTD 2022", "(2,437)"),
        ("YTD 2022 Operating Income", "Amount", "1,174"),
    ]
    text = rows_from_bridges("\n".join(BRIDGE))
    assert text.startswith("Operating Income Summary\nWe had operating income")
    assert text.endswith("\nMD&A 27")


def test_footnotes_lists_and_wrapped_sentences_are_not_bridges() -> None:
    footnotes = "\n".join(
        [
            "(1) Includes sales of AirPods, Apple TV and accessories.",
            "(2) Includes non-cancellable financing obligations for fulfillment and data",
            "center facilities.",
            "(3) Excludes approximately $5.0 billion of accrued tax contingencies.",
        ]
    )
    wrapped_notes = "\n".join(  # each footnote's sentence ends on its next line
        [
            "(1) Includes obligations for fulfillment and data",
            "center facilities.",
            "(2) Includes purchase obligations for content that are not",
            "reflected on the balance sheets.",
            "(3) Excludes accrued tax contingencies that we cannot",
            "reasonably estimate.",
        ]
    )
    cut = "\n".join(  # amounts that end a wrapped sentence's line: lower case follows
        [
            "7 million shares for $3.72 billion and",
            "8.28 billion of shares through December 2023 and",
            "1,100 million in the prior year and",
        ]
    )
    numbered = "1 Overview of the business\n2 Risks we face\n3 Outlook for the year"
    wrapped = "\n".join(
        [
            "we repurchased 7 million shares for $1.05 billion and an aggregate of",
            "8.28 billion of shares through December 2023",
            "11,271 million and $8,561 million.",
            "2,044 Seattle employees were hired in the period",
        ]
    )
    years = "2023 Revenue grew in every region\n2022 Revenue fell\n2021 Revenue was flat"
    for text in (footnotes, wrapped_notes, cut, numbered, wrapped, years):
        assert rows_from_bridges(text) == text


def test_a_pdf_page_with_a_bridge_is_extracted_as_rows(tmp_path: Path) -> None:
    page = [
        "Gross Margin",
        "Gross Margin $B",
        "(Percentages in chart indicate gross margin as a percentage of total revenue)",
        "$9.2",
        "Q1 2022 Q1 2023",
        "(In Millions)",
        "$ 4,008 Q1 2023 Gross Margin",
        "(2,358) Lower product margin primarily from lower notebook revenue",
        "444 Lower period charges primarily driven by lower product ramp costs",
        "$ 9,244 Q1 2022 Gross Margin",
    ]
    doc = extract_path(write_pdf(tmp_path / "q1.pdf", [page]))
    rows = _rows(doc.pages[0])
    assert rows[0] == ("Gross Margin $B", "in millions", "Q1 2023 Gross Margin", "Amount", "4,008")
    assert rows[1][2:] == (
        "Lower product margin primarily from lower notebook revenue",
        "Change between Q1 2023 and Q1 2022",
        "(2,358)",
    )
    assert rows[-1][2:] == ("Q1 2022 Gross Margin", "Amount", "9,244")
