"""Bridge (waterfall) tables as self-describing rows.

A filing explains how a figure moved from one period to the next with a bridge: the figure of one
period, the amounts each cause added or took away, the figure of the other period, each printed
amount first ("$ 71 Q3 2023 Operating Income", "(299) Higher unit cost ...", "$ (139) Q3 2022
Operating Income"). Column reconstruction finds no header row in it, and the lines run together
into one unreadable "sentence" of amounts and causes, which a reader (or a writer, model or not)
cannot take apart. ``rows_from_bridges`` rewrites each block of three or more such lines as
``tables.format_row`` rows: the heading above is the title and the "(In Millions)" line the unit;
where the block opens and closes with a "$" amount (the two periods' figures, the way filings
print totals) those two are the "Amount" and each line between a "Change between" the two
labels' periods, else every line an "Amount". A line that does not start with an amount continues the one above when it starts in
lower case (a cause wrapped onto the next line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.text.table_headers import UNIT_RE, unit_text
from deepresearch.text.tables import TableRow, format_row

MIN_LINES = 3  # fewer amount-first lines are a list or a coincidence, not a bridge
_LOOK_UP = 8  # lines above a bridge searched for its heading and unit line
_HEADING_WORDS = 12
_FIRST = re.compile(
    r"^(?P<dollar>\$\s*)?(?P<value>\(?[-−]?\d[\d,]*(?:\.\d+)?\)?%?)\s+(?P<label>[A-Za-z].*)$"
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass
class _Line:
    value: str
    label: str
    dollar: bool


def _amount_first(line: str) -> _Line | None:
    """An amount, then what it is: a cause or a period's figure names it in a phrase that starts
    capitalized and ends with no full stop. A footnote ("(1) Includes sales of ...") or a
    sentence wrapped after an amount ("8.28 billion pursuant to a plan.") is a sentence."""
    m = _FIRST.match(line.strip())
    if m is None or _YEAR.match(m["value"]) or m["value"].endswith(","):
        return None
    label = m["label"].strip()
    if not label[:1].isupper() or label.endswith((".", ":", ";", ",")):
        return None
    return _Line(m["value"], label, bool(m["dollar"]))


def _rest_of_wrapped_cause(label: str, line: str, after: list[str]) -> bool:
    """Whether ``line`` is the rest of a cause wrapped onto it: it starts in lower case, or the
    cause broke off on a lower-case word ("... from higher" / "DCAI other product revenue")
    and an amount-first line follows."""
    text = line.strip()
    if not text or _amount_first(text):
        return False
    if text[:1].islower():
        return True
    cut = label.split()[-1][:1].islower() if label.split() else False
    return cut and not text.endswith(".") and bool(after) and _amount_first(after[0]) is not None


def _amount_like(lines: list[_Line]) -> bool:
    """A bridge prints money: some line has a "$", a comma or a parenthesized amount ("1 Plan
    overview", "2 Risks" is a numbered list)."""
    return any(x.dollar or "," in x.value or x.value.startswith("(") for x in lines)


def _segments(lines: list[_Line]) -> list[list[_Line]]:
    """A block cut into bridges: a "$" line after lines without one closes its bridge (two
    bridges printed one under the other share no blank line)."""
    out: list[list[_Line]] = []
    current: list[_Line] = []
    for line in lines:
        current.append(line)
        if line.dollar and len(current) > 1 and any(not x.dollar for x in current):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _caption(above: list[str]) -> tuple[str, str]:
    """The heading and the unit of a bridge from the lines above it (nearest first)."""
    title = unit = ""
    for line in above:
        text = line.strip()
        if not text or _amount_first(text):
            continue
        if not unit and UNIT_RE.match(text):
            unit = unit_text(text)
            continue
        words = text.split()
        if (text.startswith("(") and text.endswith(")")) or not _WORD.search(text):
            continue  # a note on the chart ("(Percentages in ...)") or its axis ("Q1 2022 Q1 2023")
        if not title and len(words) <= _HEADING_WORDS and not text.endswith((".", ":", ";")):
            title = text
            break
    return title, unit


def _change(first: str, last: str) -> str:
    """What a cause's amount is the change of: "Change between Q3 2023 and Q3 2022" when the
    two figures' labels differ only in what comes first (their periods), in printed order."""
    a, b = first.split(), last.split()
    same = 0
    while same < min(len(a), len(b)) and a[-1 - same] == b[-1 - same]:
        same += 1
    head_a, head_b = " ".join(a[: len(a) - same]), " ".join(b[: len(b) - same])
    return f"Change between {head_a} and {head_b}" if same and head_a and head_b else "Change"


def _rows(bridge: list[_Line], title: str, unit: str) -> list[str]:
    ends = len(bridge) >= MIN_LINES and bridge[0].dollar and bridge[-1].dollar
    change = _change(bridge[0].label, bridge[-1].label) if ends else ""
    out = []
    for k, line in enumerate(bridge):
        header = change if ends and 0 < k < len(bridge) - 1 else "Amount"
        out.append(format_row(TableRow(title, unit, line.label, ((header, line.value),))))
    return out


def rows_from_bridges(text: str) -> str:
    """``text`` with each block of ``MIN_LINES`` or more amount-first lines as rows."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        first = _amount_first(lines[i])
        if first is None:
            out.append(lines[i])
            i += 1
            continue
        block, j = [first], i + 1
        while j < len(lines):
            nxt = _amount_first(lines[j])
            if nxt is not None:
                block.append(nxt)
            elif _rest_of_wrapped_cause(block[-1].label, lines[j], lines[j + 1 : j + 2]):
                block[-1].label = f"{block[-1].label} {lines[j].strip()}"
            else:
                break
            j += 1
        # a cause wrapped onto the next line may end as a sentence: footnotes, not a bridge
        said = any(x.label.endswith((".", ":", ";", ",")) for x in block)
        if len(block) < MIN_LINES or not _amount_like(block) or said:
            out.extend(lines[i:j])
            i = j
            continue
        title, unit = _caption(list(reversed(out[-_LOOK_UP:])))
        for bridge in _segments(block):
            out.extend(_rows(bridge, title, unit))
        i = j
    return "\n".join(out)


__all__ = ["MIN_LINES", "rows_from_bridges"]
