"""A question finds the table row it names, though prose repeats its words more often.

* a row label the query covers matches (with line-item equivalents: "net sales" ~ "Revenue"),
  a label naming something else does not, and structure words ("total") weigh nothing;
* the corpus search returns the page holding the asked-for row, showing that row, though pages of
  prose repeating the question's words outscore it in BM25;
* evidence selection hands on that row before the prose.
"""

from __future__ import annotations

from pathlib import Path

from test_local_search import inline

from deepresearch.domains.filings.compose import compose
from deepresearch.llm_messages import FindingsTask, SourceText
from deepresearch.providers.llm.extractive import answer_findings
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.text.line_items import (
    LabelIndex,
    broken_compounds,
    conjuncts,
    label_core,
    query_terms,
)

_UNIT = "Statements of income (in millions)"


def _row(label: str, value: str) -> str:
    return f"{_UNIT}: {label}: Three Months Ended April 30, 2023 = {value}"


ROWS = [
    _row("Revenue", "7,192"),
    _row("Cost of revenue", "2,544"),
    _row("Operating expenses - Research and development", "1,875"),
    _row("Operating expenses - Sales, general and administrative", "633"),
    _row("Total operating expenses", "2,508"),
    _row("Net income", "2,043"),
    _row("Other income - Interest income", "150"),
    _row("Other income - Total other income", "48"),
]


def test_labels_match_by_what_the_query_covers() -> None:
    index = LabelIndex.build(["\n".join(ROWS)])
    [(_, (score, line))] = index.passage_scores(
        "How has Contoso's total net sales trended?"
    ).items()
    assert line == 0 and score > 0  # "Revenue", through "net sales" ~ "revenue"
    [(_, (_, line))] = index.passage_scores("Contoso research and development in Q1").items()
    assert line == 2  # the nested label's own part names the line item
    assert index.passage_scores("Contoso litigation and legal proceedings") == {}


def test_a_structure_word_alone_is_not_a_match() -> None:
    rows = [*ROWS, *(_row(f"Total {w} assets", "1") for w in ("current", "fixed", "other"))]
    index = LabelIndex.build(["\n".join(rows * 2)])
    assert index.idf["total"] < index.idf["revenu"]  # "total" begins many labels: tells little
    assert index.passage_scores("What was the total?") == {}
    assert index.passage_scores("What were total current assets?") != {}


def test_a_heading_never_makes_a_row_the_asked_one() -> None:
    """A nested label matches only when its own part does: "Cash flows from operating activities
    - Net income" is net income, whatever its heading says."""
    index = LabelIndex.build(
        [
            f"{_UNIT}: Cash flows from operating activities - Net income: 2022 = 1",
            f"{_UNIT}: Net cash provided by operating activities: 2022 = 1",
            *ROWS,
        ]
    )
    assert set(index.passage_scores("What was Contoso's operating cash flow?")) == {1}


def test_a_question_about_operations_finds_the_operating_activities_row() -> None:
    index = LabelIndex.build(
        [f"{_UNIT}: Net cash provided by operating activities: 2022 = 1", "\n".join(ROWS)]
    )
    assert set(index.passage_scores("What cash flows from operations did Contoso disclose?")) == {0}


def test_search_returns_the_page_of_the_asked_for_row(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    prose = (
        "We invest in research and development. Research and development is key to our "
        "research and development roadmap, and research and development costs may rise. "
    )
    pages = [f"CONTOSO CORPORATION\nQuarterly report page {i}\n\n" + prose * 3 for i in range(12)]
    others = [_row(f"{w} assets", "1") for w in ("Current", "Fixed", "Intangible", "Leased")]
    pages.append("CONTOSO CORPORATION\nFinancial statements\n\n" + "\n".join(others * 4 + ROWS))
    for i, text in enumerate(pages):
        (root / f"p{i}.txt").write_text(text)
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    hits = index.search("Contoso research development Q1 2023", 3)
    urls = [h.url for h in hits]
    assert "doc:p12.txt" in urls, urls
    shown = next(h for h in hits if h.url == "doc:p12.txt").snippet
    assert "Research and development" in shown and "1,875" in shown, shown


def test_evidence_leads_with_the_asked_for_row() -> None:
    prose = (
        "Contoso invested in research and development to focus research and development on AI; "
        "research and development areas of focus include research and development of chips."
    )
    sources = (
        SourceText(n=1, url="doc:a.pdf#page=9", title="a", location="a", text=prose),
        SourceText(n=2, url="doc:a.pdf#page=3", title="a", location="a", text="\n".join(ROWS)),
    )
    question = "How much did Contoso allocate to research and development in Q1 2023?"
    draft = answer_findings(FindingsTask(question=question, sources=sources, max_findings=2))
    assert "1,875" in draft.findings[0].text, [f.text for f in draft.findings]


def test_a_table_titled_by_the_question_matches_through_its_title() -> None:
    rows = [
        "Inventories (in millions): Raw materials: Oct 1, 2022 = 1,635",
        "Inventories (in millions): Finished goods: Oct 1, 2022 = 4,166",
        *ROWS,
    ]
    matched = LabelIndex.build(rows).passage_scores("What were Contoso's inventory levels?")
    assert {0, 1} <= set(matched), matched


def _scan(index: LabelIndex, query: str) -> dict[int, tuple[float, int]]:
    """Every label scored in turn: what ``passage_scores`` must equal, however it finds them."""
    wanted = query_terms(query)
    out: dict[int, tuple[float, int]] = {}
    for passage, line, label, core in index.labels:
        if label & wanted and core & wanted:
            s = index.score(label, wanted)
            if s > out.get(passage, (0.0, 0))[0]:
                out[passage] = (s, line)
    return out


def test_scores_equal_a_scan_of_every_label() -> None:
    rows = [*ROWS, *(_row(f"Total {w} assets", "1") for w in ("current", "fixed", "other"))]
    index = LabelIndex.build(["\n".join(rows), "\n".join(reversed(rows)), "\n".join(ROWS[:3])])
    for query in (
        "How has Contoso's total net sales trended?",
        "Contoso research and development in Q1",
        "What were total current assets and other income?",
        "interest income, revenue and cost of revenue",
        "What was the total?",
    ):
        assert index.passage_scores(query) == _scan(index, query)


def test_a_caption_names_its_table_by_what_its_frame_words_leave() -> None:
    """ "The components of inventories were as follows": the table is inventories, though its
    rows are "Raw materials" ... "Total", and "components" and "follows" are only its frame."""
    title = "The components of inventories were as follows (in millions)"
    rows = [
        f"{title}: {label}: September 30, 2023 = {value}"
        for label, value in (("Raw materials", "520"), ("Finished goods", "2,465"))
    ]
    other = [
        f"The components of goodwill were as follows (in millions): {w}: 2023 = 1"
        for w in ("Productivity", "Cloud", "Personal Computing")
    ]
    matched = LabelIndex.build(["\n".join(other), "\n".join(rows), *ROWS]).passage_scores(
        "How did Contoso's inventory levels shift?"
    )
    assert set(matched) == {1}, matched


def test_a_total_row_is_named_by_its_metric_alone_and_a_balance_by_no_level() -> None:
    """ "Total net sales" is all covered by "revenue" (sales): "total" and "net" say where a row
    sits, not what it is, and take nothing from its coverage, so a quarter's statement (whose
    total row is the only sales row) is found as well as a segment table's "Americas - Net
    sales". "inventory levels" asks for a balance: "Level 2 - Subtotal" of a fair-value table
    is not asked for, and neither are the words that frame a question ("reported", "changes")."""
    statement = "\n".join(
        [_row("Net sales - Products", "60,584"), _row("Net sales - Services", "21,213")]
        + [_row("Total net sales", "81,797"), _row("Total cost of sales", "45,384")]
        + [_row(f"Total {w}", "1") for w in ("assets", "liabilities", "net income", "equity")]
    )
    fair_value = "\n".join([_row("Level 2 - Subtotal", "166,540"), _row("Inventories", "5,433")])
    index = LabelIndex.build([statement, fair_value])
    lines = statement.split("\n")
    found = index.passage_scores("What was Contoso's revenue in Q3 2023?")
    assert 0 in found and lines[found[0][1]].startswith(f"{_UNIT}: Total net sales:"), found
    [(passage, (_, line))] = index.passage_scores(
        "What do the inventory levels reported by Contoso suggest about its changes?"
    ).items()
    assert (passage, line) == (1, 1)  # Inventories, not "Level 2 - Subtotal"


OFFERINGS = "Revenue, classified by significant product and service offerings (in millions)"


def _offering(label: str, value: str) -> str:
    return f"{OFFERINGS}: {label}: Three Months Ended September 30, 2023 = {value}"


def test_a_label_joining_two_line_items_is_named_by_either() -> None:
    """ "Server products and cloud services" is the only figure the filing gives for its cloud
    services: a query naming those two words names the row, though half the label is uncovered.
    A compound line item ("Research and development") and a qualifier after a comma ("net of
    tax") join nothing."""
    assert conjuncts("Server products and cloud services") == ["Server products", "cloud services"]
    assert conjuncts("Operating expenses - Research and development") == []
    assert conjuncts("Other comprehensive loss, net of tax") == []
    rows = [
        _offering("Server products and cloud services", "22,308"),
        _offering("Gaming", "5,617"),
        _row("Revenue - Intelligent Cloud", "24,259"),
        _row("Other comprehensive loss, net of tax", "(12)"),
    ]
    index = LabelIndex.build(["\n".join(rows[:2]), "\n".join(rows[2:])])
    scores = index.passage_scores("What was the revenue from Contoso's cloud services?")
    assert scores[0][0] > scores[1][0] and scores[0][1] == 0, scores
    assert index.passage_scores("What was Contoso's effective tax rate?") == {}


def test_the_answer_names_the_row_that_joins_the_asked_line_item() -> None:
    segment = (
        "Segment results of operations (in millions, except percentages): Revenue - Intelligent "
        "Cloud: Three Months Ended September 30, 2023 = 24,259; Three Months Ended September 30, "
        "2022 = 20,325"
    )
    found = [
        (segment, (1,), 0),
        (_offering("Server products and cloud services", "22,308"), (2,), 0),
    ]
    question = "What was the revenue from Contoso's cloud services, including Azure, in the latest quarter?"
    composed = compose(question, found)
    assert composed is not None and "22,308" in composed[0] and "24,259" not in composed[0]


def test_an_other_line_under_a_heading_is_not_the_heading() -> None:
    """ "Cash flows from financing activities - Other" is a residual line: it names none of its
    heading's figures (a total under the heading does: "Operating expenses - Total")."""
    assert label_core("Cash flows from financing activities - Other") == "Other"
    assert label_core("Operating expenses - Total") == "Operating expenses - Total"
    rows = [_row("Cash flows from financing activities - Other", "(1)")]
    index = LabelIndex.build(["\n".join(rows)])
    assert index.passage_scores("What are the key changes in Contoso's cash flows?") == {}


def test_a_word_inside_the_asked_compound_makes_another_line_item() -> None:
    """ "Operating lease cost" holds operating ... cost (~ expenses) with "lease" inside: a
    lease's cost, not the operating expenses. A word around the compound ("Total operating
    expenses") or another order ("Net cash provided by operating activities" for the operating
    cash flow) is still the asked line item."""
    assert broken_compounds("Operating lease cost", ["operating expenses"]) >= {"oper", "cost"}
    assert not broken_compounds("Total operating expenses", ["operating expenses"])
    assert not broken_compounds(
        "Net cash provided by operating activities", ["operating cash flow"]
    )
    assert not broken_compounds("Income before provision for income taxes", ["income taxes"])
    found = [
        (_row("Operating lease cost", "684"), (1,), 0),
        (_row("Total cost of revenue", "17,488"), (2,), 0),
    ]
    composed = compose("What were Contoso's operating expenses in the latest quarter?", found)
    assert composed is not None and "684" not in composed[0] and "17,488" in composed[0], composed
    lease = compose("What was Contoso's operating lease cost in the latest quarter?", found)
    assert lease is not None and "684" in lease[0], lease
