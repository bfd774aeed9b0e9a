"""Render a ``schemas.Report`` to the Markdown file a user reads.

Everything that differs between two runs of the same question (run id, paths, timings, usage) is
written only below the final ``---`` line, so the body is byte-identical for identical inputs and a
resumed run can be compared with an uninterrupted one. Citation numbers come from
``policies.citations``; nothing is cited that was not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from deepresearch.policies.verification.citations import ResolvedReport, format_numbers, resolve
from deepresearch.schemas import Report, Source, SourceEntry, Usage, Verification
from deepresearch.text.terminal import printable

FOOTER_RULE = "\n---\n"
NO_ANSWER_LEAD = "This run found no answer to the question."
# Headings, fences, quotes, HTML, thematic breaks and setext underlines ("===", "--").
_BREAKING_LINE = re.compile(r"^(\s{0,3})(#|```|~~~|>|<|[-=]+\s*$|(?:[-*_]\s*){3,}$)")


@dataclass(frozen=True)
class Footer:
    """The per-run facts shown under the rule; never part of the comparable body."""

    saved_path: str
    run_id: str
    mode: str
    providers: Mapping[str, str] = field(default_factory=dict)  # role -> provider
    usage: Usage = field(default_factory=Usage)
    duration_s: float = 0.0  # wall time since the run was asked for (Ray start-up included)
    notes: tuple[str, ...] = ()
    research_s: float = 0.0  # the actors' work alone, from the coordinator's start to its result


def _neutralize_line(line: str) -> str:
    """Escape a line that would otherwise open a heading, rule, fence, quote or HTML block."""
    match = _BREAKING_LINE.match(line)
    if match:
        indent = match.group(1)
        return indent + "\\" + line[len(indent) :]
    return line


def neutralize_block(text: str) -> str:
    """Multi-line prose (the answer) that cannot break the report's structure."""
    text = printable(text, keep_lines=True)
    lines = [_neutralize_line(line.rstrip()) for line in text.strip().splitlines()]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def inline(text: str) -> str:
    """One line of text for a list item or heading: whitespace collapsed, brackets made literal,
    no control characters (a title with ESC or NUL must not drive the terminal that shows it)."""
    flat = " ".join(printable(text).split())
    flat = re.sub(r"(?<!\\)\[", r"\\[", flat)
    flat = re.sub(r"(?<!\\)\]", r"\\]", flat)
    return flat


def _inline_finding(text: str) -> str:
    # Finding text keeps its own brackets ([sic]) but must stay on one list line and not start a
    # structure of its own ("1. " at the start would renumber nothing, but "#" or "---" would).
    flat = " ".join(printable(text).split())
    return _neutralize_line(flat)


def _title(report: Report) -> str:
    title = inline(report.title) or inline(report.query) or "Research report"
    return title.lstrip("#").strip() or "Research report"


def _notes_block(notes: tuple[str, ...]) -> str:
    lines = [inline(n) for n in notes if n.strip()]
    return "\n>\n".join(f"> {line}" for line in lines)


def _answer_block(report: Report, resolved: ResolvedReport) -> str:
    answer = neutralize_block(resolved.answer)
    extra = [n for n in resolved.answer_numbers if f"[{n}]" not in answer]  # not cited inline
    if answer and extra:
        answer += " " + format_numbers(extra)
    if report.status != "no_answer":
        return answer or "_The sources that were read did not support an answer._"
    parts = [f"**{NO_ANSWER_LEAD}**"]
    if answer:  # the producer's explanation of what failed
        parts.append(answer)
    else:
        reasons = " ".join(inline(n) for n in report.notes if n.strip())
        parts.append(f"Why: {reasons or 'no reason was recorded.'}")
    return "\n\n".join(parts)


def _findings_blocks(resolved: ResolvedReport) -> list[str]:
    sections = [s for s in resolved.sections if s.findings]
    blocks: list[str] = []
    for section in sections:
        heading = "Findings" if len(sections) == 1 else (inline(section.heading) or "Findings")
        items = []
        for finding in section.findings:
            cites = format_numbers(finding.numbers)
            text = _inline_finding(finding.text)
            items.append(f"- {text} {cites}" if cites else f"- {text}")
        blocks.append(f"## {heading}\n\n" + "\n".join(items))
    return blocks


def _code(text: str) -> str:
    return "`" + printable(text).replace("`", "%60") + "`"


@dataclass(frozen=True)
class SourceView:
    """A numbered source as a reader sees it, each fact said once: a corpus page's location
    ("a.pdf, p. 10") and id ("doc:a.pdf#page=10") repeat its title, and the cited places repeat
    its page. Shared by the Markdown and HTML reports so both say the same."""

    title: str  # what it is: its title, else its path or address
    place: str  # where in it, when neither the title nor a cited place says so ("p. 4")
    link: str  # a web address, or an id that names more than the title and place
    cited_at: tuple[str, ...]


def _flat(text: str) -> str:
    return " ".join(text.split())


def is_web(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def source_view(source: Source) -> SourceView:
    title, location, url = _flat(source.label), _flat(source.location), source.url.strip()
    parts = [] if location in (url, title) else location.split(", ")
    if parts and not title:
        title = parts.pop(0)
    elif parts and (title.startswith(parts[0]) or parts[0].endswith("/" + title)):
        head = parts.pop(0)
        title = head if len(head) > len(title) else title  # a path says more than a file name
    place = ", ".join(p for p in parts if p and p not in source.cited_at)
    if not title:
        title = url
    link = "" if url == title else url
    if link and not is_web(link):  # an id ("doc:a.pdf#page=4"): shown only if it adds a name
        path = link.split(":", 1)[-1].split("#", 1)[0]
        link = "" if path in title or path in location else link
    return SourceView(title, place, link, _pages_once(source.cited_at))


_PAGE_PLACE = re.compile(r"(p\.|slide|sheet|section) (\d+)")
_PLURAL = {"p.": "pages", "slide": "slides", "sheet": "sheets", "section": "sections"}


def _pages_once(cited_at: tuple[str, ...]) -> tuple[str, ...]:
    """Several cited pages of one document said once: ("p. 3", "p. 5") -> ("pages 3, 5",)."""
    found = [_PAGE_PLACE.fullmatch(place) for place in cited_at]
    kinds = {m.group(1) for m in found if m is not None}
    if len(cited_at) < 2 or len(kinds) != 1 or None in found:
        return cited_at
    numbers = ", ".join(m.group(2) for m in found if m is not None)
    return (f"{_PLURAL[kinds.pop()]} {numbers}",)


def _link(url: str) -> str:
    """A web address as a Markdown autolink; anything else (an id) as code."""
    if not is_web(url):
        return _code(url)
    for char, code in ((" ", "%20"), ("<", "%3C"), (">", "%3E")):
        url = url.replace(char, code)
    return f"<{url}>"


def _source_line(n: int, source: Source) -> str:
    view = source_view(source)
    title = _link(view.title) if view.title == source.url.strip() else inline(view.title)
    line = f"{n}. {title}"
    if view.place:
        line += f", {inline(view.place)}"
    if view.link:
        line += f" — {_link(view.link)}"
    if view.cited_at:
        line += " — cited: " + ", ".join(_cited_at(loc, i) for i, loc in enumerate(view.cited_at))
    return line


def _cited_at(locator: str, i: int) -> str:
    """A page label as text; a text-fragment URL as a link that highlights the passage."""
    if not locator.startswith(("http://", "https://")):
        return inline(locator)
    target = locator.replace(" ", "%20")
    if any(c in target for c in "()<>"):
        target = target.replace("(", "%28").replace(")", "%29").replace("<", "%3C")
        target = target.replace(">", "%3E")
    return f"[passage {i + 1}]({target})"


def _sources_block(resolved: ResolvedReport) -> str:
    if not resolved.sources:
        return "## Sources\n\n_No source is cited: none that was read supported an answer._"
    lines = [_source_line(i, s) for i, s in enumerate(resolved.sources, start=1)]
    return "## Sources\n\n" + "\n".join(lines)


def _usage_line(usage: Usage) -> str:
    """Model calls with their tokens and cost (an unpriced model named, never shown as $0),
    model-free steps apart, then searches and fetches."""
    parts: list[str] = []
    if usage.llm_calls or not usage.extractive_steps:
        tokens = f"{usage.input_tokens:,} tokens in / {usage.output_tokens:,} out"
        if usage.estimated_tokens:
            tokens += " (estimated)"
        unpriced = ", ".join(f"{m}: not in llm.prices" for m in usage.unpriced)
        if not unpriced:
            cost = f"cost ${usage.cost_usd:.4f}"
        elif usage.cost_usd > 0:
            cost = f"cost ${usage.cost_usd:.4f} + unpriced ({unpriced})"
        else:
            cost = f"cost unpriced ({unpriced})"
        parts += [f"{usage.llm_calls} LLM calls", tokens, cost]
    if usage.extractive_steps:
        parts.append(f"{usage.extractive_steps} extractive steps (no model)")
    parts += [f"{usage.search_calls} searches", f"{usage.fetches} fetches"]
    return ", ".join(parts)


def verification_line(v: Verification) -> str:
    """The citation check's counts, as the footer shows them."""
    line = (
        f"Claims: {v.claims} · cited: {v.cited} · verified: {v.verified} · "
        f"rewritten: {v.rewritten} · dropped: {v.dropped}"
    )
    if v.removed_ids:
        line += f" · unknown citations removed: {len(v.removed_ids)}"
    return line


def duration_line(footer: Footer) -> str:
    """Both times, named, so a wall clock and the report never disagree about what was timed."""
    line = f"Duration: {footer.duration_s:.1f} s total"
    if footer.research_s:
        line += f", research {footer.research_s:.1f} s (the rest: start-up, corpus index, Ray)"
    return line


def _footer_block(footer: Footer, verification: Verification | None = None) -> str:
    providers = ", ".join(f"{role}: {name}" for role, name in footer.providers.items()) or "none"
    lines = [
        f"- Report file: {_code(footer.saved_path)}",
        f"- Run id: {_code(footer.run_id)}",
        f"- Mode: {inline(footer.mode)}",
        f"- Providers: {inline(providers)}",
        f"- Usage: {_usage_line(footer.usage)}",
        f"- {duration_line(footer)}",
    ]
    if verification is not None:
        lines.append(f"- {verification_line(verification)}")
        if verification.figures:
            lines.append(
                f"- Figures of cited sentences found in their cited passages (as drafted): "
                f"{verification.figures_supported} of {verification.figures}"
            )
    lines.extend(f"- {inline(note)}" for note in footer.notes if note.strip())
    return "\n".join(lines)


def render_body(report: Report, resolved: ResolvedReport | None = None) -> str:
    """Everything above the footer rule; a pure function of the report."""
    resolved = resolved or resolve(report)
    blocks = [f"# {_title(report)}"]
    notes = _notes_block(report.notes)
    if notes:
        blocks.append(notes)
    blocks.append("## Answer\n\n" + _answer_block(report, resolved))
    blocks.extend(_findings_blocks(resolved))
    if report.limits:
        lines = "\n".join(f"- {inline(line)}" for line in report.limits)
        blocks.append("## Gaps and limits\n\n" + lines)
    blocks.append(_sources_block(resolved))
    return "\n\n".join(blocks) + "\n"


def render(report: Report, footer: Footer, resolved: ResolvedReport | None = None) -> str:
    """The whole report file: body, rule, footer."""
    footer_text = _footer_block(footer, report.verification)
    return render_body(report, resolved) + FOOTER_RULE + "\n" + footer_text + "\n"


def source_entries(
    report: Report, resolved: ResolvedReport | None = None
) -> tuple[SourceEntry, ...]:
    """The numbered sources as ``RunSummary`` lists them (same numbers as the rendered report)."""
    resolved = resolved or resolve(report)
    return tuple(
        SourceEntry(n=i, title=s.title, location=s.location, url=s.url)
        for i, s in enumerate(resolved.sources, start=1)
    )
