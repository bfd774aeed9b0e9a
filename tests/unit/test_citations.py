"""Citation numbering and resolution: nothing is cited that was not read."""

from __future__ import annotations

import pytest
from report_checks import find_unresolved

from deepresearch.policies.verification.citations import (
    cite_marker,
    markers_from_numbers,
    number_sources,
    resolve,
)
from deepresearch.schemas import Finding, Report, ReportSection, Source, Usage

A = "https://a.example/page"
B = "doc:b.pdf#page=2"
C = "https://c.example/"
D = "doc:2023 Q3 AAPL.pdf#page=4"  # a document id with spaces


def _src(url: str) -> Source:
    return Source(url=url, title=url.upper(), location=url)


def _report(
    *sections: tuple[str, tuple[Finding, ...]],
    sources: tuple[str, ...] = (A, B, C),
    answer: str = "The answer.",
    answer_citations: tuple[str, ...] = (),
) -> Report:
    return Report(
        query="q",
        title="t",
        answer=answer,
        answer_citations=answer_citations,
        sections=tuple(ReportSection(heading=h, findings=f) for h, f in sections),
        sources=tuple(_src(u) for u in sources),
    )


def test_numbering_follows_first_citation_uncited_last() -> None:
    report = _report(
        ("s1", (Finding(text="x", citations=(C,)), Finding(text="y", citations=(A, C)))),
    )
    assert number_sources(report) == {C: 1, A: 2, B: 3}


def test_answer_citations_come_first() -> None:
    report = _report(("s1", (Finding(text="x", citations=(C,)),)), answer_citations=(B,))
    assert number_sources(report) == {B: 1, C: 2, A: 3}


def test_numbering_matches_normalized_spellings() -> None:
    report = _report(("s", (Finding(text="x", citations=("HTTPS://C.example:443/#top",)),)))
    assert number_sources(report)[C] == 1


def test_resolve_drops_citations_that_were_not_read() -> None:
    report = _report(
        ("s", (Finding(text="x", citations=(A, "https://invented.example/")),)),
        answer_citations=("https://also-invented.example/",),
    )
    resolved = resolve(report)
    assert resolved.dropped_citations == 2
    assert resolved.sections[0].findings[0].numbers == (1,)
    assert resolved.answer_numbers == ()
    assert [s.url for s in resolved.sources] == [A, B, C]


def test_uncited_findings_kept_without_numbers_by_default() -> None:
    report = _report(("s", (Finding(text="orphan", citations=("https://nowhere.example",)),)))
    kept = resolve(report)
    assert kept.sections[0].findings[0].numbers == ()
    assert kept.sections[0].findings[0].text == "orphan"
    dropped = resolve(report, drop_uncited_findings=True)
    assert dropped.sections[0].findings == ()
    assert dropped.dropped_findings == 1


def test_answer_url_markers_become_numbers() -> None:
    answer = f"Revenue rose {cite_marker(C)} and margins fell {cite_marker(A)}{cite_marker(D)}."
    report = _report(answer=answer, sources=(A, C, D))
    resolved = resolve(report)
    assert resolved.answer == "Revenue rose [1] and margins fell [2][3]."
    assert resolved.numbering == {C: 1, A: 2, D: 3}


def test_unknown_url_markers_and_stray_numbers_are_removed() -> None:
    answer = "One [https://invented.example/x]. Two [7]. Keep [sic] and `a[0]`."
    resolved = resolve(_report(answer=answer))
    assert resolved.answer == "One. Two. Keep [sic] and `a[0]`."
    assert resolved.dropped_citations == 1
    assert resolved.stripped_markers == 1


def test_markers_in_finding_text_move_to_its_citations() -> None:
    finding = Finding(text=f"Claim {cite_marker(B)} here [3].", citations=(A,))
    resolved = resolve(_report(("s", (finding,))))
    item = resolved.sections[0].findings[0]
    assert item.text == "Claim here."
    assert item.numbers == (1, 2)


def test_markers_from_numbers() -> None:
    text = "Up [1], down [2, 3] and [9] and `[1]`."
    got = markers_from_numbers(text, {1: A, 2: B, 3: C})
    assert got == f"Up [{A}], down [{B}][{C}] and and `[1]`."


# --------------------------------------------------------------------------- find_unresolved


def test_find_unresolved_accepts_a_good_report() -> None:
    md = "# T\n\nA [1] and [1, 2] and [2][1].\n\n## Sources\n\n1. a\n2. b\n"
    assert find_unresolved(md, 2) == []


def test_find_unresolved_catches_a_broken_report() -> None:
    md = "# T\n\nA [1] and [3] and [2, 5][0].\n\n## Sources\n\n1. a\n2. b\n"
    assert find_unresolved(md, 2) == [3, 5, 0]


@pytest.mark.parametrize(
    "body",
    [
        "see [4](https://x.example) here",  # a link, not a citation
        "code `x[4]` here",
        "```\narr[4]\n```",
        "escaped \\[4] here",
    ],
)
def test_find_unresolved_ignores_links_code_and_escapes(body: str) -> None:
    assert find_unresolved(f"# T\n\n{body}\n\n## Sources\n\n1. a\n", 1) == []


def test_find_unresolved_ignores_text_below_sources() -> None:
    md = "# T\n\nfine [1]\n\n## Sources\n\n1. a [9]\n\n---\n\n- footer [8]\n"
    assert find_unresolved(md, 1) == []


def test_find_unresolved_without_sources_heading_checks_everything() -> None:
    assert find_unresolved("text [1]", 0) == [1]


def test_a_document_cited_on_many_pages_is_one_source_listing_its_pages() -> None:
    """A PDF cited on pages 9, 3 and 5 is one entry, "pages 3, 5, 9", one number for all its
    pages; every [n] the report shows resolves to an entry."""
    from deepresearch.reports.markdown import Footer, render

    def page(n: int) -> Source:
        return Source(
            url=f"doc:find.pdf#page={n}",
            title="find.pdf",
            location=f"find.pdf, p. {n}",
            cited_at=(f"p. {n}",),
        )

    pages = {n: page(n) for n in (9, 3, 5)}
    report = Report(
        query="q",
        title="t",
        answer=f"Prune it {cite_marker(pages[9].url)}.",
        sections=(
            ReportSection(
                heading="s",
                findings=(
                    Finding(text="Walks a tree.", citations=(pages[3].url, A)),
                    Finding(text="Stops at depth.", citations=(pages[5].url,)),
                ),
            ),
        ),
        sources=(*pages.values(), _src(A)),
    )
    resolved = resolve(report)
    assert resolved.numbering == {pages[9].url: 1, pages[3].url: 1, A: 2, pages[5].url: 1}
    assert [s.url for s in resolved.sources] == [pages[9].url, A]
    assert resolved.sources[0].cited_at == ("p. 3", "p. 5", "p. 9")
    assert resolved.sources[0].location == "find.pdf"
    assert [f.numbers for f in resolved.sections[0].findings] == [(1, 2), (1,)]
    footer = Footer(saved_path="r.md", run_id="r", mode="quick", providers={}, usage=Usage())
    text = render(report, footer, resolved)
    sources = text.split("## Sources", 1)[1].split("\n---\n", 1)[0].strip().splitlines()
    assert sources[0] == "1. find.pdf — cited: pages 3, 5, 9"
    assert len(sources) == 2
    assert find_unresolved(text, len(sources)) == []
