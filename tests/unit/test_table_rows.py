"""The self-describing row format round-trips and refuses text that is not a row."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deepresearch.text.tables import TableRow, format_row, parse_row


def test_row_reads_alone() -> None:
    row = TableRow(
        "Condensed consolidated statements of operations",
        "in millions",
        "Total net sales",
        (
            ("Three Months Ended July 1, 2023", "81,797"),
            ("Three Months Ended June 25, 2022", "82,959"),
        ),
    )
    line = format_row(row)
    assert line == (
        "Condensed consolidated statements of operations (in millions): Total net sales: "
        "Three Months Ended July 1, 2023 = 81,797; Three Months Ended June 25, 2022 = 82,959"
    )
    assert parse_row(line) == row


def test_untitled_row_and_blank_cells() -> None:
    row = TableRow("", "", "Other income", (("2023", "(265)"), ("2022", "—")))
    assert format_row(row) == "Other income: 2023 = (265); 2022 = —"
    assert parse_row(format_row(row)) == row


def test_prose_is_not_a_row() -> None:
    assert parse_row("Total net sales $ 81,797 $ 82,959") is None
    assert parse_row("The Company refers to Apple Inc. and its subsidiaries.") is None


_text = (
    st.text(
        st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters="()"),
        min_size=1,
        max_size=20,
    )
    .map(lambda s: " ".join(s.split()))
    .filter(lambda s: s and ":" not in s and ";" not in s and "=" not in s)
)


@given(_text, _text, st.lists(st.tuples(_text, _text), min_size=1, max_size=4))
def test_round_trip(title: str, label: str, cells: list[tuple[str, str]]) -> None:
    row = TableRow(title, "in millions", label, tuple(cells))
    assert parse_row(format_row(row)) == row


def test_a_row_with_a_unit_but_no_title_reads_back_its_unit() -> None:
    row = TableRow("", "in millions", "Revenue", (("2023", "1,200"),))
    assert format_row(row) == "(in millions): Revenue: 2023 = 1,200"
    assert parse_row(format_row(row)) == row
