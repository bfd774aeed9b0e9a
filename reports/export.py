"""The report as JSON (structured sections, claims, citations, sources) or a standalone HTML page.

Both are built from the same resolved citations as the Markdown report (``citations.resolve``, run
once per report by the driver and passed to whichever renderer it uses), so a citation
number means the same source in every format. Run-varying facts (paths, ids, usage, timings) sit in
a separate ``run`` object (JSON) or the page footer (HTML), as they sit below the Markdown's rule.
One small mapping function per record (``source_record``, ``claim_record``) is the place to add a
field to every format at once.
"""

from __future__ import annotations

import html
import json
from typing import Any

from deepresearch.policies.verification.citations import ResolvedReport, resolve
from deepresearch.reports.markdown import FOOTER_RULE, Footer, render
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


def render_json(report: Report, footer: Footer, resolved: ResolvedReport | None = None) -> str:
    document = {
        "format": "deep-research-report",
        "version": EXPORT_VERSION,
        **report_record(report, resolved),
        "run": run_record(footer),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:16px/1.55 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:48rem;
margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.7rem;line-height:1.25}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #d8dee4;padding-bottom:.2rem}
blockquote{border-left:4px solid #d8dee4;margin:1rem 0;padding:.2rem 1rem;color:#57606a}
a.cite{text-decoration:none;font-size:.8em;vertical-align:super}
li:target{background:#fff8c5}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d8dee4;padding:.25rem .6rem}
th{background:#f6f8fa}.align-left{text-align:left}.align-center{text-align:center}
.align-right{text-align:right}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto}
code{font-size:.9em;word-break:break-all}pre code{word-break:normal}
footer{margin-top:2.5rem;border-top:1px solid #d8dee4;color:#57606a;font-size:.85rem}
""".strip()


def render_html(report: Report, footer: Footer, resolved: ResolvedReport | None = None) -> str:
    """A standalone page: the Markdown report rendered (``markdown_html``, so the same citation
    numbers, anchors, tables and escaping as the web page), inline CSS, no scripts or assets."""
    from deepresearch.reports.markdown_html import to_html

    markdown = render(report, footer, resolved)
    cut = markdown.rfind(FOOTER_RULE)
    body, foot = markdown[:cut], markdown[cut + len(FOOTER_RULE) :]
    title = " ".join(printable(report.title or report.query).split()) or "Research report"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title, quote=True)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{to_html(body)}</main>\n<footer>\n{to_html(foot)}</footer>\n"
        "</body>\n</html>\n"
    )


def render_as(
    report_format: str, report: Report, footer: Footer, resolved: ResolvedReport | None = None
) -> str:
    """The report file's text in ``report_format`` (md, json or html). ``resolved``: the
    report's citations as resolved once for the run (numbering, sources, dropped markers), which
    every format and the run's summary share; resolved here only when the caller has none."""
    if report_format == "json":
        return render_json(report, footer, resolved)
    if report_format == "html":
        return render_html(report, footer, resolved)
    return render(report, footer, resolved)
