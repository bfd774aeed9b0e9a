"""Checks of a rendered report that only tests (and benches) make: the part two runs' reports
must share, and citation numbers that point at no listed source."""

from __future__ import annotations

import re

from deepresearch.policies.verification.citations import NUMERIC_MARKER
from deepresearch.reports.markdown import FOOTER_RULE


def body_of(markdown: str) -> str:
    """The comparable part of a rendered report: the text above the final ``---`` rule."""
    cut = markdown.rfind(FOOTER_RULE)
    return markdown if cut < 0 else markdown[: cut + 1]


_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
_LINK = re.compile(r"(?<!\\)\[[^\[\]\n]*\]\([^)\n]*\)")
_SOURCES_HEADING = re.compile(r"^##\s+Sources\s*$", re.MULTILINE)


def _strip_code(markdown: str) -> str:
    lines: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        stripped = line.lstrip()
        if fence is None and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        lines.append(line)
    return _CODE_SPAN.sub("", "\n".join(lines))


def find_unresolved(markdown: str, n_sources: int) -> list[int]:
    """Numbers cited above ``## Sources`` that are not in 1..n_sources (unique, in order seen)."""
    heading = _SOURCES_HEADING.search(markdown)
    body = markdown[: heading.start()] if heading else markdown
    body = _LINK.sub("", _strip_code(body))
    bad: list[int] = []
    for match in NUMERIC_MARKER.finditer(body):
        for value in re.split(r"\s*[,;]\s*", match.group(1).strip()):
            n = int(value)
            if not 1 <= n <= n_sources and n not in bad:
                bad.append(n)
    return bad
