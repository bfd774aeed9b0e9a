"""The text package's shared definitions keep the distinctions their callers rely on."""

from __future__ import annotations

import pytest

from deepresearch.text.figures import has_figure, states_figure
from deepresearch.text.names import CAPITALIZED, names_in, names_someone, proper_names
from deepresearch.text.periods import find_periods, month_number
from deepresearch.text.terms import FUNCTION_WORDS, QUERY_EXTRA, STOPWORDS, terms


def test_one_stop_word_list_with_documented_extensions() -> None:
    assert FUNCTION_WORDS < STOPWORDS  # plus the request verbs
    assert {"list", "find", "please"} <= STOPWORDS - FUNCTION_WORDS
    assert "may" not in STOPWORDS and "may" in QUERY_EXTRA  # a month, for period matching
    assert terms("What were the May 2023 net sales?") == ["may", "2023", "net", "sale"]


def test_names_skip_the_first_word_of_a_sentence() -> None:
    assert names_in("What was Apple's revenue? Compare Microsoft.") == ["Apple's", "Microsoft."]
    assert names_in("Revenue of the Company in the 10-Q") == ["Company", "Q"]
    assert CAPITALIZED.fullmatch("U.S.") and not CAPITALIZED.fullmatch("iPhone")


@pytest.mark.parametrize(
    ("sentence", "named"),
    [
        ("Sales of Apple rose.", True),
        ("Revenue rose, Microsoft said.", True),
        ("Revenue rose in U.S. markets.", False),  # initials are not a name
        ("- The revenue rose.", False),  # a bullet's first word
        ("Revenue rose and I agree.", False),  # one letter
    ],
)
def test_the_citation_rule_names_someone_only_inside_a_sentence(sentence: str, named: bool) -> None:
    assert names_someone(sentence) is named


@pytest.mark.parametrize(
    ("text", "scorer", "boilerplate"),
    [
        ("Net sales were $81.8 billion", True, True),
        ("Other income, net (12) (45)", True, False),  # an accounting negative in a table row
        ("Indicate whether the Registrant (1) has filed all reports", True, False),
        ("Diluted earnings per share 1.26", False, True),
        ("The Company designs products", False, False),
    ],
)
def test_figure_tests_share_one_pattern_and_differ_only_by_their_extension(
    text: str, scorer: bool, boilerplate: bool
) -> None:
    assert has_figure(text) is scorer
    assert states_figure(text) is boilerplate


def test_periods_are_found_verbatim_and_months_numbered() -> None:
    assert find_periods("Revenue for the quarter ended July 1, 2023 vs Q3 2022") == [
        "quarter ended July 1, 2023",
        "Q3 2022",
    ]
    assert [month_number(m) for m in ("Jan", "Sept.", "december")] == [1, 9, 12]


def test_memoized_terms_hand_out_a_fresh_list_each_time() -> None:
    """``terms`` is cached for crew processes that read the same pages run after run: a caller
    that changes its list must not change what the next caller gets."""
    from deepresearch.text.terms import terms

    first = terms("Total net sales rose in the quarter")
    first.append("intruder")
    assert "intruder" not in terms("Total net sales rose in the quarter")


def test_a_questions_word_and_a_filings_word_share_their_stem() -> None:
    """ "cash flows from operations" is reported as "operating activities"; "activities" too."""
    assert terms("operations operating operational") == ["oper"] * 3
    assert terms("activities active") == ["activ"] * 2
    assert terms("Inventories inventory") == ["inventori"] * 2
    assert terms("1,234 and 1234") == ["1234", "1234"]


def test_only_words_that_cannot_be_anything_else_are_proper_names() -> None:
    common = {"cash"}
    title = "Required summarized financial information of Rivian as disclosed in its SEC filings"
    assert proper_names(title, common) == ["Rivian"]
    assert proper_names("the purchase price allocation for Activision Blizzard", common) == [
        "Activision",
        "Blizzard",
    ]
    for not_named in (
        "certain items in our Condensed Consolidated Statements of Income",
        "Our Condensed Consolidated Statements of Income include stock-based compensation "
        "expense, net of amounts allocated to inventory, as follows",
        "The following tables show the Company’s cash and Level 2 securities",
        "Consolidated Condensed Statements of Income",  # a title-cased heading
    ):
        assert proper_names(not_named, common) == []
    assert proper_names("revenue of the segment and of Cash", common) == []  # "cash" is a word


def test_words_are_stemmed_alike_on_many_threads_at_once() -> None:
    """Actors stem on several threads; one shared Snowball stemmer mixed two words' letters."""
    from concurrent.futures import ThreadPoolExecutor

    from deepresearch.text.terms import stem

    words = [f"{w}{n}ings" for n in range(3000) for w in ("operat", "account")]
    expected = [w[:-4] for w in words]  # "operat7ings" -> "operat7"
    stem.cache_clear()
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(stem.__wrapped__, words)) == expected
