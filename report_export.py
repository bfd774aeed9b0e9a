"""The report as JSON (structured sections, claims, citations, sources) or a standalone HTML page.

Both are built from the same ``policies.citations.resolve`` as the Markdown report, so a citation
number means the same source in every format. Run-varying facts (paths, ids, usage, timings) sit in
a separate ``run`` object (JSON) or the page footer (HTML), as they sit below the Markdown's rule.
One small mapping function per record (``source_record``, ``claim_record``) is the place to add a
field to every format at once.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from deepresearch.policies.citations import NUMERIC_MARKER, ResolvedReport, resolve
from deepresearch.report import NO_ANSWER_LEAD, Footer, duration_line, render, source_view
from deepresearch.schemas import Report, Source, Verification
from deepresearch.text.terminal import printable

EXPORT_VERSION = 1
EXTENSIONS = {"md": "md", "json": "json", "html": "html"}


# --------------------------------------------------------------------------- records


def source_record(n: int, source: Source) -> dict[str, Any]:
    """One numbered source as every structured format shows it."""
    return {
        "n": n,
        "title": source.title,
        "by": source.by,  # who the document is by, as its cover says ("" when unknown)
        "location": source.location,
        "url": source.url,
        "cited_at": list(source.cited_at),  # passage locations cited: "p. 4" or a text fragment
    }


def claim_record(text: str, numbers: tuple[int, ...]) -> dict[str, Any]:
    return {"text": text, "citations": list(numbers)}


def report_record(report: Report, resolved: ResolvedReport | None = None) -> dict[str, Any]:
    """The comparable content of a report: identical inputs give identical records."""
    resolved = resolved or resolve(report)
    return {
        "query": report.query,
        "title": printable(report.title),
        "status": report.status,
        "answer": resolved.answer.strip(),
        "answer_citations": list(resolved.answer_numbers),
        "sections": [
            {
                "heading": printable(section.heading),
                "claims": [claim_record(f.text, f.numbers) for f in section.findings],
            }
            for section in resolved.sections
            if section.findings
        ],
        "sources": [source_record(i, s) for i, s in enumerate(resolved.sources, start=1)],
        "notes": [n for n in report.notes if n.strip()],
        "limits": [line for line in report.limits if line.strip()],
        "verification": _verification(report.verification) if report.verification else None,
    }


def _verification(v: Verification) -> dict[str, Any]:
    """The verifier's counts; the unknown citations it removed are counted, never repeated."""
    record = v.model_dump(mode="json", exclude={"removed_ids"})
    record["removed"] = len(v.removed_ids)
    return record


def run_record(footer: Footer) -> dict[str, Any]:
    return {
        "report_path": footer.saved_path,
        "run_id": footer.run_id,
        "mode": footer.mode,
        "providers": dict(footer.providers),
        "usage": footer.usage.model_dump(mode="json"),
        "duration_s": footer.duration_s,
        "research_s": footer.research_s,
        "notes": list(footer.notes),
    }


def render_json(report: Report, footer: Footer) -> str:
    document = {
        "format": "deep-research-report",
        "version": EXPORT_VERSION,
        **report_record(report),
        "run": run_record(footer),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:16px/1.55 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:48rem;
margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.7rem;line-height:1.25}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #d8dee4;padding-bottom:.2rem}
.notes{border-left:4px solid #d8dee4;margin:1rem 0;padding:.2rem 1rem;color:#57606a}
sup a{text-decoration:none}.no-answer{font-weight:600}
ol.sources li{margin:.3rem 0}ol.sources li:target{background:#fff8c5}
code{font-size:.9em;word-break:break-all}.url{color:#57606a;font-size:.9em}
footer{margin-top:2.5rem;border-top:1px solid #d8dee4;color:#57606a;font-size:.85rem}
""".strip()


def _esc(text: str) -> str:
    return html.escape(" ".join(printable(text).split()), quote=True)


def _cite(numbers: tuple[int, ...] | list[int]) -> str:
    return "".join(f'<sup><a href="#source-{n}">[{n}]</a></sup>' for n in sorted(set(numbers)))


def _prose(text: str, n_sources: int) -> str:
    """Escaped text whose inline ``[n]`` markers become footnote links."""

    def link(match: re.Match[str]) -> str:
        numbers = [int(x) for x in re.split(r"\s*[,;]\s*", match.group(1).strip())]
        return _cite([n for n in numbers if 1 <= n <= n_sources])

    parts = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "\n".join(f"<p>{NUMERIC_MARKER.sub(link, _esc(p))}</p>" for p in parts)


def _safe_href(url: str) -> str | None:
    return url if re.match(r"^https?://", url, re.IGNORECASE) else None


def _href(url: str, text: str) -> str:
    href = _safe_href(url)
    if href is None:
        return f'<code class="url">{_esc(text)}</code>'
    return f'<a class="url" href="{html.escape(href, quote=True)}">{_esc(text)}</a>'


def _source_item(n: int, source: Source) -> str:
    """The same facts as the Markdown's line (``report.source_view``), each said once."""
    view = source_view(source)
    titled = view.title != source.url.strip()
    line = f"<strong>{_esc(view.title)}</strong>" if titled else _href(view.title, view.title)
    if view.place:
        line += f", {_esc(view.place)}"
    if view.link:
        line += " — " + _href(view.link, view.link)
    if view.cited_at:
        line += " — cited: " + ", ".join(_cited_at(c) for c in view.cited_at)
    return f'<li id="source-{n}">{line}</li>'


def _cited_at(location: str) -> str:
    """A cited place: a text-fragment URL becomes a link, a page label stays text."""
    href = _safe_href(location)
    if href:
        return f'<a href="{html.escape(href, quote=True)}">passage</a>'
    return _esc(location)


def _verification_line(report: Report) -> str | None:
    v = report.verification
    if v is None:
        return None
    return (
        f"Claims: {v.claims} · cited: {v.cited} · verified: {v.verified} · "
        f"rewritten: {v.rewritten} · dropped: {v.dropped}"
    )


def _footer_html(footer: Footer, report: Report | None = None) -> str:
    run = run_record(footer)
    providers = ", ".join(f"{k}: {v}" for k, v in footer.providers.items()) or "none"
    usage = footer.usage
    rows = [
        f"Report file: <code>{_esc(run['report_path'])}</code>",
        f"Run id: <code>{_esc(run['run_id'])}</code>",
        f"Mode: {_esc(footer.mode)}",
        f"Providers: {_esc(providers)}",
        f"Usage: {usage.llm_calls} LLM calls, {usage.input_tokens:,} tokens in / "
        f"{usage.output_tokens:,} out, cost ${usage.cost_usd:.4f}, {usage.search_calls} searches, "
        f"{usage.fetches} fetches",
        _esc(duration_line(footer)),
        *(_esc(n) for n in footer.notes if n.strip()),
    ]
    checked = _verification_line(report) if report is not None else None
    if checked:
        rows.append(_esc(checked))
    return "<footer><ul>" + "".join(f"<li>{r}</li>" for r in rows) + "</ul></footer>"


def render_html(report: Report, footer: Footer) -> str:
    """A standalone page: inline CSS, no scripts or external assets, every text escaped."""
    resolved = resolve(report)
    record = report_record(report, resolved)
    n = len(record["sources"])
    title = record["title"].strip() or record["query"].strip() or "Research report"
    body = [f"<h1>{_esc(title)}</h1>"]
    if record["notes"]:
        body.append(
            '<div class="notes">' + "".join(f"<p>{_esc(x)}</p>" for x in record["notes"]) + "</div>"
        )
    body.append("<h2>Answer</h2>")
    if report.status == "no_answer":
        body.append(f'<p class="no-answer">{_esc(NO_ANSWER_LEAD)}</p>')
    answer = _prose(record["answer"], n)
    if answer:  # the answer's citations close its last paragraph, as in the Markdown
        cites = _cite(record["answer_citations"])
        body.append(answer[: -len("</p>")] + cites + "</p>" if cites else answer)
    elif report.status != "no_answer":
        body.append("<p><em>The sources that were read did not support an answer.</em></p>")
    sections = record["sections"]
    for section in sections:
        heading = "Findings" if len(sections) == 1 else (section["heading"].strip() or "Findings")
        items = "".join(
            f"<li>{NUMERIC_MARKER.sub('', _esc(c['text']))}{_cite(c['citations'])}</li>"
            for c in section["claims"]
        )
        body.append(f"<h2>{_esc(heading)}</h2>\n<ul>{items}</ul>")
    if record["limits"]:
        items = "".join(f"<li>{_esc(x)}</li>" for x in record["limits"])
        body.append(f"<h2>Gaps and limits</h2>\n<ul>{items}</ul>")
    body.append("<h2>Sources</h2>")
    if resolved.sources:
        items = "\n".join(_source_item(i, s) for i, s in enumerate(resolved.sources, start=1))
        body.append(f'<ol class="sources">\n{items}\n</ol>')
    else:
        body.append("<p><em>No source is cited: none that was read supported an answer.</em></p>")
    body.append(_footer_html(footer, report))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(body)
        + "\n</main>\n</body>\n</html>\n"
    )


def render_as(report_format: str, report: Report, footer: Footer) -> str:
    """The report file's text in ``report_format`` (md, json or html)."""
    if report_format == "json":
        return render_json(report, footer)
    if report_format == "html":
        return render_html(report, footer)
    return render(report, footer)
