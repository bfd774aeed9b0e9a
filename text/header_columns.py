"""Which column each header fragment heads: a fragment over one column heads it, a spanning
header ("Three Months Ended") heads every column it spans (centred over a group, right-aligned
over the last of a tiled group), a lone period header also heads the date columns beside it.
Geometry only, on the fragments ``table_layout`` builds; the header block itself (which lines,
the title and the unit) is ``table_headers``'.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from deepresearch.text.periods import MONTHS
from deepresearch.text.table_headers import CENTRED, FLUSH, PERIOD_HEAD, UNIT_RE, unit_text

if TYPE_CHECKING:
    from deepresearch.text.visual_rows import Frag, VisualRow

_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def slot_of(frag: Frag, slots: list[tuple[float, float]]) -> int:
    centre = (frag.x0 + frag.x1) / 2
    return min(range(len(slots)), key=lambda i: _distance(centre, slots[i]))


def header_words(row: VisualRow, slots: list[tuple[float, float]]) -> list[Frag]:
    """A header row's words over the value columns: no stub over the labels, no unit line."""
    return [f for f in row.frags if f.x1 >= slots[0][0] and not UNIT_RE.match(f.text)]


def _distance(x: float, span: tuple[float, float]) -> float:
    return 0.0 if span[0] <= x <= span[1] else min(abs(x - span[0]), abs(x - span[1]))


def _overlap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, min(frag.x1, span[1]) - max(frag.x0, span[0]))


def _gap(frag: Frag, span: tuple[float, float]) -> float:
    return max(0.0, span[0] - frag.x1, frag.x0 - span[1])


def _place(
    row: VisualRow,
    slots: list[tuple[float, float]],
    out: list[list[Frag]],
    labels: tuple[float, list[list[tuple[float, float]]]],
    grazing: frozenset[tuple[int, int]],
) -> tuple[str, list[Frag], list[Frag]]:
    """Each column takes the fragment of this header row that overlaps it most: a spanning
    header ("Three Months Ended", centred or right-aligned over its columns) reaches every
    column it touches, except where it only grazes it (``grazing``: a tall header set close
    to its neighbour, "Total Number of Shares Purchased as Part of ..."). Returns a unit found
    among the fragments ("(In millions)", "" if none), the fragments over the columns and the
    stubs over the labels."""
    label_left, inner = labels
    unit = ""
    frags = []
    stubs: list[Frag] = []
    over = {unit_text(f.text) for f in row.frags if UNIT_RE.match(f.text) and f.x1 >= slots[0][0]}
    for frag in row.frags:  # units that differ between columns are their columns' own
        if UNIT_RE.match(frag.text) and not (len(over) > 1 and frag.x1 >= slots[0][0]):
            unit = unit_text(frag.text)
        elif frag.x1 >= slots[0][0] and not over_text_column(frag, inner):
            frags.append(frag)
        elif frag.x0 <= label_left + 20:  # a header over an inner text column heads no value
            stubs.append(frag)
    used: set[int] = set()
    for i, slot in enumerate(slots):
        best = max(frags, key=lambda f: _overlap(f, slot), default=None)
        if best is not None and _overlap(best, slot) > 1.0 and (id(best), i) not in grazing:
            out[i].append(best)
            used.add(id(best))
    for frag in frags:  # over no column's territory: the nearest column
        if id(frag) not in used:
            out[slot_of(frag, slots)].append(frag)
    return unit, frags, stubs


def _fill(
    frags: list[Frag],
    out: list[list[Frag]],
    columns: list[tuple[float, float]],
    top: bool,
    headed: frozenset[int],
) -> None:
    """Columns a row of spanning headers leaves empty take the nearest (top row), or the one
    right-aligned over the last column of their group (``_right_tiled``; also dates under the
    headers). A date set flush over its own column heads no other column that has a header
    of its own (``headed``: "June 30," over "2022" beside "Acquisitions")."""
    dates = all(_dated([f.text]) for f in frags)
    if not (top or dates) or not 2 <= len(frags) < len(columns):
        return
    tiled = _right_tiled(frags, columns)
    for i, span in enumerate(columns):
        near = min(frags, key=lambda f: _gap(f, span))
        if out[i] or not (tiled or (top and not (i in headed and _own_date(near, columns)))):
            continue
        out[i].append(tiled[i] if tiled else near)


def _stubs(stubs: list[Frag], out: list[list[Frag]]) -> None:
    """A stub over the labels ("Three Months Ended June 30,") heads the dates of its row;
    over other headers it names the label column ("Period") and heads none."""
    dated = [bool(cell) and all(_dated([f.text]) for f in cell) for cell in out]
    for i, cell in enumerate(out if stubs and any(dated) else []):
        if dated[i] or not cell:
            cell[:0] = stubs


def _own_date(frag: Frag, columns: list[tuple[float, float]]) -> bool:
    """A date right-aligned with the one column under it ("June 30," over "2022"), not
    centred on it (a date centred over a group can be centred on its middle column too)."""
    return _only_dates([frag.text]) and any(
        abs(frag.x1 - c[1]) <= FLUSH
        and _overlap(frag, c) > 0
        and abs(frag.x0 + frag.x1 - c[0] - c[1]) > 2 * CENTRED
        for c in columns
    )


def over_text_column(frag: Frag, inner: list[list[tuple[float, float]]]) -> bool:
    """``frag`` sits over the text column between the labels and the figures (over its words
    on most rows that have some: "Pricing Category" over "Level 1")."""
    rows = [spans for spans in inner if spans]
    hits = sum(any(frag.x0 < b and frag.x1 > a for a, b in spans) for spans in rows)
    return len(rows) >= 2 and hits >= 0.6 * len(rows)


def _main(frag: Frag, slots: list[tuple[float, float]]) -> int:
    return max(range(len(slots)), key=lambda i: _overlap(frag, slots[i]))


def _grazing(
    heads: list[VisualRow], slots: list[tuple[float, float]], columns: list[tuple[float, float]]
) -> frozenset[tuple[int, int]]:
    """(fragment id, column) pairs where a header that is mostly another column's only grazes a
    column with header words of its own, a date among them: it reaches neither the column's
    figures nor is it centred over header words under it that include the column's ("Common
    Stock" over "Shares  Amount" heads both; "Quarter-over-Quarter Change" does not head "May 1,
    2022" beside it). Dates are left alone: a date heads the columns under it."""

    owned = {_main(f, slots) for row in heads for f in header_words(row, slots)}
    out: set[tuple[int, int]] = set()
    for n, row in enumerate(heads):
        for frag in header_words(row, slots):
            if _dated([frag.text]):
                continue
            main = _main(frag, slots)
            for i in owned - {main}:
                if _overlap(frag, slots[i]) <= 1.0 or _overlap(
                    frag, (columns[i][0] - 1, columns[i][1] + 1)
                ):
                    continue  # not over its territory, or over its figures
                siblings = [f for f in row.frags if f is not frag]
                if not any(
                    _centred_over(frag, low.frags, i, slots, siblings) for low in heads[n + 1 :]
                ):
                    out.add((id(frag), i))
    return frozenset(out)


def _centred_over(
    frag: Frag,
    below: list[Frag],
    i: int,
    slots: list[tuple[float, float]],
    siblings: list[Frag],
) -> bool:
    """Whether ``frag`` is centred over header words below that include column ``i``'s, none of
    them under another header of its own line ("Quarter-over-Quarter" is not the parent of
    "May 1, 2022 ... Change" when that "Change" is under "Year-over-Year")."""
    middle = frag.x0 + frag.x1
    return any(
        abs(middle - f.x0 - g.x1) <= 3
        and any(_main(h, slots) == i for h in below[j : k + 1])
        and not any(_overlap(h, (s.x0, s.x1)) > 1.0 for h in below[j : k + 1] for s in siblings)
        for j, f in enumerate(below)
        for k, g in enumerate(below[j + 1 :], start=j + 1)
    )  # a parent over two or more header words; words have exact widths (a group of columns
    # has figures of varying widths, hence CENTRED's looser 6 points): within 1.5 points here


def column_headers(
    heads: list[VisualRow],
    slots: list[tuple[float, float]],
    columns: list[tuple[float, float]],
    labels: tuple[float, list[list[tuple[float, float]]]],
) -> tuple[list[list[str]], str]:
    """Each column's stacked header texts (top to bottom) and a unit stated among the header
    rows ("" when none). ``labels``: the labels' left edge and each data row's words in a
    text column between its label and its figures ("Level 2")."""
    unit = ""
    spans = bool(heads) and not staggered(heads, slots)
    levels: list[list[list[Frag]]] = []
    grazing = _grazing(heads, slots, columns)
    headed = frozenset(
        _main(f, slots)
        for row in heads[1:]
        for f in header_words(row, slots)
        if not _dated([f.text])
    )
    placed: list[tuple[list[Frag], list[Frag]]] = []
    for row in heads:
        level: list[list[Frag]] = [[] for _ in slots]
        row_unit, frags, stubs = _place(row, slots, level, labels, grazing)
        unit = row_unit or unit
        levels.append(level)
        placed.append((frags, stubs))
    _widen(levels, columns)  # before the nearest columns fill in: it knows what is centred
    for n, (level, (frags, stubs)) in enumerate(zip(levels, placed, strict=True)):
        _fill(frags, level, columns, n == 0 and spans, headed)
        _stubs(stubs, level)
    headers: list[list[str]] = [[] for _ in slots]
    parents: list[Frag | None] = [None] * len(slots)
    tops: list[Frag | None] = [None] * len(slots)
    for n, level in enumerate(levels):
        share_in_spans(level, parents, levels[n + 1 :])
        for i, cell in enumerate(level):
            headers[i].extend(f.text for f in cell)
            parents[i] = cell[0] if cell else parents[i]
            tops[i] = cell[0] if cell and n == 0 else tops[i]
    spread_period(headers, tops)
    return headers, unit


def _widen(levels: list[list[list[Frag]]], columns: list[tuple[float, float]]) -> None:
    """A header centred over a wider group of columns than it overlaps heads the whole group:
    a spanning header ("Year Ended December 31," centred over four year columns though it
    reaches only the middle two) when it is a date or the outer columns have dates under it
    (a date column is never left without its period); a date over one column it is not
    centred on ("Q1 2023" over its "Amount" and "% of Net Revenue") the narrowest group it is
    centred on.
    The columns taken have no header of their own on its line and no other header above it.
    Repeated while it widens: a period reaches a column once the date under it has."""

    def ids(cell: list[Frag]) -> list[int]:
        return [id(f) for f in cell]

    def centred(frag: Frag, g: int, h: int) -> bool:
        return abs(frag.x0 + frag.x1 - columns[g][0] - columns[h][1]) <= 2 * CENTRED

    def can_join(n: int, i: int, a: int) -> bool:
        above = all(ids(up[i]) == ids(up[a]) or not up[i] or not up[a] for up in levels[:n])
        return not levels[n][i] and above

    def group(n: int, frag: Frag, a: int, b: int) -> tuple[int, int]:
        if b > a:  # spanning: the widest symmetric group
            k, widest = 1, 0
            while a - k >= 0 and b + k < len(columns):
                outer = (a - k, b + k)
                dated = _only_dates([frag.text]) or all(
                    _dated([f.text for low in levels[n + 1 :] for f in low[i]]) for i in outer
                )  # a date heads the group it is centred on; a period, the dates under it
                if not (dated and all(can_join(n, i, a) for i in outer)):
                    break
                widest = k if centred(frag, *outer) else widest
                k += 1
            return a - widest, b + widest
        if centred(frag, a, a) or not _dated([frag.text]):
            return a, b
        lo, hi = a, a
        while lo > 0 and can_join(n, lo - 1, a):
            lo -= 1
        while hi + 1 < len(columns) and can_join(n, hi + 1, a):
            hi += 1
        fits = [(g, h) for g in range(lo, a + 1) for h in range(a, hi + 1) if centred(frag, g, h)]
        return min(fits, key=lambda gh: gh[1] - gh[0], default=(a, b))

    for _ in range(3):
        widened = False
        for n, level in enumerate(levels):
            for frag in {id(f): f for cell in level for f in cell}.values():
                mine = [i for i, cell in enumerate(level) if id(frag) in ids(cell)]
                a, b = mine[0], mine[-1]
                if b - a + 1 != len(mine):
                    continue
                g, h = group(n, frag, a, b)
                for i in (*range(g, a), *range(b + 1, h + 1)):
                    level[i].append(frag)
                    widened = True
        if not widened:
            return


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

    if all(_dated([f.text]) or PERIOD_HEAD.search(f.text) for f in header_words(heads[0], slots)):
        return False  # dates or periods over their columns' own headers span as printed
    top = {slot_of(f, slots) for f in header_words(heads[0], slots)}
    return any(
        slot_of(f, slots) not in top and not _dated([f.text])
        for r in heads[1:]
        for f in header_words(r, slots)
    )


def share_in_spans(
    level: list[list[Frag]], parents: list[Frag | None], below: list[list[list[Frag]]]
) -> None:
    """Under a spanning header, a lone sub-header aligned with it covers the whole span:
    "March 31," right-aligned under "Three Months Ended" belongs to both of its columns; not
    the columns with a month of their own further down ("January 29," set higher than "April
    30, 2023" and "May 1, 2022" beside it, as its year takes a line of its own)."""
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
        centre = abs(frag.x0 + frag.x1 - parent.x0 - parent.x1) <= 6  # 3 points: words over words
        if right or centre:
            for i in members:
                dated = any(_month(w) for low in below for f in low[i] for w in f.text.split())
                if not (dated and all(f is not frag for f in level[i])):
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
    top_is_date = _dated([top.text])  # "June 25, 2022" over a table: the date of every column
    if not top_is_date and not any(_dated(headers[i][1:]) for i in covered):
        return
    for step in (-1, 1):
        i = (covered[0] if step < 0 else covered[-1]) + step
        while 0 <= i < len(tops) and tops[i] is None and (top_is_date or _only_dates(headers[i])):
            headers[i].insert(0, top.text)
            i += step
