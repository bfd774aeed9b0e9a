"""Which domain a document is comes from its content, per document, through one registry.

* a filing-like text (a cover stating the filer and the period, statement tables as
  self-describing rows) is a filing; a man page and a Markdown guide are generic;
* a file named like a filing but holding a manual's text is generic: names count for nothing;
* a corpus mixing both stores each document's domain in its index, a fetched page carries it,
  only the filing has a filer, and the Answer is composed from the filing's rows alone;
* evidence from generic documents only is composed by the generic domain (its statements);
* the registry imports an implementation on first use, and core modules never do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_local_search import inline

from deepresearch import domains
from deepresearch.domains.protocol import AnswerTask
from deepresearch.llm_messages import SourceText, WriteTask
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.doc_ids import doc_id
from deepresearch.schemas import Finding, ReportSection
from deepresearch.text.tables import TableRow, format_row

STATEMENT = "Condensed consolidated statements of operations"


def _row(label: str, now: str, before: str) -> str:
    cells = (
        ("Three Months Ended June 30, 2031", now),
        ("Three Months Ended June 30, 2030", before),
    )
    return format_row(TableRow(STATEMENT, "in millions", label, cells))


def filing_text() -> str:
    """A generated quarterly report: its cover, then a statement table."""
    cover = (
        "UNITED STATES\nFORM 10-Q\n"
        "QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d)\n"
        "For the quarterly period ended June 30, 2031\n"
        "Commission File Number: 000-00000\n"
        "Quuxcorp Holdings Inc.\n"
        "(Exact name of registrant as specified in its charter)\n\n"
    )
    rows = [
        _row("Total net sales", "4,210", "3,980"),
        _row("Net income", "512", "470"),
    ]
    return cover + "\n".join(rows) + "\n"


MAN_PAGE = """NAME
    frobnicate - rearrange the bits of a file

SYNOPSIS
    frobnicate [-n] [--depth N] FILE

DESCRIPTION
    frobnicate reads FILE and writes its bits in another order.

OPTIONS
    -n  Do nothing; print what would be done.
    --depth N
        How deep to recurse. Default: 3.
"""

MARKDOWN = """# Getting started with Widgetd

Widgetd serves widgets over HTTP.

## Configuration

| setting | default | meaning |
| --- | --- | --- |
| port | 8080 | where it listens |
| workers | 4 | how many requests at once |

Set `port` in `widgetd.toml` to change where it listens.
"""


def test_a_filing_like_text_is_a_filing_and_manuals_are_generic() -> None:
    assert domains.recognize(filing_text()) == "filings"
    assert domains.recognize(MAN_PAGE) == domains.GENERIC
    assert domains.recognize(MARKDOWN) == domains.GENERIC


def test_either_a_cover_or_statement_tables_is_enough() -> None:
    cover, _, tables = filing_text().partition(f"{STATEMENT} ")
    assert domains.recognize(cover) == "filings"
    assert domains.recognize(f"{STATEMENT} {tables}") == "filings"
    assert domains.recognize("Total net sales rose in the quarter.\n" + MAN_PAGE) == "generic"


def _mixed_corpus(root: Path) -> None:
    root.mkdir()
    (root / "guide.md").write_text(MARKDOWN)
    (root / "report.txt").write_text(filing_text())
    # named like a quarterly filing, holding a man page: its name counts for nothing
    (root / "2031 Q2 QUUX 10-Q.txt").write_text(MAN_PAGE)


def test_a_mixed_corpus_stores_each_documents_domain_from_its_content(tmp_path: Path) -> None:
    _mixed_corpus(tmp_path / "corpus")
    index = CorpusIndex.open(
        tmp_path / "corpus", tmp_path / "cache", passage_chars=400, pool_factory=inline([])
    )
    assert index.domains() == {
        "2031 Q2 QUUX 10-Q.txt": "generic",
        "guide.md": "generic",
        "report.txt": "filings",
    }
    (meta,) = (tmp_path / "cache").rglob("meta.json")
    assert json.loads(meta.read_text())["domains"] == ["generic", "generic", "filings"]
    # a fresh load reads the stored domains back
    again = CorpusIndex.load_cached(tmp_path / "corpus", tmp_path / "cache", 400)
    assert again.domains() == index.domains()
    filing = index.page_text("doc:report.txt")
    manual = index.page_text(doc_id("2031 Q2 QUUX 10-Q.txt", 1, "txt"))
    assert (filing.domain, manual.domain) == ("filings", "generic")
    assert filing.source().domain == "filings"
    assert manual.by == ""  # a manual's first line is no filer


def _write_task(query: str, found: list[tuple[str, str, str]]) -> WriteTask:
    """A write task of findings ``(text, url, domain of the url's document)``."""
    urls = list(dict.fromkeys((u, d) for _, u, d in found))
    return WriteTask(
        query=query,
        sections=(
            ReportSection(
                heading=query,
                findings=tuple(Finding(text=t, citations=(u,)) for t, u, _ in found),
            ),
        ),
        sources=tuple(
            SourceText(n=i + 1, url=u, title=u, location=u, text="", domain=d)
            for i, (u, d) in enumerate(urls)
        ),
    )


def test_mixed_evidence_is_composed_by_the_filing_domain_from_the_filings_rows() -> None:
    table = f"{STATEMENT} (in millions): Workers: Default = 4; Maximum = 64"
    found = [
        (_row("Total net sales", "4,210", "3,980"), "doc:report.txt", "filings"),
        (table, "doc:guide.md", "generic"),
        ("Widgetd serves widgets over HTTP.", "doc:guide.md", "generic"),
    ]
    task = _write_task("What were Quuxcorp's total net sales in Q2 2031?", found)
    composed = domains.compose(task)
    assert composed is not None and "4,210" in composed.text, composed
    assert composed.sources == (1,)  # the filing's row only, never the guide's table


def test_evidence_of_generic_documents_is_composed_by_the_generic_domain() -> None:
    found = [(_row("Total net sales", "4,210", "3,980"), "doc:guide.md", "generic")]
    task = _write_task("What were total net sales?", found)
    composed = domains.compose(task)  # its statements, as the whole Answer
    assert composed is not None and composed.whole and "4,210" in composed.text, composed
    by_source = domains.of_sources(task.sources)
    assert domains.of_evidence(domains.answer_task(task).findings, by_source)[0][0] == "generic"
    assert domains.compose_evidence(AnswerTask("What were total net sales?", ()), {}) is None


def test_an_unknown_domain_name_is_the_generic_one() -> None:
    assert domains.domain("no-such-domain") is domains.domain(domains.GENERIC)


def test_the_registry_imports_an_implementation_on_first_use() -> None:
    """Core modules load no implementation; the registry does, when a document asks for it."""
    script = (
        "import sys\n"
        "import deepresearch.providers.llm.extractive, deepresearch.prompts\n"
        "import deepresearch.providers.search.corpus_index\n"
        "from deepresearch import domains\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('deepresearch.domains.'))\n"
        "print(loaded())\n"
        "domains.domain('generic')\n"
        "print(loaded())\n"
        "domains.recognize('Net income rose.')\n"
        "print('deepresearch.domains.filings.domain' in loaded())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "['deepresearch.domains.protocol']",
        "['deepresearch.domains.generic', 'deepresearch.domains.generic.domain', "
        "'deepresearch.domains.protocol']",
        "True",
    ]


def test_a_model_writer_is_handed_the_draft_composed_through_the_same_seam() -> None:
    from deepresearch.prompts import render_task

    row = _row("Total net sales", "4,210", "3,980")
    query = "What were Quuxcorp's total net sales in Q2 2031?"
    filing = _write_task(query, [(row, "doc:report.txt", "filings")])
    composed = domains.compose(filing)
    assert composed is not None
    assert composed.text in render_task(filing, {"type": "object"})[1]
    manual = _write_task(query, [(row, "doc:guide.md", "generic")])
    generic = domains.compose(manual)  # a manual's statements, through the generic domain
    assert generic is not None and generic.text in render_task(manual, {"type": "object"})[1]
