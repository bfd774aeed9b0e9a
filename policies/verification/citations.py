"""Citations are never invented: every ``[n]`` in a report points at a source that was read.

Inside a run, findings cite sources by normalized URL / document id, and so does the answer
(``Report.answer_citations``; prose may also carry URL markers ``[<url>]``). Numbers exist only in
the rendered report: ``resolve`` numbers the read sources by first citation, turns URLs into
``[n]``, drops any citation of a URL that was not read, and strips stray numeric markers a model may
have written (they referred to some other list). A number stands for a document: the pages of a
corpus document (``doc:a.pdf#page=3``, ``#page=5``) share one number and one Sources entry that
lists the pages cited.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from deepresearch.policies.urls import normalize_url
from deepresearch.policies.verification.support import PAGE_LABEL
from deepresearch.schemas import Finding, Report, ResearcherReport, Source

# [1]  [1, 3]  — not escaped (\[1]) and not the text of a link ([1](url)).
NUMERIC_MARKER = re.compile(r"(?<!\\)\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\](?!\()")
# Any bracketed run on one line that is not a link; the content decides what it is.
_BRACKETED = re.compile(r"(?<!\\)\[([^\[\]\n]+)\](?!\()")
_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
_URL_LIKE = re.compile(r"^(?:https?://|doc:)\S", re.IGNORECASE)
_SPACED_NUMERIC = re.compile(r"([ \t]*)" + NUMERIC_MARKER.pattern)


def cite_marker(url: str) -> str:
    """The marker a producer writes into ``Report.answer`` to cite ``url``."""
    return f"[{url}]"


def markers_from_numbers(text: str, urls_by_number: Mapping[int, str]) -> str:
    """Turn a draft's ``[n]`` (a task's source numbers) into URL markers; unknown n are dropped."""

    def swap(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,;]\s*", match.group(2).strip())]
        found = "".join(cite_marker(urls_by_number[n]) for n in numbers if n in urls_by_number)
        return match.group(1) + found if found else ""

    if _unmarked(text):
        return text
    return _outside_code(text, lambda chunk: _SPACED_NUMERIC.sub(swap, chunk))


def _unmarked(text: str) -> bool:
    """No "[" at all, so no marker (most sentences): the scans for markers are skipped."""
    return "[" not in text


def _outside_code(text: str, transform: Callable[[str], str]) -> str:
    """Apply ``transform`` to the text between inline code spans, leaving the spans as they are."""
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(transform(text[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(transform(text[last:]))
    return "".join(out)


class _Lookup:
    """Map a cited spelling to the URL of a read source (exact first, then normalized)."""

    def __init__(self, sources: tuple[Source, ...]) -> None:
        self._exact: dict[str, str] = {}
        self._normalized: dict[str, str] = {}
        for source in sources:
            self._exact.setdefault(source.url, source.url)
            self._normalized.setdefault(normalize_url(source.url), source.url)

    def get(self, cited: str) -> str | None:
        cited = cited.strip()
        return self._exact.get(cited) or self._normalized.get(normalize_url(cited))

    def parse(self, content: str) -> list[str] | None:
        """Source URLs cited by a marker's content, or None when it cites no read source."""
        one_url = self.get(content)
        if one_url is not None:
            return [one_url]
        parts = [p for p in re.split(r"\s*[,;]\s+|\s*[,;]\s*(?=https?://|doc:)", content) if p]
        found = [self.get(p) for p in parts]
        if len(parts) > 1 and all(url is not None for url in found):
            return [url for url in found if url is not None]
        return None


def _marker_urls(text: str, lookup: _Lookup) -> Iterator[str]:
    if _unmarked(text):
        return
    for chunk in _CODE_SPAN.sub("\n", text).split("\n"):
        for match in _BRACKETED.finditer(chunk):
            yield from lookup.parse(match.group(1)) or ()


def document_of(url: str) -> str:
    """The document a source URL is a page of: ``doc:a.pdf#page=3`` -> ``doc:a.pdf``; any other
    URL is its own document (a web page's ``#`` names a place, not a page of a file)."""
    return url.split("#", 1)[0] if url.startswith("doc:") else url


def usable_sources(reports: Sequence[ResearcherReport]) -> list[str]:
    """URLs read and cited by at least one kept finding, once each, in first-seen order: what the
    lifecycle counts against ``run.min_sources`` and the could-not-research report states."""
    return list(dict.fromkeys(u for r in reports for f in r.findings for u in f.citations))


def number_sources(report: Report) -> dict[str, int]:
    """Source URL -> number: by first citation (answer, then sections in order), uncited ones last;
    the pages of one document share its number (``document_of``).

    Every source in ``report.sources`` was read, so every one is numbered.
    """
    lookup = _Lookup(report.sources)
    order: dict[str, int] = {}
    documents: dict[str, int] = {}

    def see(url: str | None) -> None:
        if url is not None and url not in order:
            order[url] = documents.setdefault(document_of(url), len(documents) + 1)

    for cited in report.answer_citations:
        see(lookup.get(cited))
    for url in _marker_urls(report.answer, lookup):
        see(url)
    for section in report.sections:
        for finding in section.findings:
            for cited in finding.citations:
                see(lookup.get(cited))
            for url in _marker_urls(finding.text, lookup):
                see(url)
    for source in report.sources:
        see(source.url)
    return order


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class ResolvedFinding:
    text: str
    numbers: tuple[int, ...]  # sorted, unique; empty means "shown without brackets"


@dataclass(frozen=True)
class ResolvedSection:
    heading: str
    findings: tuple[ResolvedFinding, ...]


@dataclass(frozen=True)
class ResolvedReport:
    numbering: dict[str, int]
    sources: tuple[Source, ...]  # in citation-number order: sources[i] has number i + 1
    answer: str  # markers replaced by [n]
    answer_numbers: tuple[int, ...]  # from ``answer_citations``: shown after the answer
    sections: tuple[ResolvedSection, ...]
    dropped_citations: int  # citations of URLs that were never read
    stripped_markers: int  # numeric [n] written by a producer, meaningless here
    dropped_findings: int


def format_numbers(numbers: tuple[int, ...] | list[int]) -> str:
    return "".join(f"[{n}]" for n in sorted(set(numbers)))


_SPACED_MARKER = re.compile(r"([ \t]*)(" + _BRACKETED.pattern + ")")


class _Rewriter:
    """Rewrites markers in text: known URLs -> numbers, unknown URLs and stray numbers removed.

    With ``inline=False`` known markers are removed too and their numbers collected in ``cited``
    (a finding's citations are shown after its text, not inside it).
    """

    def __init__(self, lookup: _Lookup, numbering: Mapping[str, int]) -> None:
        self.lookup = lookup
        self.numbering = numbering
        self.dropped = 0
        self.stripped = 0
        self.cited: list[int] = []
        self.inline = True

    def _replace(self, marker: str, content: str) -> str:
        urls = self.lookup.parse(content)
        if urls is not None:
            numbers = [self.numbering[u] for u in urls]
            self.cited.extend(numbers)
            return format_numbers(numbers) if self.inline else ""
        if NUMERIC_MARKER.fullmatch(marker):
            self.stripped += 1
            return ""
        parts = re.split(r"\s*[,;]\s*", content.strip())
        if all(_URL_LIKE.match(p) for p in parts):
            self.dropped += len(parts)
            return ""
        return marker  # ordinary bracketed prose such as [sic]

    def _swap(self, match: re.Match[str]) -> str:
        space, marker, content = match.group(1), match.group(2), match.group(3)
        replaced = self._replace(marker, content)
        # A marker that disappears takes its leading space with it: "claim [x]." -> "claim."
        return space + replaced if replaced else ""

    def rewrite(self, text: str, *, inline: bool = True) -> str:
        self.inline = inline
        if _unmarked(text):
            return text
        return _outside_code(text, lambda chunk: _SPACED_MARKER.sub(self._swap, chunk))


def _page_number(locator: str) -> int:
    digits = locator.rsplit(" ", 1)[-1]
    return int(digits) if digits.isdigit() else 0


def merge_pages(pages: list[Source]) -> Source:
    """One Sources entry for the cited pages of a document (the first cited one first in
    ``pages``): its id and title, its location without a page, every cited place in page order.
    The id stays the first cited page's (``doc:a.pdf#page=3``): a page a run read and can
    read again."""
    first = pages[0]
    if len(pages) == 1:
        return first
    places = list(dict.fromkeys(loc for page in pages for loc in page.cited_at))
    places.sort(key=_page_number)
    location = PAGE_LABEL.sub("", first.location)
    return first.model_copy(update={"location": location, "cited_at": tuple(places)})


def _clean_finding(finding: Finding, lookup: _Lookup, rw: _Rewriter) -> ResolvedFinding:
    numbers: list[int] = []
    for cited in finding.citations:
        url = lookup.get(cited)
        if url is None:
            rw.dropped += 1
        else:
            numbers.append(rw.numbering[url])
    rw.cited = []
    text = rw.rewrite(finding.text, inline=False)
    numbers.extend(rw.cited)  # markers written into the text join the citation list
    return ResolvedFinding(text=" ".join(text.split()), numbers=tuple(sorted(set(numbers))))


def resolve(report: Report, *, drop_uncited_findings: bool = False) -> ResolvedReport:
    """Number the sources and rewrite every citation; nothing is cited that was not read."""
    numbering = number_sources(report)
    lookup = _Lookup(report.sources)
    by_url = {s.url: s for s in report.sources}
    pages: dict[int, list[Source]] = {}
    for page in sorted(numbering, key=numbering.__getitem__):  # stable: first cited page first
        pages.setdefault(numbering[page], []).append(by_url[page])
    sources = tuple(merge_pages(pages[n]) for n in sorted(pages))
    rw = _Rewriter(lookup, numbering)
    answer = rw.rewrite(report.answer)
    answer_numbers: list[int] = []
    for cited in report.answer_citations:
        url = lookup.get(cited)
        if url is None:
            rw.dropped += 1
        else:
            answer_numbers.append(numbering[url])
    dropped_findings = 0
    sections: list[ResolvedSection] = []
    for section in report.sections:
        findings: list[ResolvedFinding] = []
        for finding in section.findings:
            resolved = _clean_finding(finding, lookup, rw)
            if drop_uncited_findings and not resolved.numbers:
                dropped_findings += 1
                continue
            if resolved.text:
                findings.append(resolved)
        sections.append(ResolvedSection(heading=section.heading, findings=tuple(findings)))
    return ResolvedReport(
        numbering=numbering,
        sources=sources,
        answer=answer,
        answer_numbers=tuple(sorted(set(answer_numbers))),
        sections=tuple(sections),
        dropped_citations=rw.dropped,
        stripped_markers=rw.stripped,
        dropped_findings=dropped_findings,
    )
