"""Memoized text functions (a crew process sees the same pages and headers run after run) give
what they gave uncached, and callers never share a mutable result."""

from __future__ import annotations

from deepresearch.policies.verification import support as support_module
from deepresearch.policies.verification.support import support
from deepresearch.text import question, sentences
from deepresearch.text.sentences import build_units

PAGE = """Apple Inc. | Q3 2023 Form 10-Q | 12
Net sales by category
Total net sales increased during the third quarter of 2023 compared to the same quarter
of 2022. The Company's gross margin was 44.5% in the quarter.
Total net sales $ 81,797 $ 82,959
Net sales of Mac decreased due to lower sales of MacBook Air.
"""
REPEATED = "Net sales of Mac decreased due to lower sales of MacBook Air."
OTHER = f"""Apple Inc. | Q3 2023 Form 10-Q | 12
{REPEATED}
Services net sales increased due to higher advertising, cloud and payment services.
"""


def _uncached_units(sources: list[tuple[int, str]]) -> list[sentences.Unit]:
    sentences._lines.cache_clear()
    sentences._units_of.cache_clear()
    return build_units(sources)


def test_units_cached_equal_uncached_and_come_in_fresh_lists() -> None:
    sources = [(1, PAGE), (2, OTHER)]
    fresh = _uncached_units(sources)
    first, second = build_units(sources), build_units(sources)
    assert first == fresh == second
    assert [u.terms for u in first] == [u.terms for u in fresh]
    assert first is not second
    first.clear()  # one caller's list is its own
    assert build_units(sources) == fresh


def test_a_pages_units_depend_on_the_pages_read_with_it() -> None:
    alone = [u.text for u in build_units([(1, PAGE)])]  # cached first, without boilerplate
    together = [u.text for u in build_units([(1, PAGE), (2, OTHER)]) if u.source == 1]
    assert REPEATED in alone
    assert REPEATED not in together  # a line both pages hold is boilerplate when read together
    assert together == [u.text for u in _uncached_units([(1, PAGE), (2, OTHER)]) if u.source == 1]
    assert [u.source for u in build_units([(7, PAGE)])] == [7] * len(alone)


def test_periods_cached_equal_uncached() -> None:
    header = "Three Months Ended July 1, 2023 and fiscal 2022, Q3 FY23"
    cached = question.periods_of(header)
    question.periods_of.cache_clear()
    assert question.periods_of(header) == cached
    assert isinstance(cached, tuple)  # immutable: safe to share


def test_support_cached_equal_uncached() -> None:
    claim = "Total net sales were $81.8 billion, and Mac sales were $9 billion."
    cached = [support(claim, PAGE), support(claim, OTHER)]
    support_module._missing.cache_clear()
    assert [support(claim, PAGE), support(claim, OTHER)] == cached
    assert cached[0].missing == ("9 billion",)
    assert cached[1].missing == ("81.8 billion", "9 billion")
