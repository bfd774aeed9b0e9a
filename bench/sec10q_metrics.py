"""The pure metrics of ``bench/sec10q.py``: figures of a text, recall, sections of a report.

Separate from the runner so that other benchmarks (``table_methods.py``) and the unit tests read
the same rules without starting anything.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from typing import Any

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# "June 25, 2022" / "25 June 2022": the day of a date is not a figure.
_DATE_DAY = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}\b|\b\d{{1,2}}\s+{_MONTH}\b", re.IGNORECASE)
# "1. ", "2) " at the start of a line: list numbering, not a figure.
_LIST_NUMBER = re.compile(r"(?m)^\s*(?:[-*]\s*)?\d{1,3}[.)]\s")
# A number not glued to a word ("Q3", "10-Q", "FY23", "H1" are labels, not figures).
_NUMBER = re.compile(r"(?<![\w.,\-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(%|percent\b))?(?![\w-])")


def _canonical(integer: str, fraction: str) -> str:
    whole = integer.replace(",", "").lstrip("0") or "0"
    frac = fraction.rstrip("0").rstrip(".") if fraction else ""
    return whole + frac


def figures(text: str) -> set[str]:
    """The figures of ``text`` in canonical form (``"81,797"`` -> ``"81797"``, ``"2.40"`` -> ``"2.4"``).

    A figure is a number that has a decimal part or a percent sign, or at least two significant
    digits (``"$2.4 billion"`` -> ``"2.4"``, ``"5%"`` -> ``"5"``, ``"81,797"``; a bare ``"5"`` is not).
    Thousands separators are dropped and units ignored, so ``$81,797 million`` and ``81,797``
    match. Not figures: plain years 1990–2035, days inside dates (``June 25``), list numbering at
    a line start (``1.``), and numbers glued to letters (``Q3``, ``10-Q``, ``FY23``).
    """
    text = _LIST_NUMBER.sub(" ", text)
    text = _DATE_DAY.sub(" ", text)
    out: set[str] = set()
    for m in _NUMBER.finditer(text):
        integer, fraction, percent = m.group(1), m.group(2) or "", m.group(3)
        value = _canonical(integer, fraction)
        plain = not fraction and not percent and "," not in integer
        if plain and len(integer) == 4 and 1990 <= int(integer) <= 2035:
            continue
        if fraction or percent or len(integer.replace(",", "").lstrip("0")) >= 2:
            out.add(value)
    return out


# "$2.294 billion" is stated to the million: the same figure as "2,294" in a table in millions
_BILLIONS_TO_THE_MILLION = re.compile(r"(?<![\w.,])(\d{1,3})\.(\d{3})\s*billion\b", re.IGNORECASE)


def _in_millions(text: str) -> dict[str, str]:
    """Figures stated in billions to the million, by their canonical form -> the same figure in
    millions (``"$23.198 billion"``: ``"23.198" -> "23198"``). Exact conversions only: "$15.3
    billion" is rounded and matches nothing but itself."""
    return {
        _canonical(m[1], f".{m[2]}"): _canonical(f"{m[1]}{m[2]}", "")
        for m in _BILLIONS_TO_THE_MILLION.finditer(text)
    }


def _found(answer: str, text: str) -> tuple[set[str], set[str]]:
    """The answer's figures and those of them ``text`` states, in any unit the answer's
    exact figure converts to (``_in_millions``)."""
    wanted, have = figures(answer), figures(text)
    alike = _in_millions(answer)
    return wanted, {f for f in wanted if f in have or alike.get(f) in have}


def figure_recall(answer: str, report_body: str) -> float | None:
    """Share of the answer's figures found in the report body; ``None`` when it has none.
    A figure stated in billions to the million ("$2.294 billion") is found as the same figure
    in millions ("2,294"), as table cells state it."""
    wanted, found = _found(answer, report_body)
    return len(found) / len(wanted) if wanted else None


_HEADING = re.compile(r"(?m)^## ")


def answer_section(markdown: str) -> str:
    """The text of a rendered report's ``## Answer`` section ("" when it has none)."""
    start = re.search(r"(?m)^## Answer[ \t]*$", markdown)
    if start is None:
        return ""
    rest = markdown[start.end() :]
    nxt = _HEADING.search(rest)
    return rest[: nxt.start()] if nxt else rest.split("\n---\n", 1)[0]


def bm25_baseline(answer: str, passages: Sequence[str]) -> tuple[float | None, float | None]:
    """Figure recall of the best 1 and the best 3 passages of a plain search (ranked first to
    last): what a reader that quotes search results verbatim would hold."""
    return figure_recall(answer, "\n".join(passages[:1])), figure_recall(
        answer, "\n".join(passages[:3])
    )


def answered(answer: str, section: str) -> bool | None:
    """True when ``section`` states at least one of the answer's figures; ``None`` without any."""
    wanted, found = _found(answer, section)
    return bool(found) if wanted else None


def evidence_text(checkpoint: dict[str, Any]) -> str:
    """Every finding the researchers handed to the writer, from a run's checkpoint data."""
    lines: list[str] = []
    for report in checkpoint.get("completed", []):
        lines.extend(str(f.get("text", "")) for f in report.get("findings", []))
    return "\n".join(lines)


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def gold_globs(cell: str) -> list[str]:
    """The ``Source Docs`` cell as a list of globs (comma- or newline-separated)."""
    return [g.strip() for g in re.split(r"[,\n]", cell) if g.strip()]


def source_file_name(title: str, url: str) -> list[str]:
    """File names a cited source can be matched by: its title and the path inside its doc id."""
    names = [title] if title else []
    if url.startswith("doc:"):
        path = url[4:].split("#", 1)[0]
        names.append(path.rsplit("/", 1)[-1])
    return names


def cites_gold(globs: Sequence[str], sources: Iterable[tuple[str, str]]) -> bool:
    """True when any cited (title, url) has a file name matching any gold glob."""
    names = [n for title, url in sources for n in source_file_name(title, url)]
    return any(fnmatch.fnmatch(n, g) for g in globs for n in names)


_VERIFY_LINE = re.compile(
    r"Claims: (\d+) · cited: (\d+) · verified: (\d+) · rewritten: (\d+) · dropped: (\d+)"
)
_FIGURES_LINE = re.compile(r"found in their cited passages \(as drafted\): (\d+) of (\d+)")
VERIFY_KEYS = ("claims", "cited", "verified", "rewritten", "dropped")


def verification_counts(markdown: str) -> dict[str, int] | None:
    """The citation verifier's counts from a report's footer; ``None`` when it has none."""
    footer = markdown.rsplit("\n---\n", 1)[-1] if "\n---\n" in markdown else ""
    match = _VERIFY_LINE.search(footer)
    if match is None:
        return None
    counts = dict(zip(VERIFY_KEYS, (int(g) for g in match.groups()), strict=True))
    figs = _FIGURES_LINE.search(footer)
    counts["figures_supported"], counts["figures"] = (
        (int(figs.group(1)), int(figs.group(2))) if figs else (0, 0)
    )
    return counts


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def report_text(markdown: str) -> str:
    """The part of a rendered report a reader takes figures from: above footer and source list."""
    body = markdown.split("\n---\n", 1)[0]
    return body.split("\n## Sources", 1)[0]
