"""A total's test keeps each column's figures as rows are read (``table_body.Figures``) instead
of reading every row above again for every row: the spans it finds are those of the plain
reading (kept here as the reference) on any column of figures, dashes and words."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from deepresearch.text.row_sums import DASHES, Figures, amount, sum_span

NAMES = ["2023", "2022"]


def _reference(cells: dict[int, list[str]], above: list[dict[str, str]]) -> int:
    """The reading before: every column rebuilt from every row above, for every row."""
    if not cells:
        return 0
    spans: set[int] | None = None
    for slot, texts in cells.items():
        value = amount(" ".join(texts))
        column = [row.get(NAMES[slot], "") for row in above]
        numbers = [0.0 if v.strip() in DASHES else amount(v) for v in column if v]
        if not numbers and value:
            continue
        if value is None or not numbers or value == 0:
            return 0
        total, ok = 0.0, set()
        for count, n in enumerate(reversed(numbers), start=1):
            if n is None:
                break
            total += n
            if count >= 2 and abs(total - value) <= 0.5:
                ok.add(count)
        spans = ok if spans is None else spans & ok
        if not spans:
            return 0
    return min(spans) if spans else 0


_CELL = st.one_of(
    st.integers(-2, 6).map(str),  # small figures: sums often match
    st.integers(1, 3).map(lambda n: f"({n})"),
    st.sampled_from(["", "", "—", "n/a", "1.5", "0.4", "2.25"]),
)
_ROW = st.tuples(_CELL, _CELL)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_ROW, max_size=12), _ROW)
def test_spans_kept_as_rows_are_read_are_those_of_the_plain_reading(
    rows: list[tuple[str, str]], last: tuple[str, str]
) -> None:
    figures = Figures()
    above: list[dict[str, str]] = []
    for row in [*rows, last]:
        cells = {slot: [text] for slot, text in enumerate(row) if text}
        assert sum_span(cells, figures, NAMES) == _reference(cells, above)
        texts = tuple((NAMES[slot], text) for slot, text in enumerate(row) if text)
        figures.add(texts)
        above.append(dict(texts))


def test_a_total_is_the_fewest_rows_every_column_adds_up() -> None:
    figures = Figures()
    for a, b in (("10", "5"), ("(3)", "—"), ("20", "7")):
        figures.add((("2023", a), ("2022", b)))
    assert sum_span({0: ["17"], 1: ["7"]}, figures, NAMES) == 2  # a dash adds a zero
    assert sum_span({0: ["27"], 1: ["12"]}, figures, NAMES) == 3
    assert sum_span({0: ["17"], 1: ["12"]}, figures, NAMES) == 0  # columns disagree
    assert sum_span({0: ["1,000"]}, figures, NAMES) == 0
