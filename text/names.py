"""Names: capitalized words, the one plain-grammar sign of a company, product, person or place.

``CAPITALIZED`` is the one name pattern. A sentence's first word is capitalized whatever it is, so
``names_in`` keeps only the capitalized words that do not open a sentence (scorers weigh these
less than the metric asked about: an answering passage calls the subject "the Company" or "we"),
and ``names_someone`` is the stricter test of the citation rule: a capitalized word of two or more
characters right after a lower-case word, a digit or clause punctuation ("sales of Apple rose").
``names_entity`` asks whether a text names a given company (whom a finding is about), and
``proper_entities`` which of a question's capitalized words are names, not title-cased words.
"""

from __future__ import annotations

import difflib
import functools
import re
import string
from collections.abc import Collection, Iterable, Sequence

from deepresearch.text.question_words import GENERIC_OWNERS, NOT_NAMES
from deepresearch.text.terms import strip_possessive

CAPITALIZED = re.compile(r"\b[A-Z][\w&'’.-]*")
_TOKEN = re.compile(r"[\w&'’.-]+")
_DETERMINERS = frozenset({"the", "our", "its", "their", "this", "these", "a", "an"})
_JOINERS = frozenset({"of", "and", "&", "for", "in", "on"})
_AFTER_WORD = frozenset(string.ascii_lowercase + string.digits + ",;:)")
_LOWER_WORD = re.compile(r"\b[a-z][\w’'-]*")
_ANY_WORD = re.compile(r"[\w’'-]+")


def _opens_sentence(text: str, start: int) -> bool:
    return start == 0 or (start >= 2 and text[start - 1].isspace() and text[start - 2] in ".?!")


def names_in(text: str) -> list[str]:
    """The capitalized words of ``text`` that do not open a sentence, in order."""
    return [m[0] for m in CAPITALIZED.finditer(text) if not _opens_sentence(text, m.start())]


def proper_names(text: str, common: Collection[str]) -> list[str]:
    """The words of sentence-like ``text`` that can only be names: capitalized inside it, not
    an acronym ("SEC"), a label before a number ("Level 2"), a defined term after a determiner
    ("the Company's", "our Condensed Consolidated Statements") or a word ``common`` holds in lower
    case; "information of Rivian" names Rivian. A title-cased heading names nothing."""
    words = text.split()
    if not words or sum(w[:1].isupper() for w in words) * 2 >= len(words):
        return []
    out = []
    determined = False  # inside a capitalized run that a determiner opened
    for m in _TOKEN.finditer(text):
        token = m[0]
        if not token[:1].isupper():  # "of" / "and" inside a determined run continue it
            joins = determined and token in _JOINERS
            determined = joins or token.lower() in _DETERMINERS
            continue
        if token.lower() in _DETERMINERS:  # "Our Condensed Consolidated Statements ..."
            determined = True
            continue
        word = token.rstrip(".’'").removesuffix("’s").removesuffix("'s")
        rest = text[m.end() :].lstrip()
        if (
            m.start() == 0
            or determined
            or len(word) < 3
            or word.replace(".", "").isupper()
            or rest[:1].isdigit()
            or word.lower() in common
        ):
            continue
        out.append(word)
    return out


def stranger_titles(rows: Iterable[tuple[str, str]], common: Collection[str]) -> set[str]:
    """Of ``(title, label)`` table rows, the titles that name someone (``proper_names``): a
    filing restates an investee's results ("summarized financial information of Rivian"). A
    name the table's own labels hold is one of its categories, the filer's own ("Products and
    Services gross margin ...": "Gross margin percentage - Services")."""
    labels: dict[str, set[str]] = {}
    for title, label in rows:
        labels.setdefault(title, set()).update(w.lower() for w in _ANY_WORD.findall(label))
    return {t for t, words in labels.items() if proper_names(t, {*common, *words})}


def common_words(texts: Iterable[str], question: str) -> set[str]:
    """The words ``proper_names`` takes for words, not names: those the texts write in lower
    case somewhere, and every word of the question (its own subject is no stranger)."""
    common = {w for text in texts for w in _LOWER_WORD.findall(text)}
    return common | {w.lower() for w in _ANY_WORD.findall(question)}


def names_someone(sentence: str) -> bool:
    """Whether ``sentence`` names a company, person or place inside it (see the module doc)."""
    for m in CAPITALIZED.finditer(sentence):
        i = m.start()
        before = sentence[i - 2] if i >= 2 else ""
        word = m[0].split(".", 1)[0]  # initials ("U.S.") are not a name
        if len(word) >= 2 and sentence[i - 1 : i].isspace() and before in _AFTER_WORD:
            return True
    return False


_NAME_WORD = re.compile(r"[A-Za-z0-9&]+")
SPELT_LIKE = 0.75  # difflib ratio: "appel"/"apple" 0.8, "amd"/"intel" 0.25
_QUESTION_WORD = re.compile(r"[\w&'’.-]*\w|[.?!,;]")  # punctuation ends a name: "Apple, Microsoft"
_ALL_LOWER = re.compile(r"(?<![\w&])[a-z][a-z0-9]*(?![\w&])")  # "revenue", not "iPhone"
# a web or mail address writes a name in lower case ("investor.apple.com"): no word of it counts
_WEB_ADDRESS = re.compile(
    r"\S*(?:@|://|\bwww\.)\S*|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|gov|edu|io|co)\b\S*",
    re.IGNORECASE,
)


# a company's legal form: "Microsoft Corp" is named where "MICROSOFT CORPORATION" is
_LEGAL_FORMS = frozenset(
    [
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "llc",
        "plc",
        "ag",
        "sa",
        "nv",
        "gmbh",
    ]
)


def names_entity(entity: str, text: str) -> bool:
    """Whether ``text`` names ``entity``, case-blind: the whole name as words ("Amazon" in
    "AMAZON.COM, INC."), or each of its words but its legal form ("AWS (Amazon Web Services)"
    is named where AWS and Amazon Web Services are, "NVIDIA Corp" where NVIDIA is)."""
    words = [w for w in _NAME_WORD.findall(entity) if w.lower() not in _LEGAL_FORMS]
    if _whole(entity, text) or (len(words) == 1 and _whole(words[0], text)):
        return True
    said = {w.lower() for w in _NAME_WORD.findall(text)}
    return len(words) > 1 and all(w.lower() in said for w in words)


def entities_of(text: str) -> tuple[str, ...]:
    """Capitalized names (runs of capitalized words), possessives stripped, in order, once."""
    words = _QUESTION_WORD.findall(text)
    out: list[str] = []
    run: list[str] = []

    def close() -> None:
        if len(run) >= 2 and all(w.isupper() for w in run):
            out.extend(run)  # "AAPL MSFT NVDA": tickers side by side, one name each
        elif run:
            out.append(" ".join(run))
        run.clear()

    for i, word in enumerate(words):
        bare = strip_possessive(word)
        name = bool(CAPITALIZED.fullmatch(bare)) and bare.lower().rstrip(".") not in NOT_NAMES
        opens = i == 0 or words[i - 1] in {".", "?", "!"}  # "Compare ..." opens a sentence
        joined = i + 1 < len(words) and words[i + 1].lower() in {"vs", "vs.", "versus", "and", "or"}
        acronym = sum(c.isupper() for c in bare) >= 2
        first = opens and not (word.endswith(("'s", "’s")) or joined or acronym)
        if name and not first and not re.fullmatch(r"Q[1-4]|FY\d*|H[12]", bare):
            run.append(bare.rstrip("."))
            if bare != word:
                close()  # "Apple's revenue": the possessive ends the name
        else:
            close()
    close()
    return tuple(dict.fromkeys(out)) or _typed_lower(words)


def _typed_lower(words: Sequence[str]) -> tuple[str, ...]:
    """A question typed without capitals names its companies by their possessives ("what was
    amd's revenue"): those that are no framing or generic word ("the company's")."""
    out = []
    for word in words:
        bare = strip_possessive(word)
        if bare != word and bare.isalpha() and bare.islower() and bare not in GENERIC_OWNERS:
            out.append(bare)
    return tuple(dict.fromkeys(out))


# What every match of ``_WEB_ADDRESS`` holds (IGNORECASE also folds "ı" and "İ" to "i"): a
# text with none of them has no address, and the regex need not scan it.
_ADDRESS_MARKS = ("@", "://", "www.", ".co", ".org", ".net", ".gov", ".edu", ".io")


@functools.lru_cache(maxsize=1 << 12)  # the same sources are checked round after round
def _lower_words(text: str) -> frozenset[str]:
    """The words ``text`` writes in lower case, outside web and mail addresses. The address
    regex over whole texts was a tenth of a run's CPU; most texts hold no address at all."""
    folded = text.lower()
    if any(mark in folded for mark in _ADDRESS_MARKS) or "ı" in text or "İ" in text:
        text = _WEB_ADDRESS.sub(" ", text)
    return frozenset(_ALL_LOWER.findall(text))


def proper_entities(entities: Sequence[str], texts: Iterable[str]) -> list[str]:
    """The ``entities`` that are names in ``texts``: a word of theirs (not a legal form) the
    texts never write in lower case ("AMD", "iPhone"; not a title-cased "Total Revenue"), web
    and mail addresses aside ("investor.apple.com" is no lower-case "apple")."""
    lower = set().union(*map(_lower_words, texts))
    return [
        e
        for e in entities
        if any(
            w.lower() not in lower and w.lower() not in _LEGAL_FORMS
            for w in _NAME_WORD.findall(e)
            if len(w) > 1
        )
    ]


def spelt_like(name: str, author: str) -> bool:
    """Whether ``name`` looks like a misspelling of a word of ``author`` (its legal form aside):
    "Appel" of "Apple Inc.", "Nvidea" of "NVIDIA CORPORATION"."""
    words = [w.lower() for w in _NAME_WORD.findall(author) if w.lower() not in _LEGAL_FORMS]
    wanted = name.lower()
    return any(
        len(w) >= 3 and difflib.SequenceMatcher(None, wanted, w).ratio() >= SPELT_LIKE
        for w in words
    )


def spelt_as(entity: str, texts: Iterable[str]) -> str:
    """``entity`` as ``texts`` write it when it was typed in lower case ("apple" -> "Apple" of
    "2023 Q3 AAPL.pdf (Apple Inc.)"); as typed otherwise, or when no text names it."""
    if not entity.islower():
        return entity
    for text in texts:
        if m := _name_pattern(entity).search(text):
            return m.group()
    return entity


def _whole(name: str, text: str) -> bool:
    return bool(_name_pattern(name).search(text))


@functools.lru_cache(maxsize=256)
def _name_pattern(name: str) -> re.Pattern[str]:
    """``name`` as whole words, case-blind ("Amazon" in "AMAZON.COM", not in "Amazonian")."""
    return re.compile(rf"(?<![\w&]){re.escape(name)}(?![\w&])", re.IGNORECASE)


__all__ = [
    "CAPITALIZED",
    "common_words",
    "entities_of",
    "names_entity",
    "names_in",
    "names_someone",
    "proper_entities",
    "proper_names",
    "spelt_as",
    "spelt_like",
    "stranger_titles",
]
