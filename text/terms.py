"""Terms and stop words: the one list of words that carry no content, and light stemming.

``STOPWORDS`` is the project's stop-word list: English function words plus the verbs a request
opens with ("tell me", "list the ..."). Callers that drop words from a search query extend it
with ``QUERY_EXTRA`` (modal verbs; "may" stays out of the base list because it is also a month,
which period matching needs); a code search keeps the request verbs ("find", "list" are
identifiers there) and uses ``FUNCTION_WORDS``. Grammar classes that are not stop words (the
coordination boundaries of ``providers.llm.rules``, the frame words of ``text.question``) keep
their own lists next to the grammar that reads them.
"""

from __future__ import annotations

import functools
import re
import threading

import snowballstemmer  # type: ignore[import-untyped]

# fmt: off
FUNCTION_WORDS = frozenset({
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
    "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more",
    "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than",
    "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    "yours", "much", "many", "vs", "versus",
})
REQUEST_WORDS = frozenset({
    "please", "tell", "give", "show", "find", "list", "describe", "explain",
})
# fmt: on
STOPWORDS = FUNCTION_WORDS | REQUEST_WORDS
# Modal verbs and small function words a search query can drop but term scoring keeps ("may").
QUERY_EXTRA = frozenset({"may", "might", "must", "shall", "whose", "us", "per", "via"})
_WORD = re.compile(r"[a-z0-9]+(?:[.,'’][a-z0-9]+)*")
# a form number ("10-Q", "10-Qs", "8-K"): a document type, neither a topic nor a name ("Qs")
FORM_NUMBER = re.compile(r"\b\d+-[A-Za-z]{1,2}s?\b")
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
# a file's type after its name: "2023 Q3 NVDA.pdf" names NVDA (the ticker a question may use)
_FILE_TYPE = re.compile(r"\.(pdf|html?|md|txt|docx|pptx|xlsx|csv|epub)\b")


def strip_possessive(word: str) -> str:
    """``word`` without its possessive ending ("Apple's" -> "Apple", "companies'" -> "companies")."""
    return _POSSESSIVE.sub("", word)


_DIGITS = re.compile(r"[\d,.]+")
# A Snowball stemmer keeps the word it works on in the object: one per thread (actors stem on
# several threads, and a shared one mixed two words' letters: IndexError).
_LOCAL = threading.local()


# Memoized: a report's sources repeat the same few thousand words tens of thousands of times,
# and stemming them was most of the extractive provider's time (pure, so the cache is exact).
@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The English Snowball (Porter 2) stem: "operations", "operating" and "operational" are one
    term, as are "activities" and "active"; a question's words meet a filing's row labels.
    Numbers lose their separators ("1,234" ~ "1234") and are otherwise kept."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if _DIGITS.fullmatch(w):
        return w.replace(",", "")
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    stemmed: str = stemmer.stemWord(w)
    return stemmed


def terms(text: str) -> list[str]:
    """Stemmed content terms of ``text`` (stopwords dropped, numbers kept without commas)."""
    return list(_terms(text))


# Memoized too: a crew process reads the same pages for run after run (pure: the cache is exact).
@functools.lru_cache(maxsize=1 << 15)
def _terms(text: str) -> tuple[str, ...]:
    words = _WORD.findall(_FILE_TYPE.sub(r" \1", text.lower()))
    return tuple(stem(w) for w in words if w not in STOPWORDS)


__all__ = [
    "FORM_NUMBER",
    "FUNCTION_WORDS",
    "QUERY_EXTRA",
    "REQUEST_WORDS",
    "STOPWORDS",
    "stem",
    "strip_possessive",
    "terms",
]
