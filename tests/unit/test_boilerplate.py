"""Boilerplate is recognised by its shape and by repetition across documents, never by a list of
one corpus's phrases, and it never becomes evidence."""

from __future__ import annotations

import pytest

from deepresearch.providers.llm.evidence import evidence_units
from deepresearch.text.boilerplate import boilerplate, off_topic, repeated, shape_of, template_pages


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("I, Jane Roe, certify that I have reviewed this quarterly report of Initech Corp.;",
         "certification"),
        ("/s/ Jane Roe", "signature"),
        ("Date: October 27, 2023", "signature"),
        ("November 3, 2023", "date line"),
        ("Item 2. Management's Discussion and Analysis of Results 17", "index line"),
        ("Risk Factors .......... 24", "index line"),
        ("31.1* Rule 13a-14(a) / 15d-14(a) Certification of Chief Executive Officer", "index line"),
        (
            "101 The following financial statements from the Company's Quarterly Report on Form "
            "10-Q, formatted in Inline XBRL: (i) Consolidated Statements of Cash Flows",
            "index line",
        ),
        ("104 Cover Page Interactive Data File (embedded within the Inline XBRL document)", "index line"),
        ("Financial Statements Notes to Financial Statements 15", "index line"),
        (
            "5G The fifth-generation mobile network ADAS Advanced driver-assistance systems ASP "
            "Average selling price CCG Client Computing Group operating segment",
            "glossary",
        ),
        ('Unless the context requires otherwise, "Initech" or "the Company" refers to Initech '
         "Corp. and its subsidiaries.", "definition"),
        ("This report contains forward-looking statements that involve risks and uncertainties "
         "and actual results could differ materially.", "disclaimer"),
        # the legend's enumeration of risks, "differ" split where the PDF set a ligature
        ("Actual results and outcomes could dif er materially for a variety of reasons, "
         "including, among others, fluctuations in foreign exchange rates, inflation, "
         "risks of inventory management and global supply chain constraints.", "disclaimer"),
        # an officer's certification in the third person, its section by its sign alone
        ("In connection with the Quarterly Report of Initech Corp. on Form 10-Q, Jane Roe, "
         "Chief Financial Officer of the Company, does hereby certify, pursuant to § 906 of the "
         "Sarbanes-Oxley Act, that to her knowledge the Report fully complies with the "
         "requirements.", "certification"),
        # a reading instruction about the report itself: it names the exchange commission, not
        # an exchange rate, and says nothing of the quarter
        ("The following discussion should be read in conjunction with the 2022 Form 10-K filed "
         "with the U.S. Securities and Exchange Commission.", "disclaimer"),
        # the filer's statement on its own controls: "affected" is no effect of an exchange rate
        ("There were no changes in the Company's internal control over financial reporting "
         "during the third quarter that have materially affected, or are reasonably likely to "
         "materially affect, the Company's internal control over financial reporting.",
         "disclaimer"),
        ("Based on this evaluation, the CEO and CFO concluded that our disclosure controls and "
         "procedures were effective.", "disclaimer"),
        # the interim statements' standing assertion, and whom they cover by a defined name
        ("In the opinion of the Company's management, the condensed consolidated financial "
         "statements reflect all adjustments, which are normal and recurring in nature, "
         "necessary for fair financial statement presentation.", "disclaimer"),
        ("The condensed consolidated financial statements include the accounts of Initech Corp. "
         "and its wholly owned subsidiaries (collectively “Initech” or the “Company”).",
         "definition"),
        # an auditor's review report, under the address line a page extraction joins to it
        ("To the Stockholders and the Board of Directors of Initech Corp. Results of Review of "
         "Interim Financial Information We have reviewed the accompanying condensed "
         "consolidated balance sheet of Initech Corp. as of March 31, 2023, and the related "
         "condensed consolidated statements of income for the three-month periods then ended.",
         "disclaimer"),
        ("We conducted our reviews in accordance with the standards of the Public Company "
         "Accounting Oversight Board (United States).", "disclaimer"),
        # a contents table rebuilt as rows, under whatever heading the page runs
        ("Index: PART I - Item 1. Financial Statements a) Income Statements for the Three Months "
         "Ended September 30, 2023: Page = 3", "table of contents"),
    ],
)  # fmt: skip
def test_boilerplate_shapes(text: str, shape: str) -> None:
    assert shape_of(text) == shape


@pytest.mark.parametrize(
    "text",
    [
        "Total net sales increased 8% to $81,797 million during the third quarter.",
        "Gross margin percentage was 44.5% compared with 43.3% a year earlier.",
        "The Company refers customers to authorized resellers in most markets.",  # no quoted term
        "We expect revenue growth to continue, driven by cloud services.",
        "I/O revenue rose 12% in the quarter.",
        "101 million shares were repurchased in the quarter.",  # a number, then no capital
        "We have reviewed our pricing in every market and raised prices 5% in the quarter.",
        "Revenue for DCAI and NEX grew while CCG and AXG declined in the quarter.",
        "Operating Income Grew 12",  # two words and a figure: a heading of a chart, at most
        "Statements of operations (in millions): Total net sales: Three Months Ended = 81,797",
        # a defined name beside figures is a statement of them
        "The Company had fixed-rate notes of $109.4 billion (collectively the “Notes”).",
    ],
)
def test_findings_are_not_boilerplate(text: str) -> None:
    assert shape_of(text) is None


def test_a_figure_free_template_repeated_in_two_documents_is_boilerplate() -> None:
    template = (
        "The registrant has filed all reports required to be filed during the preceding period."
    )
    units = [
        ("doc:a.pdf", template),
        ("doc:b.pdf", template.upper()),  # case and punctuation do not hide a copy
        ("doc:a.pdf", "Revenue was 1,234 in the quarter and rose by 5% over the prior year."),
        ("doc:b.pdf", "Revenue was 1,234 in the quarter and rose by 5% over the prior year."),
    ]
    assert repeated(units) == {template, template.upper()}
    assert boilerplate(units) == [True, True, False, False]
    assert repeated([("doc:a.pdf", template), ("doc:a.pdf", template)]) == set()  # one document


def test_off_topic_needs_a_metric_term() -> None:
    assert off_topic(["appl", "sign"], ["revenu"])
    assert not off_topic(["revenu", "rose"], ["revenu"])
    assert not off_topic(["anything"], [])  # a question without metric words filters nothing


def test_evidence_units_drop_certifications_and_name_only_sentences() -> None:
    page = (
        "I, Jane Roe, certify that I have reviewed this quarterly report on Form 10-Q of Initech "
        "Corp.\n"
        "Initech Corp. is incorporated in Delaware and has its offices in a large city.\n"
        "Net revenue for the quarter was $5,120 million, up 7% from the prior year quarter.\n"
    )
    units = evidence_units(
        "What was Initech's net revenue in the quarter?", [(1, "doc:x.pdf#page=3", page)]
    )
    assert [u.text for u in units] == [
        "Net revenue for the quarter was $5,120 million, up 7% from the prior year quarter."
    ]


def test_a_models_quoted_certification_is_not_kept_as_a_finding() -> None:
    from deepresearch.config.settings import load_settings
    from deepresearch.policies.synthesis.sufficiency import check_findings
    from deepresearch.schemas import Finding

    cfg = load_settings(None, {}, env={}).scoring
    cert = Finding(
        text="I, Jane Roe, certify that I have reviewed this quarterly report of Initech Corp.",
        citations=("doc:x.pdf#page=40",),
    )
    fact = Finding(
        text="Initech's net revenue was $5,120 million.", citations=("doc:x.pdf#page=3",)
    )
    sources = ["Initech net revenue was $5,120 million in the quarter. I certify the report."]
    check = check_findings("What was Initech's net revenue?", [cert, fact], sources, cfg, False)
    assert check.kept == (fact,) and check.dropped == 1


def _certification(company: str, officer: str, day: int) -> str:
    return "\n".join(
        [
            "Exhibit 31.1",
            "CERTIFICATION",
            f"{officer}, Chief Executive Officer of {company}, states that:",
            f"1. The officer has reviewed this quarterly report on Form 10-Q of {company};",
            "2. Based on the officer's knowledge, this report does not contain any untrue statement",
            "of a material fact or omit to state a material fact necessary to make the statements",
            "made, in light of the circumstances under which such statements were made, not",
            "misleading with respect to the period covered by this report;",
            "3. The registrant's other certifying officers are responsible for establishing and",
            "maintaining disclosure controls and procedures for the registrant and have designed",
            "such controls to ensure that material information is made known to them.",
            f"Date: May {day}, 2023",
            f"/s/ {officer}",
        ]
    )


def test_signed_pages_most_filings_carry_are_templates_and_risk_factors_are_not() -> None:
    """A certification reads the same in every filing, whatever its wrapping: signed and carried
    by five documents or more, it is a template. A company's risk factors repeated in each of
    its own filings are not signed, and a signed agreement says what no other page does."""
    risk = (
        "Our operations could be disrupted by natural disasters, pandemics and other events "
        "beyond our control, and our suppliers are concentrated in a few regions of the world."
    )
    agreement = "\n".join(
        [
            "FIRST AMENDMENT TO THE RETIREMENT PLAN",
            "The plan is amended to raise the employer's matching contribution to six percent of",
            "eligible pay for participants hired after January 1, 2023, and to shorten vesting.",
            "By: /s/ Jane Roe",
        ]
    )
    passages = []
    for doc in range(6):
        passages.append(((doc, 40), _certification(f"Company {doc}", f"Officer {doc}", doc + 1)))
        passages.append(((doc, 12), risk))
    passages.append(((0, 41), agreement))
    assert template_pages(passages) == frozenset((doc, 40) for doc in range(6))
    # three documents: no sentence is anybody's template yet (its shape alone does not say so)
    assert template_pages([p for p in passages if p[0][0] < 3 and p[0][1] == 40]) == frozenset()
