"""What a follow-up question is about when it does not say: the earlier question's subject.

"How did that compare with the same quarter a year earlier?" means nothing to a search engine on
its own; after "What was X's total net sales for the quarter ended July 1, 2023?" it asks about X's
total net sales in that quarter. ``in_context`` gives such a question the subject it points back to
(who, what metric, which period) so planning and search look for the right thing, while the user's
own words stay first. Plain English grammar only (pronouns, ellipsis, capitalized names, period
expressions): no list of companies or topics, so it works the same on any corpus or the web.

A follow-up that stands on its own ("Which plant makes gadgets?") is left as it is; one that names
its own subject but leans on the earlier question for the rest ("What about Y?") keeps its names
and borrows only the metric and period.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.text.periods import PERIOD_RE

# Words that point back at something said before: the question is not complete without it.
# Personal pronouns point at who ("its margin": the names and periods are enough) ...
_WHO = frozenset({
    "it", "its", "it's", "they", "them", "their", "theirs", "he", "she", "him", "his", "her",
})  # fmt: skip
# ... the others at the whole earlier fact ("how did that compare": its metric too).
_WHAT = frozenset({
    "same", "those", "these", "former", "latter", "aforementioned", "above", "previous", "prior",
})  # fmt: skip
_POINTERS = _WHO | _WHAT
_DEMONSTRATIVES = frozenset({"that", "this", "there", "then"})
# Before a demonstrative these make it a pronoun ("did that", "with this"), not a relative
# clause ("sales that grew"); at the start of the question it is always a pronoun.
_FUNCTION = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "by", "for", "to", "from", "with", "about", "than",
    "as", "and", "or", "but", "vs", "versus", "compare", "compared", "comparing", "is", "was",
    "were", "are", "be", "been", "being", "do", "does", "did", "has", "have", "had", "how", "what",
    "which", "who", "why", "when", "where", "whom", "whose", "can", "could", "would", "should",
    "will", "shall", "may", "might", "must", "not", "into", "over", "under", "between", "against",
    "during", "since", "after", "before", "like",
})  # fmt: skip
# Leads that continue the earlier question instead of asking a new one ("And for 2022?").
_ELLIPTIC_LEAD = re.compile(
    r"^\s*(?:and|also|so|but|what\s+about|how\s+about|what\s+of|same\s+for|ok(?:ay)?)\b",
    re.IGNORECASE,
)
_QUESTION_LEAD = re.compile(
    r"^\s*(?:(?:what|which|who|how(?:\s+(?:much|many|big|large))?|when|where|why)\s+)?"
    r"(?:(?:is|was|were|are|did|does|do|has|have|had|can|could|will|would)\s+)?"
    r"(?:(?:the|a|an)\s+)?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9][\w&'’.-]*")
_CONTENT_MIN = 3  # fewer content words than this cannot carry a question on their own
_MARK = "about"  # joins the user's words and the inherited subject: "Q? (about X's sales in P)"
_MARK_RE = re.compile(rf"\({_MARK} (.+)\)\s*$")


@dataclass(frozen=True)
class Reading:
    """How a question stands: its names, its periods, and whether it points back."""

    names: tuple[str, ...]
    periods: tuple[str, ...]
    points_back: bool
    only_who: bool = False  # it points back only through personal pronouns ("its margin")


def _words(text: str) -> list[str]:
    return [w.rstrip(".") for w in _WORD.findall(PERIOD_RE.sub(" ", text))]


def _bare(word: str) -> str:
    return re.sub(r"(?:'s|’s|'|’)$", "", word.strip(',;:()"“”'))


def _capitalized(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in _FUNCTION | _POINTERS | _DEMONSTRATIVES


def _acronym(word: str) -> bool:
    return sum(c.isupper() for c in word) >= 2 and word.upper() == word  # "IBM", "AAPL", "EU"


def _names(words: list[str]) -> list[bool]:
    """Which words name something: acronyms, and capitalized words; the first word of the
    sentence only when it is possessive or starts a run of capitalized words ("Revenue in
    2022?" names nothing, "Acme's margin?" and "Acme Corp margin?" do)."""
    out = []
    for i, word in enumerate(words):
        bare = _bare(word)
        if not bare or bare.lower() == "i":
            out.append(False)
        elif _acronym(bare) or (i > 0 and _capitalized(bare)):
            out.append(True)
        else:
            follows = i + 1 < len(words) and _capitalized(_bare(words[i + 1]))
            possessive = bare != word.strip(',;:()"“”')
            out.append(i == 0 and _capitalized(bare) and (possessive or follows))
    return out


def read(question: str) -> Reading:
    """Names, periods, and whether the question needs the one before it to make sense."""
    words = _words(question)
    names = tuple(w for w, named in zip(words, _names(words), strict=True) if named)
    lower = [w.lower().replace("’", "'") for w in words]
    who = any(w in _WHO for w in lower)
    what = any(w in _WHAT for w in lower) or any(
        w in _DEMONSTRATIVES and (i == 0 or lower[i - 1] in _FUNCTION) for i, w in enumerate(lower)
    )
    content = [w for w in lower if w not in _FUNCTION | _POINTERS | _DEMONSTRATIVES]
    periods = tuple(m.group(0) for m in PERIOD_RE.finditer(question))
    lead = bool(_ELLIPTIC_LEAD.match(question))
    short = len(content) + len(periods) < _CONTENT_MIN
    # "its operating expenses": a metric of its own, only the who (and when) is borrowed
    only_who = who and not what and not lead and len(content) >= 2
    return Reading(names, periods, who or what or lead or short, only_who)


def subject_phrase(question: str, drop_names: bool = False, drop_periods: bool = False) -> str:
    """The question without its interrogative lead: what it is about ("X's total net sales for
    the quarter ended July 1, 2023"); names or periods left out when the follow-up has its own."""
    text = " ".join(question.split()).rstrip(" ?.!")
    inner = _MARK_RE.search(text)
    if inner is not None:  # an earlier follow-up already in context: its subject is inside
        text = inner.group(1)
    lead = _QUESTION_LEAD.match(text)
    text = text[lead.end() :] if lead else text
    periods: list[str] = []

    def freeze(match: re.Match[str]) -> str:
        periods.append(match.group(0))
        return "" if drop_periods else f"\x00{len(periods) - 1}"

    words = PERIOD_RE.sub(freeze, text).split()
    if drop_names:
        words = [w for w, named in zip(words, _names(words), strict=True) if not named]
    while words and _bare(words[-1]).lower() in _FUNCTION:  # "sales for the" -> "sales"
        words.pop()
    while words and _bare(words[0]).lower() in _FUNCTION:
        words.pop(0)
    thawed = re.sub(r"\x00(\d+)", lambda m: periods[int(m.group(1))], " ".join(words))
    return thawed.strip(" ,;")


def _who_and_when(question: str, drop_periods: bool) -> str:
    """Only the names and periods of ``question``: what a pronoun like "its" points back to."""
    inner = _MARK_RE.search(question)
    text = inner.group(1) if inner is not None else question
    words = _words(text)
    names = [_bare(w) for w, named in zip(words, _names(words), strict=True) if named]
    periods = [] if drop_periods else [m.group(0) for m in PERIOD_RE.finditer(text)]
    parts = [" ".join(dict.fromkeys(names)), *dict.fromkeys(periods)]
    return ", ".join(p for p in parts if p)


def in_context(question: str, earlier: str) -> str:
    """``question`` as it is meant after ``earlier``: unchanged when it stands on its own, else with
    the earlier subject it points back to, after the user's own words."""
    question = " ".join(question.split())
    if not earlier.strip() or _MARK_RE.search(question):
        return question
    own = read(question)
    if not own.points_back:
        return question
    if own.only_who and not own.names:
        subject = _who_and_when(earlier, bool(own.periods))
    else:
        subject = subject_phrase(earlier, bool(own.names), bool(own.periods))
    if not subject or subject.lower() in question.lower():
        return question
    return f"{question} ({_MARK} {subject})"


def thread_question(questions: list[str]) -> str:
    """The newest question of a thread (oldest first) with its subject resolved through the
    thread: a follow-up of a follow-up still knows what the first question was about."""
    current = ""
    for question in questions:
        current = in_context(question, current) if current else " ".join(question.split())
    return current
