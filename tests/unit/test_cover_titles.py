"""A corpus document says who it is by on its cover; quoted rows of two companies' filings are
told apart by it (a file's name, "2023 Q3 ACME.txt", names no company).

* the cover's name line is the first short line of capitalized words holding a name that tells
  the covers apart and that the corpus's text uses mostly in that document ("ZETA CORPORATION",
  not a capitalized "For the Period Ended" only one filer prints but every filing's text uses);
* a running head on every page ("Table of Contents") is no name, nor is anything of a lone
  document or of covers alike;
* a fetched page carries its document's ``by``; the writer's sources show it, and a quick-mode
  comparison of two companies gives one line per company.
"""

from __future__ import annotations

from pathlib import Path

from test_local_search import inline, write_pdf

from deepresearch.domains.filings.compose import compose
from deepresearch.policies.search.ranking import cover_names, cover_title
from deepresearch.policies.synthesis.synthesis import write_task
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.reports.export import source_record
from deepresearch.reports.markdown import source_view
from deepresearch.schemas import Finding, ResearcherReport, Source

COVERS = {
    "acme.txt": "QUARTERLY REPORT\nCommission file 001-1\nAcme Inc.\nOne Acme Way, Springfield\n",
    "zeta.txt": "QUARTERLY REPORT\nFor the Period Ended June 30\nZETA CORPORATION\nZeta Plaza\n",
    "omega.txt": "Table of Contents\nQUARTERLY REPORT\nOMEGA HOLDINGS, INC.\nOmega Park\n",
}


def _share(text: str) -> float:
    return 0.1 if text in {"period", "ended", "table", "contents"} else 0.9


def test_the_name_line_is_the_first_whose_name_the_documents_text_keeps() -> None:
    covers = [cover_names(c) for c in COVERS.values()]
    never = lambda line: False  # noqa: E731
    titles = [cover_title(c, covers, never, _share) for c in COVERS.values()]
    assert titles == ["Acme Inc.", "ZETA CORPORATION", "OMEGA HOLDINGS, INC."]


def test_a_running_head_a_lone_document_and_covers_alike_name_nobody() -> None:
    covers = [cover_names(c) for c in COVERS.values()]
    omega = COVERS["omega.txt"].replace("OMEGA HOLDINGS, INC.\n", "")
    heads = lambda line: line == "Table of Contents"  # noqa: E731
    assert cover_title(omega, covers, heads, lambda t: 0.9) == "Omega Park"
    assert cover_title(omega, covers, lambda line: True, lambda t: 0.9) == ""
    lone = [cover_names(COVERS["acme.txt"])]
    assert cover_title(COVERS["acme.txt"], lone, heads, lambda t: 0.9) == ""
    alike = [cover_names(COVERS["acme.txt"])] * 3
    assert cover_title(COVERS["acme.txt"], alike, heads, lambda t: 0.9) == ""


def _filing(name: str, value: str, head: str) -> list[list[str]]:
    """A filing's pages (lines), each headed by ``head`` when one is given."""
    pages = [
        ["QUARTERLY REPORT", name, "For the quarter ended June 30, 2023"],
        ["The Company's products sold well in every region this quarter."],
        ["Statements of operations (in millions): Net income = " + value],
    ]
    return [[head, *lines] if head else lines for lines in pages]


def test_a_fetched_page_says_who_its_document_is_by(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    # only Acme's filing heads its pages "Table of Contents": a name no other cover has
    write_pdf(root / "q2a.pdf", _filing("ACME INC.", "1,234", "Table of Contents"))
    write_pdf(root / "q2z.pdf", _filing("ZETA CORPORATION", "5,678", ""))
    write_pdf(root / "notes.pdf", [["Meeting notes", "Nothing about anyone."]])
    index = CorpusIndex.open(root, tmp_path / "cache", passage_chars=400, pool_factory=inline([]))
    assert index.page_text("doc:q2a.pdf#page=3").by == "ACME INC."
    assert index.page_text("doc:q2z.pdf#page=1").by == "ZETA CORPORATION"
    assert index.page_text("doc:notes.pdf#page=1").by == ""
    page = index.page_text("doc:q2a.pdf#page=3")
    assert page.title == "q2a.pdf" and page.source().by == "ACME INC."
    assert page.source().label == "q2a.pdf (ACME INC.)"
    view = source_view(page.source())  # the Sources list says whose filing it is
    assert view.title == "q2a.pdf (ACME INC.)", view
    assert source_record(1, page.source())["by"] == "ACME INC."


def test_a_quick_comparison_gives_each_company_its_line() -> None:
    row = (
        "Statements of operations (in millions): Net income: Three Months Ended June 30, 2023 = {}"
    )
    docs = [("doc:a.txt", "ACME INC.", "1,234"), ("doc:z.txt", "ZETA CORPORATION", "5,678")]
    reports = [
        ResearcherReport(
            subtask_id="t1",
            question="Compare Acme and Zeta net income for Q2 2023",
            findings=tuple(Finding(text=row.format(v), citations=(u,)) for u, _, v in docs),
            sources=tuple(Source(url=u, title=u[4:], location="", by=by) for u, by, _ in docs),
        )
    ]
    task = write_task("Compare Acme and Zeta net income for Q2 2023", reports)
    assert [s.title for s in task.sources] == ["a.txt (ACME INC.)", "z.txt (ZETA CORPORATION)"]
    findings = [(f.text, (i + 1,), 0) for i, f in enumerate(reports[0].findings)]
    titles = {s.n: s.title for s in task.sources}
    composed = compose(task.query, findings, (), titles)
    assert composed is not None
    lines = composed[0].split("\n\n")
    assert lines[0].startswith("Acme: Net income") and "1,234" in lines[0], lines
    assert lines[1].startswith("Zeta: Net income") and "5,678" in lines[1], lines
    # without who the files are by, the rows cannot be told apart: one line for both
    bare = compose(task.query, findings, (), {1: "a.txt", 2: "z.txt"})
    assert bare is not None and len(bare[0].split("\n\n")) == 1, bare
