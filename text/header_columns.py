"""Which column each header fragment heads: a fragment over one column heads it, a spanning
header ("Three Months Ended") heads every column it spans (centred over a group, right-aligned
over the last of a tiled group), a lone period header also heads the date columns beside it.
Geometry only, on the fragments ``table_layout`` builds; the header block itself (which lines,
the title and the unit) is ``table_headers``'.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from deepresearch.text.table_headers import FLUSH, MONTHS, UNIT_RE, unit_text

if TYPE_CHECKING:
    from deepresearch.text.table_layout import Frag, VisualRow

_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_PERIOD = re.compile(r"\b(?:weeks|months|quarters?|years?)\s+end(?:ed|ing)\b", re.IGNORECASE)


def slot_of(frag: Frag, slots: list[tuple[float, float]]) -> int:
    centre = (frag.x0 + frag.x1) / 2
    return min(range(len(slots)), key=lambda i: _distance(centre, slots[i]))


def _distance(x: float, span: tuple[float, float]) -> float:
    return 0.0 if span[0] <= x <= span[1] else min(abs(x - span[0]), abs(x - span[1]))


def _overlap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, min(frag.x1, span[1]) - max(frag.x0, span[0]))


def _gap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, span[0] - frag.x1, frag.x0 - span[1])


def assign_headers(
    row: VisualRow,
    slots: list[tuple[float, float]],
    columns: list[tuple[float, float]],
    out: list[list[Frag]],
    top: bool,
    label_left: float = 0.0,
) -> str:
    """Each column takes the fragment of this header row that overlaps it most: a spanning
    header ("Three Months Ended", centred or right-aligned over its columns) reaches every
    column it touches. Returns a unit found among the fragments ("(In millions)") if any."""
    unit = ""
    frags = []
    stubs: list[Frag] = []
    for frag in row.frags:
        if UNIT_RE.match(frag.text):
            unit = unit_text(frag.text)
        elif frag.x1 >= slots[0][0]:
            frags.append(frag)
        elif frag.x0 <= label_left + 20:  # a header over an inner text column heads no value
            stubs.append(frag)
    used: set[int] = set()
    for i, slot in enumerate(slots):
        best = max(frags, key=lambda f: _overlap(f, slot), default=None)
        if best is not None and _overlap(best, slot) > 1.0:
            out[i].append(best)
            used.add(id(best))
    for frag in frags:  # over no column's territory: the nearest column
        if id(frag) not in used:
            out[slot_of(frag, slots)].append(frag)
    if top and 2 <= len(frags) < len(columns):  # spanning headers: each column the nearest
        tiled = _right_tiled(frags, columns)
        for i, span in enumerate(columns):
            if not out[i]:
                out[i].append(tiled[i] if tiled else min(frags, key=lambda f: _gap(f, span)))
    dated = [bool(cell) and all(_dated([f.text]) for f in cell) for cell in out]
    for i, cell in enumerate(out if stubs and any(dated) else []):
        if dated[i] or not cell:  # a stub over the labels ("Three Months Ended June 30,")
            cell[:0] = stubs  # heads the dates of its row; over other headers it names the
    return unit  # label column ("Period") and heads none


def _right_tiled(frags: list[Frag], columns: list[tuple[float, float]]) -> list[Frag] | None:
    """Each column's spanning header when the headers are set flush with the right edge of the
    last column of equal groups that tile the columns ("Three Months Ended" over the second of
    two year columns, "Six Months Ended" over the fourth); None for any other layout."""
    frags = sorted(frags, key=lambda f: f.x0)
    size, rest = divmod(len(columns), len(frags))
    if rest or size < 2:
        return None
    for k, frag in enumerate(frags):
        if abs(frag.x1 - columns[size * (k + 1) - 1][1]) > FLUSH:
            return None
    return [frags[i // size] for i in range(len(columns))]


def staggered(heads: list[VisualRow], slots: list[tuple[float, float]]) -> bool:
    """Column headers of different heights, bottom-aligned: a column the top header row leaves
    empty gets its own words lower down ("Total Number / of Shares / Purchased" beside a taller
    header). The top row's words then head their own columns only, spanning none."""

    def over(row: VisualRow) -> list[Frag]:
        return [f for f in row.frags if f.x1 >= slots[0][0] and not UNIT_RE.match(f.text)]

    if all(_dated([f.text]) or _PERIOD.search(f.text) for f in over(heads[0])):
        return False  # dates or periods over their columns' own headers span as printed
    top = {slot_of(f, slots) for f in over(heads[0])}
    return any(
        slot_of(f, slots) not in top and not _dated([f.text]) for r in heads[1:] for f in over(r)
    )


def share_in_spans(level: list[list[Frag]], parents: list[Frag | None]) -> None:
    """Under a spanning header, a lone sub-header aligned with it covers the whole span:
    "March 31," right-aligned under "Three Months Ended" belongs to both of its columns."""
    groups: dict[int, list[int]] = {}
    for i, parent in enumerate(parents):
        if parent is not None:
            groups.setdefault(id(parent), []).append(i)
    for members in groups.values():
        parent = parents[members[0]]
        lone = {id(f): f for i in members for f in level[i]}
        if parent is None or len(members) < 2 or len(lone) != 1:
            continue
        (frag,) = lone.values()
        right = abs(frag.x1 - parent.x1) <= 3
        centre = abs(frag.x0 + frag.x1 - parent.x0 - parent.x1) <= 6
        if right or centre:
            for i in members:
                level[i] = [frag]


def _dated(parts: list[str]) -> bool:
    text = " ".join(parts)
    return bool(_YEAR.search(text)) or any(w.strip(",.").lower() in MONTHS for w in text.split())


def _only_dates(parts: list[str]) -> bool:
    """Dates alone ("July 1," / "2023"): no period of their own ("Three Months Ended ...")."""
    words = " ".join(parts).replace(",", " ").split()
    return _dated(parts) and all(_month(w) or w.isdigit() for w in words)


def _month(word: str) -> bool:
    word = word.lower().strip(".")
    return word in MONTHS or (3 <= len(word) <= 4 and any(m.startswith(word) for m in MONTHS))


def spread_period(headers: list[list[str]], tops: list[Frag | None]) -> None:
    """A lone top header ("Three Months Ended", right-aligned over the second of its two date
    columns) also heads the dated columns next to the ones it overlaps: a date column is never
    left without the period it belongs to. Non-date columns ("Change") and columns under a
    period of their own (a "Three Months Ended" set a little lower) are left alone, unless the
    lone header is a date itself: then it dates the whole table."""
    found = {id(t): t for t in tops if t is not None}
    if len(found) != 1:
        return
    (top,) = found.values()
    covered = [i for i, t in enumerate(tops) if t is top]
    whole = _dated([top.text])  # "June 25, 2022" over a table: the date of every column
    if not whole and not any(_dated(headers[i][1:]) for i in covered):
        return
    for step in (-1, 1):
        i = (covered[0] if step < 0 else covered[-1]) + step
        while 0 <= i < len(tops) and tops[i] is None and (whole or _only_dates(headers[i])):
            headers[i].insert(0, top.text)
            i += step
