"""A formatted table row downstream of extraction: the extractive writer keeps it as one unit, the
verifier accepts a claim quoting it, and the local search finds it and cites its page."""

from __future__ import annotations

from pathlib import Path

from pdf_layout import write_positioned_pdf
from test_local_search import inline
from test_pdf_tables import statement_page

from deepresearch.policies.verification.support import best_passage, support
from deepresearch.providers.documents.extract import extract_bytes
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.text.figures import missing_figures
from deepresearch.text.grid_tables import rows_from_pipes
from deepresearch.text.sentences import build_units
from deepresearch.text.tables import TableRow, format_row

ROW = format_row(
    TableRow(
        "Condensed consolidated statements of operations",
        "in millions",
        "Total net sales",
        (
            ("Three Months Ended July 1, 2023", "81,797"),
            ("Three Months Ended June 25, 2022", "82,959"),
            ("Nine Months Ended July 1, 2023", "293,787"),
        ),
    )
)
PAGE = f"Apple Inc.\nNet sales by category were as follows.\n{ROW}\nSee accompanying notes."


def test_a_formatted_row_is_one_table_unit_of_the_extractive_writer() -> None:
    units = build_units([(1, PAGE)])
    rows = [u for u in units if "81,797" in u.text]
    assert len(rows) == 1
    assert rows[0].text == ROW and rows[0].table


def test_the_verifier_accepts_a_claim_quoting_a_row_at_the_same_scale() -> None:
    claim = "Total net sales for the three months ended July 1, 2023 were $81,797 million."
    assert missing_figures(claim, ROW) == []
    assert support(claim, ROW).passes(0.5)
    assert missing_figures("Total net sales were $81.8 billion.", ROW) == []
    assert missing_figures("Total net sales were $85,000 million.", ROW) == ["85,000 million"]
    assert best_passage(claim, PAGE) == ROW


def test_search_finds_the_row_with_its_headers_and_cites_its_page(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    cover = [(50.0, 740.0, "Example Corp quarterly report for the quarter ended July 1, 2023")]
    write_positioned_pdf(corpus / "2023 Q3 EXMP.pdf", [cover, statement_page()])
    index = CorpusIndex.open(
        corpus, tmp_path / "cache", passage_chars=1000, pool_factory=inline([]), on_warning=None
    )
    hits = index.search("total net sales three months ended July 1, 2023", 3)
    assert hits[0].url == "doc:2023 Q3 EXMP.pdf#page=2"
    assert hits[0].location == "2023 Q3 EXMP.pdf, p. 2"
    assert "Total net sales: Three Months Ended July 1, 2023 = 81,797" in hits[0].snippet
    page = index.page_text("doc:2023 Q3 EXMP.pdf#page=2").text
    assert "Total net sales: Three Months Ended July 1, 2023 = 81,797;" in page


def test_html_tables_become_rows_with_caption_unit_and_headers() -> None:
    prose = "<p>" + "The company reported its results for the quarter in detail. " * 4 + "</p>"
    html = (
        "<html><body><article><h1>Results</h1>" + prose + "<table>"
        "<caption>Revenue by segment (in millions)</caption>"
        "<tr><th>Segment</th><th>2023</th><th>2022</th></tr>"
        "<tr><td>Cloud</td><td>1,200</td><td>1,000</td></tr>"
        "<tr><td>Devices</td><td>300</td><td>(45)</td></tr></table>"
        + prose
        + "</article></body></html>"
    )
    text = extract_bytes(html.encode(), "html", "results.html").pages[0]
    assert "Revenue by segment (in millions): Cloud: 2023 = 1,200; 2022 = 1,000" in text.split("\n")
    assert "Revenue by segment (in millions): Devices: 2023 = 300; 2022 = (45)" in text.split("\n")
    assert "|" not in text


def test_pipe_rows_take_the_heading_above_as_title() -> None:
    text = "## Staff\n\n| Name | Role | Since |\n| --- | --- | --- |\n| Ada | glaciologist | 2019 |"
    assert rows_from_pipes(text) == "## Staff\n\nStaff: Ada: Role = glaciologist; Since = 2019"
