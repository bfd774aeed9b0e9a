"""JSON and HTML exports: the same citation numbers as the Markdown, escaped, self-contained."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

from deepresearch.policies.verification.citations import cite_marker, format_numbers
from deepresearch.reports.export import render_as, render_html, render_json
from deepresearch.reports.markdown import Footer, render, source_view
from deepresearch.schemas import Finding, Report, ReportSection, Source, Usage
from deepresearch.storage.report_path import report_name

A = "https://news.example/apple?a=1&b=2"
B = "doc:2023 Q3 AAPL.pdf#page=4"
C = "https://unused.example/"
EVIL = "javascript:alert(1)"

SOURCES = (
    Source(url=C, title="", location=C),
    Source(url=A, title='Apple "results" & <more>', location=A),
    Source(url=B, title="2023 Q3 AAPL.pdf", location="2023 Q3 AAPL.pdf, p. 4"),
    Source(url=EVIL, title="Evil", location="evil"),
)
REPORT = Report(
    query="What was Apple's revenue?",
    title="Apple <revenue>",
    answer=f"Net sales were $81.8 billion {cite_marker(A)}.\n\nServices grew <script>x</script>.",
    answer_citations=(B,),
    sections=(
        ReportSection(
            heading="Revenue",
            findings=(
                Finding(text="Total net sales were $81,797 million.", citations=(B, A)),
                Finding(text="Invented source.", citations=("https://invented.example/",)),
                Finding(text="<img src=x onerror=alert(1)> risky text", citations=(EVIL,)),
            ),
        ),
        ReportSection(heading="Margins & <costs>", findings=()),
    ),
    sources=SOURCES,
    notes=("Written without a language model.",),
    limits=("Search was limited.",),
)
FOOTER = Footer(
    saved_path="/home/ann/research/r.json",
    run_id="20261122-191500-ab12cd",
    mode="quick",
    providers={"writer": "extractive"},
    usage=Usage(llm_calls=2, fetches=3),
    duration_s=1.5,
)


def test_json_is_versioned_and_numbers_match_the_markdown() -> None:
    doc = json.loads(render_json(REPORT, FOOTER))
    md = render(REPORT, FOOTER)
    assert doc["format"] == "deep-research-report" and doc["version"] == 1
    assert doc["status"] == "completed" and doc["query"] == REPORT.query
    titles = {s["n"]: s for s in doc["sources"]}
    assert [s["n"] for s in doc["sources"]] == [1, 2, 3, 4]
    assert titles[1]["url"] == B and titles[2]["url"] == A  # numbered by first citation
    listed = dict(re.findall(r"^(\d+)\. (.*)$", md.split("## Sources")[1], re.M))
    page = render_html(REPORT, FOOTER)
    for n, source in titles.items():  # the Markdown and the page use the same numbers
        view = source_view(Source.model_validate({k: v for k, v in source.items() if k != "n"}))
        assert listed[str(n)].lstrip("<").startswith(view.title)
        item = re.search(rf'<li id="source-{n}">(.*?)</li>', page)
        assert item and html.escape(view.title, quote=True) in item.group(1)
    assert listed["1"] == "2023 Q3 AAPL.pdf, p. 4" and "AAPL.pdf — " not in md
    claims = doc["sections"][0]["claims"]
    assert claims[0] == {"text": "Total net sales were $81,797 million.", "citations": [1, 2]}
    assert claims[1]["citations"] == []  # an unread source is never cited
    for claim in claims:
        tail = f"{claim['text'][-12:]} {format_numbers(claim['citations'])}".rstrip()
        assert re.search(rf"^- .*{re.escape(tail)}$", md, re.M)  # same numbers, same line
    assert "billion [2]." in doc["answer"] and doc["answer_citations"] == [1]
    assert "billion [2]." in md
    assert len(doc["sections"]) == 1  # a section without claims is left out, as in the Markdown
    assert doc["limits"] == ["Search was limited."]
    assert doc["run"]["run_id"] == FOOTER.run_id and doc["run"]["usage"]["fetches"] == 3
    assert "run_id" not in {k for k in doc if k != "run"}


def test_json_content_is_stable_across_runs() -> None:
    other = Footer(saved_path="/x.json", run_id="other", mode="quick", duration_s=9.0)
    first = json.loads(render_json(REPORT, FOOTER))
    second = json.loads(render_json(REPORT, other))
    first.pop("run")
    second.pop("run")
    assert first == second


class _Checker(HTMLParser):
    VOID = frozenset({"meta", "br", "img", "link", "hr", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a":
            self.links.append(str(values.get("href")))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def test_html_is_standalone_escaped_and_its_anchors_resolve() -> None:
    page = render_html(REPORT, FOOTER)
    checker = _Checker()
    checker.feed(page)
    assert checker.errors == [] and checker.stack == []
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert checker.tags.isdisjoint({"script", "img", "link", "iframe"})  # nothing executable
    assert "&lt;script&gt;" in page and "&lt;img src=x" in page
    assert "Apple &lt;revenue&gt;" in page and "&quot;results&quot; &amp; &lt;more&gt;" in page
    footnotes = [h for h in checker.links if h.startswith("#")]
    assert footnotes and all(h[1:] in checker.ids for h in footnotes)
    assert {"source-1", "source-2", "source-3", "source-4"} <= checker.ids
    assert "https://news.example/apple?a=1&amp;b=2" in page  # a real link, escaped
    assert EVIL not in checker.links  # only http(s) URLs become links
    total = re.search(r"Total net sales were \$81,797 million\.(.*?)</li>", page)
    assert total and re.findall(r'href="#source-(\d)"', total.group(1)) == ["1", "2"]


def test_formats_and_names() -> None:
    assert render_as("md", REPORT, FOOTER) == render(REPORT, FOOTER)
    assert render_as("json", REPORT, FOOTER).startswith("{")
    assert render_as("html", REPORT, FOOTER).startswith("<!DOCTYPE html>")
    assert report_name("Apple revenue?", "r1", "html").endswith(".html")
    assert report_name("Apple revenue?", "r1") == report_name("Apple revenue?", "r1", "md")
    assert report_name("Apple revenue?", "r1").endswith(".md")


def test_no_answer_page_says_so() -> None:
    empty = Report(
        query="q", title="q", answer="", sections=(), sources=(), status="no_answer", notes=("x",)
    )
    page = render_html(empty, FOOTER)
    assert "This run found no answer" in page and "No source is cited" in page
    assert json.loads(render_json(empty, FOOTER))["status"] == "no_answer"


def test_exports_carry_cited_passages_and_the_verifier_counts() -> None:
    from deepresearch.schemas import Verification

    frag = "https://news.example/apple#:~:text=Net%20sales"
    sources = (
        Source(url=A, title="News", location=A, cited_at=(frag,)),
        Source(url=B, title="10-Q", location="2023 Q3 AAPL.pdf, p. 4", cited_at=("p. 4",)),
    )
    report = REPORT.model_copy(
        update={
            "sources": sources,
            "verification": Verification(claims=3, cited=3, verified=2, rewritten=1, dropped=0),
        }
    )
    doc = json.loads(render_json(report, FOOTER))
    cited = {s["url"]: s["cited_at"] for s in doc["sources"]}
    assert cited == {B: ["p. 4"], A: [frag]}
    assert doc["verification"]["verified"] == 2 and doc["verification"]["rewritten"] == 1
    page = render_html(report, FOOTER)
    assert "cited: p. 4" in page and 'href="https://news.example/apple#:~:text=Net%20sales"' in page
    assert "Claims: 3 · cited: 3 · verified: 2 · rewritten: 1 · dropped: 0" in page


def test_html_renders_the_answers_table_lists_and_code_as_such() -> None:
    table = (
        f"| Quarter | Total net sales |\n| --- | ---: |\n| Q2 2023 | 94,836 {cite_marker(B)}\n"
        f"| Q3 2023 | 81,797 {cite_marker(A)}\n\n    <b>indented code</b>\n\nNotes:\n\n"
        "- one\n  - nested\n"
    )
    report = REPORT.model_copy(update={"answer": table, "answer_citations": ()})
    page = render_html(report, FOOTER)
    checker = _Checker()
    checker.feed(page)
    assert checker.errors == [] and checker.stack == []
    assert {"table", "thead", "tbody", "th", "td", "pre"} <= checker.tags
    row = re.search(r"<tr>\s*<td>Q3 2023</td>\s*<td class=\"align-right\">81,797 (.*?)</td>", page)
    assert row and re.findall(r'href="#source-(\d)"', row.group(1)) == ["2"]
    assert "| Q2 2023 |" not in page  # no raw pipes
    assert "<pre><code>&lt;b&gt;indented code&lt;/b&gt;" in page
    assert re.search(r"<li>one\s*<ul>\s*<li>nested</li>", page)


def test_every_format_and_the_summary_use_the_citations_they_are_given() -> None:
    """Citations are resolved once per report and passed on: a renderer given them never
    resolves again, so every format and the run's summary show the same numbers by construction."""
    import dataclasses

    from deepresearch.policies.verification.citations import resolve
    from deepresearch.reports.markdown import source_entries

    given = resolve(REPORT)
    swapped = dataclasses.replace(given, sources=given.sources[::-1])  # what resolve never says
    first, last = swapped.sources[0].title, swapped.sources[-1].title
    md = render_as("md", REPORT, FOOTER, swapped)
    assert md.index(html.escape(first, quote=False)[:8]) < md.index(last[:8])
    record = json.loads(render_as("json", REPORT, FOOTER, swapped))
    assert [s["title"] for s in record["sources"]] == [s.title for s in swapped.sources]
    page = render_as("html", REPORT, FOOTER, swapped)
    assert page.index(html.escape(first)[:8]) < page.index(html.escape(last)[:8])
    assert [e.title for e in source_entries(REPORT, swapped)] == [s.title for s in swapped.sources]
