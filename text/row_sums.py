"""Which rows of a table add up to another: a total and its parts; and which two make a rate.

Extraction reads a printed table's sections by them (a total closes its section), and evidence
reads a question by them: a question about a total ("operating expenses", "what drove net sales")
is answered by the total's row and by the rows it is the sum of ("Research and development",
"Restructuring and other charges"), which never name the total and so share no word with the
question. A printed table says which rows are parts only by indentation, which extraction
loses; the arithmetic says it for any table: the rows directly above a row whose values add up
to its own are its parts.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from functools import lru_cache
from typing import TypeVar

import numpy as np

from deepresearch.text.tables import TableRow, parse_row

K = TypeVar("K", bound=Hashable)
MAX_CANDIDATES = 18  # rows ``summing`` tries: every subset of them, 262,125 sums at most
_BLOCK = 1 << 14  # subsets summed at once (a block of masks x candidates booleans)
DASHES = frozenset({"—", "–", "-"})  # a dash in a figure column is a zero


def amount(text: str) -> float | None:
    """The amount a printed figure states ("(265)" is -265, "$ 1,234" 1234); None for words."""
    digits = text.replace(",", "").replace("$", "").strip()
    negative = digits.startswith("(") and digits.endswith(")")
    try:
        value = float(digits.strip("()").strip())
    except ValueError:
        return None
    return -value if negative else value


class Figures:
    """Each column's figures in the rows so far, kept as rows are read so that a total's test
    does not read every row above again: the run of figures since the column's last cell that
    is no figure (a total adds up none before it), and where its first negative and positive
    figures sit in the run (while none lies further up, a sum moving past the total never
    comes back to it: the scan stops)."""

    def __init__(self) -> None:
        self.runs: dict[str, list[float]] = {}  # a column with any cell is in here
        self.first_negative: dict[str, int] = {}
        self.first_positive: dict[str, int] = {}

    def add(self, cells: tuple[tuple[str, str], ...]) -> None:
        for name, text in dict(cells).items():
            if not text:
                continue
            number = _cell(text)
            run = self.runs.setdefault(name, [])
            if number is None:
                run.clear()
                self.first_negative.pop(name, None)
                self.first_positive.pop(name, None)
                continue
            if number < 0:
                self.first_negative.setdefault(name, len(run))
            elif number > 0:
                self.first_positive.setdefault(name, len(run))
            run.append(number)

    def spans(self, name: str, value: float) -> set[int]:
        """How many figures (two or more) right above add up to ``value`` (within 0.5)."""
        run = self.runs[name]
        negative = self.first_negative.get(name, len(run))
        positive = self.first_positive.get(name, len(run))
        total, ok = 0.0, set()
        for count, number in enumerate(reversed(run), start=1):
            total += number
            if count >= 2 and abs(total - value) <= 0.5:
                ok.add(count)
            rest = len(run) - count  # the figures further up: indices below this
            if (total > value + 0.5 and negative >= rest) or (
                total < value - 0.5 and positive >= rest
            ):
                break  # none of them can bring the sum back
        return ok


def sum_span(cells: dict[int, list[str]], figures: Figures, names: list[str]) -> int:
    """How many rows right above a row its values each add up (the fewest, at least two, that
    every column with figures above agrees on); 0 when they add up no run of rows: then it is
    no total."""
    if not cells:
        return 0
    spans: set[int] | None = None
    for slot, texts in cells.items():
        value = amount(" ".join(texts))
        seen = names[slot] in figures.runs
        if not seen and value:  # a column the rows above leave empty adds up nothing
            continue
        if value is None or not seen or value == 0:
            return 0
        ok = figures.spans(names[slot], value)
        spans = ok if spans is None else spans & ok
        if not spans:
            return 0
    return min(spans) if spans else 0


def parts(rows: Sequence[TableRow]) -> dict[int, tuple[int, ...]]:
    """Per row of one table (in printed order) that adds up the rows directly above it in every
    column (``sum_span``), those rows."""
    out: dict[int, tuple[int, ...]] = {}
    figures = Figures()
    for i, row in enumerate(rows):
        names = [header for header, _ in row.cells]
        span = sum_span({k: [value] for k, (_, value) in enumerate(row.cells)}, figures, names)
        if span:
            out[i] = tuple(range(i - span, i))
        figures.add(row.cells)
    return out


MAX_ITEMS = 8  # items above a row that ``differences`` reads it as the first of, less the rest


def differences(
    rows: Sequence[TableRow], sums: dict[int, tuple[int, ...]]
) -> dict[int, tuple[int, ...]]:
    """Per row of one table (printed order) that is the first item above it less (or plus) the
    items between in every column, those items: a statement's subtotals ("Gross margin" is "Total
    net sales" less "Total cost of sales", "Operating income" is "Gross margin" less "Research
    and development", "Sales and marketing" and "General and administrative", "Net income" is
    "Income before taxes" less "Provision for income taxes"), printed without a sign. A row
    that is a part of a total between (``sums``: ``parts``) counts in its total: "Income before
    taxes" is "Operating income" plus "Other income, net", whose parts lie between them. At
    least two columns, as for ``summing``; rows that are sums already are left to them."""
    out: dict[int, tuple[int, ...]] = {}
    table = [{h: v for h, c in r.cells if (v := _cell(c)) is not None} for r in rows]
    for i, want in enumerate(table):
        if i in sums or len(want) < 2 or not any(want.values()):
            continue
        items: list[int] = []  # the items above, nearest first
        consumed: set[int] = set()
        for j in range(i - 1, -1, -1):
            if not want.keys() <= table[j].keys() or len(items) >= MAX_ITEMS:
                break  # a row without the figures: the statement's section ends above it
            consumed.update(sums.get(j, ()))
            if j in consumed:
                continue
            items.append(j)
            if len(items) >= 2 and any(
                all(
                    abs(table[j][h] + sign * sum(table[k][h] for k in items[:-1]) - v) <= 0.5
                    for h, v in want.items()
                )
                for sign in (-1, 1)
            ):
                out[i] = tuple(reversed(items))
                break
    return out


def _by_table(rows: Iterable[tuple[Hashable, K, TableRow]]) -> list[list[tuple[K, TableRow]]]:
    """(id, row) pairs grouped by their table, each group in the order given."""
    tables: dict[Hashable, list[tuple[K, TableRow]]] = {}
    for table, key, row in rows:
        tables.setdefault(table, []).append((key, row))
    return list(tables.values())


def parts_by_table(rows: Iterable[tuple[Hashable, K, TableRow]]) -> dict[K, tuple[K, ...]]:
    """``parts`` and ``differences`` over rows of many tables, each given as (its table, its
    id, the row) in printed order: per total's id, its parts' ids."""
    out: dict[K, tuple[K, ...]] = {}
    for members in _by_table(rows):
        for total, part in _table_parts(tuple(row for _, row in members)):
            out[members[total][0]] = tuple(members[k][0] for k in part)
    return out


# The same filing tables are read by every researcher that reads their page, run after run:
# what a table's rows add up to is worked out once per table (pure, by its rows).
@lru_cache(maxsize=2048)
def _table_parts(table: tuple[TableRow, ...]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    sums = parts(table)
    return tuple((differences(table, sums) | sums).items())


def operands_by_table(rows: Iterable[tuple[Hashable, K, TableRow]]) -> dict[K, tuple[K, K]]:
    """Per rate row of many tables (each row given as its table, its id, the row), the ids of
    the two rows of its table it is the ratio of (``ratio_of``)."""
    out: dict[K, tuple[K, K]] = {}
    for members in _by_table(rows):
        for rate, (top, bottom) in _table_operands(tuple(row for _, row in members)):
            out[members[rate][0]] = (members[top][0], members[bottom][0])
    return out


@lru_cache(maxsize=2048)
def _table_operands(table: tuple[TableRow, ...]) -> tuple[tuple[int, tuple[int, int]], ...]:
    """Per rate row of one table (by position), the positions of its two operand rows."""
    out: list[tuple[int, tuple[int, int]]] = []
    for i, row in enumerate(table):
        if not any(c.strip().endswith("%") for _, c in row.cells):
            continue
        others = [k for k in range(len(table)) if k != i]
        pair = ratio_of(row, [table[k] for k in others])
        if pair is not None:
            out.append((i, (others[pair[0]], others[pair[1]])))
    return tuple(out)


def summing(
    total: TableRow, rows: Sequence[TableRow], most: int = MAX_CANDIDATES
) -> tuple[int, ...]:
    """The fewest of ``rows`` (two or more, of the first ``most`` that state an amount in each
    of ``total``'s columns; the first such set in row order among as few) whose amounts add up
    to ``total``'s in every one of those columns; () when none do, or when the total states
    fewer than two amounts (one column's sum may be chance among a thousand). For rows out of
    their printed order (a report's findings), where the rows directly above a total are not
    known: a debt table's "Premium on debt exchange" lies a dozen rows from its "Total debt"."""
    want = [(h, v) for h, c in total.cells if (v := _cell(c)) is not None]
    if len(want) < 2 or not any(v for _, v in want):
        return ()
    table = [dict(r.cells) for r in rows]
    held = [
        i
        for i, cells in enumerate(table)
        if all(_cell(cells.get(h, "")) is not None for h, _ in want)
    ][:most]
    if len(held) < 2:
        return ()
    values = np.array([[_cell(table[i][h]) or 0.0 for h, _ in want] for i in held])
    target = np.array([v for _, v in want])
    found = _subsets_adding_up(values, target)
    return tuple(held[k] for k in found)


def _subsets_adding_up(values: np.ndarray, target: np.ndarray) -> tuple[int, ...]:
    """Of every subset of ``values``' rows (two or more), the fewest whose column sums are each
    within 0.5 of ``target``'s, the first in row order among as few: every sum at once, a block
    of subsets (as bit masks) times the values, rather than one Python loop per subset."""
    n = len(values)
    bits = 1 << np.arange(n, dtype=np.int64)
    best: tuple[int, ...] = ()
    for start in range(0, 1 << n, _BLOCK):
        masks = np.arange(start, min(start + _BLOCK, 1 << n), dtype=np.int64)
        chosen = (masks[:, None] & bits) != 0
        sums = chosen.astype(values.dtype) @ values
        ok = np.all(np.abs(sums - target) <= 0.5, axis=1) & (chosen.sum(axis=1) >= 2)
        for row in chosen[ok]:
            combo = tuple(int(k) for k in np.flatnonzero(row))
            if not best or (len(combo), combo) < (len(best), best):
                best = combo
    return best


def _cell(text: str) -> float | None:
    return 0.0 if text.strip() in DASHES else amount(text)


def _percent(text: str) -> tuple[float, int] | None:
    """A percent cell's value and decimals ("696.2 %" -> (696.2, 1), "(1.3)%" -> (-1.3, 1))."""
    digits = text.replace("%", "").strip()
    value = amount(digits)
    if value is None or not text.strip().endswith("%"):
        return None
    fraction = digits.strip("()").partition(".")[2]
    return value, len(fraction)


def ratio_of(rate: TableRow, rows: Sequence[TableRow]) -> tuple[int, int] | None:
    """The two of ``rows`` (numerator, denominator) whose amounts make ``rate``'s percents in
    every column where all three state one, to the percent's printed decimals: "Effective tax
    rate 696.2 %" is "Provision for taxes (362)" over "Income before taxes (52)". At least two
    such columns, as for ``summing``: one column's ratio may be chance. None when no pair does."""
    want = {h: p for h, c in rate.cells if (p := _percent(c)) is not None}
    if len(want) < 2:
        return None
    table = [{h: v for h, c in r.cells if h in want and (v := _cell(c)) is not None} for r in rows]
    for top, bottom in ((a, b) for a in range(len(rows)) for b in range(len(rows)) if a != b):
        shared = [h for h in want if h in table[top] and h in table[bottom]]
        if len(shared) >= 2 and all(
            table[bottom][h]
            and abs(100 * table[top][h] / table[bottom][h] - want[h][0]) <= 0.5 * 10 ** -want[h][1]
            for h in shared
        ):
            return top, bottom
    return None


def totals_of_parts(texts: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per table row line of ``texts`` (self-describing rows, ``text.tables``) that is a part of
    a total, the lines of its totals: a row the question's words never name is read for the
    total it makes up."""
    lines = [(n, line.strip()) for n, text in enumerate(texts) for line in text.split("\n")]
    rows = (
        ((n, row.title), k, row)
        for k, (n, line) in enumerate(lines)
        if " = " in line and (row := parse_row(line)) is not None
    )
    out: dict[str, set[str]] = {}
    for total, part in parts_by_table(rows).items():
        for k in part:
            out.setdefault(lines[k][1], set()).add(lines[total][1])
    return {line: frozenset(totals) for line, totals in out.items()}


__all__ = [
    "DASHES",
    "Figures",
    "amount",
    "differences",
    "operands_by_table",
    "parts",
    "parts_by_table",
    "ratio_of",
    "sum_span",
    "summing",
    "totals_of_parts",
]
