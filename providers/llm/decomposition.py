"""A question about two things split into whole questions, by grammar alone, or told why not.

The model-free planner's rule: a coordination ("A and B", "A, B and C", "A or B") splits when its
conjuncts are periods ("the quarters ended March 31, 2024 and 2023"), names of things ("Acme's and
Globex's", "the -f and -x options") or items of one kind ("the defaults of A, B and C"), and so
does a comparison ("compare A and B", "the difference between A and B", "which is faster, A or
B"). Each part repeats the whole question with one conjunct in place, its verb agreeing ("What do
the -f and -x options do?" -> "What does the -f option do?"), and what the conjuncts share in it
("How do I install and configure X?" -> "How do I install X?"; "its marketing and advertising
expenses" -> "its marketing expenses"): conjuncts are alike in shape, so the words a longer right
conjunct has beyond the left one's are shared when the left one lacks them (a bare verb, a
modifier), its own when the left one is whole by itself (a plural noun, a verb with its object),
and when that cannot be told the question stays whole. It does not split a name with "and"
in it ("research and development", "Procter and Gamble"), two clauses ("how and why", "... and
what does it mean?"), one relation ("the relationship between A and B") or a list of examples
("segments like A, B and others"): those stay whole, with the reason, and a plan researches them as
quick mode does. A part that would not read as a whole question keeps the question whole too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from deepresearch.providers.llm.rules import (
    Token,
    capitalized,
    is_period,
    possessive,
    render,
    tokenize,
)
from deepresearch.text.question_words import COMPOUND_PAIRS

Split = Literal["periods", "entities", "items", "comparison"]


@dataclass(frozen=True)
class Decomposition:
    """``parts`` are whole questions (none when the question stays whole); ``split`` says what
    was split, ``reason`` why nothing was."""

    question: str
    parts: tuple[str, ...] = ()
    split: Split | None = None
    reason: str = ""

    @property
    def whole(self) -> bool:
        return not self.parts


_CONJ = frozenset({"and", "or", "&"})
_VERSUS = frozenset({"vs", "vs.", "versus", "v."})
_AUX = {
    "is": "are", "was": "were", "does": "do", "has": "have",
}  # fmt: skip
_PLURAL_AUX = {plural: single for single, plural in _AUX.items()}
_WH = frozenset({"what", "which", "who", "whom", "whose", "how", "when", "where", "why", "whether"})
_AUXILIARIES = frozenset({
    "is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will",
    "would", "should", "may", "might", "must", "shall",
})  # fmt: skip
_PREPOSITIONS = frozenset({
    "of", "for", "in", "on", "at", "by", "from", "to", "with", "about", "during", "over", "under",
    "across", "within", "into", "than", "per", "between", "among", "since", "until", "after",
    "before", "through", "without", "against", "via", "as", "like", "when", "if",
})  # fmt: skip
_DETERMINERS = frozenset({
    "the", "a", "an", "its", "their", "his", "her", "our", "your", "my", "any", "some", "all",
    "each", "every", "no", "these", "those", "this", "that", "many", "much", "few",
})  # fmt: skip
# verbs that set one thing against another: a conjunct ends before them ("A and B align with")
_RELATING = frozenset({
    "align", "aligns", "relate", "relates", "correlate", "correlates", "correspond",
    "corresponds", "compare", "compares", "differ", "differs", "affect", "affects",
})  # fmt: skip
_PRONOUNS = frozenset({"i", "you", "we", "they", "it", "he", "she", "one"})
# what refers back to a conjunct: "install nginx and configure it" has no whole second part
_ANAPHORS = frozenset({"it", "them"})
# a verb's particle: "back up", "set up" are one verb, with or without an object
_PARTICLES = frozenset({"up", "down", "out", "off", "away", "back"})
# how words that modify a noun end ("domestic", "annual", "deferred"); a bare noun seldom does
_MODIFIER_ENDINGS = (
    "al", "ic", "ive", "ous", "ary", "ful", "less", "able", "ible", "ern", "ior",
)  # fmt: skip
# endings two conjuncts share when they are words of one kind ("upper and lower")
_ALIKE_ENDINGS = frozenset({"er", "al", "ic", "ed", "ly"})
# what comes before a list that only illustrates ("segments like A, B and others")
_EXAMPLES = frozenset({"like", "including", "include", "includes", "e.g", "e.g.", "example",
                       "especially", "particularly", "notably", "namely", "such"})  # fmt: skip
_OPEN_ENDED = frozenset({"others", "other", "more", "etc", "so", "similar"})
# a clause's opening after "and": "..., and if so, what ...", "... and how might it ..."
_CLAUSE = _WH | _AUXILIARIES | frozenset({"if", "so", "then", "also", "therefore", "thus"})
_COMPARE = frozenset({"compare", "comparing", "contrast", "contrasting"})
_PERIOD_NOUNS = {
    "quarters": "quarter", "years": "year", "months": "month", "periods": "period",
    "weeks": "week", "halves": "half",
}  # fmt: skip
_OPENERS = _WH | _AUXILIARIES | frozenset({
    "in", "for", "from", "at", "on", "during", "compare", "describe", "explain", "list", "give",
    "show", "tell", "summarize", "outline", "identify", "please", "according",
})  # fmt: skip
_IRREGULAR = {
    "better": "good",
    "worse": "bad",
    "further": "far",
    "farther": "far",
    "less": "little",
}
MAX_SIDE = 5  # words of a compared side: longer ones describe, and their relation is one question
_YEAR = re.compile(r"\b(19|20)\d{2}\b")


def _whole(question: str, reason: str) -> Decomposition:
    return Decomposition(question=question, reason=reason)


def _low(tok: Token) -> str:
    return tok.lower()


def _name_word(tok: Token) -> bool:
    return capitalized(tok) and _low(tok) not in _PRONOUNS | _WH | _AUXILIARIES


def _code(tok: Token) -> bool:
    """A literal (an option, a setting, a file): written with what no English word has."""
    return bool(re.search(r"[-_./=`$@#:0-9]", tok)) and not is_period(tok) and len(tok) > 1


def _plural(word: str) -> bool:
    low = word.lower().strip("`'\"")
    return len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is", "'s", "’s"))


def _singular(word: str) -> str:
    if word.lower() in _PERIOD_NOUNS:
        return _PERIOD_NOUNS[word.lower()]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if _plural(word) else word


def _participle(tok: Token) -> bool:
    return len(tok) > 4 and tok.lower().endswith("ed")


def _stops(tok: Token) -> bool:
    """Where a conjunct ends: a preposition, an auxiliary, a question word, punctuation."""
    low = _low(tok)
    return (
        tok in {",", ";"}
        or low in _PREPOSITIONS
        or low in _AUXILIARIES
        or low in _WH
        or low in _CONJ
        or low in _VERSUS
        or low in _PRONOUNS
        or low in _COMPARE
        or low in _RELATING
    )


def _left(tokens: list[Token], k: int, owned: bool = False) -> list[Token]:
    """The conjunct ending at ``k``: back to a stop word, or through a determiner; a period is
    a conjunct of its own. ``owned``: the possessor belongs to the conjunct (a comparison's
    "Acme's net income with Globex's")."""
    if k >= 0 and is_period(tokens[k]):
        return [tokens[k]]
    out: list[Token] = []
    while k >= 0 and not _stops(tokens[k]):
        if out and possessive(tokens[k]) and not owned:
            break  # "Acme's [revenue and income]": the possessor is shared
        out.insert(0, tokens[k])
        if _low(tokens[k]) in _DETERMINERS:
            break
        k -= 1
    return out


def _right(tokens: list[Token], j: int, owned: bool = False) -> list[Token]:
    if j < len(tokens) and is_period(tokens[j]):
        return [tokens[j]]
    out: list[Token] = []
    while j < len(tokens) and not _stops(tokens[j]):
        if out and _participle(tokens[j]):
            break  # "risks disclosed in": a participle starts what is said of both
        out.append(tokens[j])
        if possessive(tokens[j]) and not owned:
            break
        j += 1
    return out


def _alike(a: Token, b: Token) -> bool:
    """Two words of one kind by their form: the same word, or the same ending ("marketing and
    advertising", "input and output", "upper and lower")."""
    a, b = _low(a), _low(b)
    if a == b or (len(a) > 3 and len(b) > 3 and a[-3:] == b[-3:]):
        return True
    return len(a) > 3 and len(b) > 3 and a[-2:] == b[-2:] and a[-2:] in _ALIKE_ENDINGS


def _modifier(word: Token) -> bool:
    """A word shaped as what modifies a noun: "domestic", "annual", "deferred"."""
    low = _low(word)
    if len(low) > 5 and low.endswith("ed") and not low.endswith("eed"):
        return True
    return len(low) > 4 and low.endswith(_MODIFIER_ENDINGS)


def _adverb(word: Token) -> bool:
    low = _low(word)
    return low.endswith("ly") and len(low) > 6


def _verb_phrases(tokens: list[Token], start: int) -> bool:
    """The conjuncts open with verbs: after a subject pronoun ("how do I [install ...]") or a
    question word's "to" ("how to [compress ...]")."""
    before = _low(tokens[start - 1]) if start > 0 else ""
    if before == "to":
        return start > 1 and _low(tokens[start - 2]) in _WH
    return before in _PRONOUNS


def _own_words(
    tokens: list[Token], start: int, left: list[Token], right: list[Token]
) -> tuple[list[Token], str]:
    """Which words after "and" are the right conjunct's own, the rest being said of both, and a
    doubt when that cannot be told. The conjuncts are alike in shape: when the right one is
    longer, its extra words are an object or head noun the left one lacks and shares ("install
    and configure nginx", "marketing and advertising expenses"), unless the left one is whole
    by itself ("revenues and operating expenses", "configure logging and rotate the log
    files"); a bare noun beside a longer phrase may be either ("debt and interest expenses")."""
    after = [_low(t) for t in tokens[start + len(left) :]]
    if _ANAPHORS & set(after):
        return right, "a part refers back to another ('it'): not each a whole question"
    while len(right) > 1 and _adverb(right[-1]):
        right = right[:-1]  # "files and directories recursively": said of both
    n = len(left)
    if _verb_phrases(tokens, start):
        if len(right) > 1 and (n == 1 or _low(left[-1]) in _PARTICLES):
            # "install and configure nginx": the object after the last verb is each verb's
            return right[: 2 if len(right) > 2 and _low(right[1]) in _PARTICLES else 1], ""
        return right, ""  # "configure logging and rotate the log files": each its own
    if {_low(t) for t in right[1:]} & _DETERMINERS:
        # "which commands open and close a fold": a verb and its object, but where the left
        # verb starts (after which subject) is not told by its words
        return right, "its 'and' may join two verbs whose subject is not told apart"
    if len(right) <= n or all(_code(t) for t in left):
        return right[: n + 1], ""  # "the -f and -x options": the literals' head, below
    if _alike(left[-1], right[n - 1]) or _modifier(left[-1]):
        return right[:n], ""  # "marketing and advertising expenses": the head is shared
    k = start - 1
    while k > 0 and _low(tokens[k]) in _DETERMINERS:
        k -= 1
    shared = " ".join(right[n : n + 2])
    if _low(tokens[k]) != "of" and _plural(left[-1]):
        return right[: n + 1], ""  # "revenues and operating expenses": a noun of its own
    words = " ".join([*left, "and", *right[: n + 2]])
    return right, f"'{words}' may share '{shared}' or not: not told apart without a model"


@dataclass(frozen=True)
class _Coordination:
    start: int
    end: int
    items: tuple[tuple[Token, ...], ...]
    head: str  # a plural head noun the conjuncts share ("the -f and -x options"), singular
    doubt: str = ""
    heads: str = ""  # that noun as the question says it, for a part that keeps two conjuncts  # why the words after the conjunction may be shared, or not: keep whole


def _coordination(tokens: list[Token], i: int, owned: bool) -> _Coordination | None:
    k = i - 1 - (tokens[i - 1] == "," if i > 0 else 0)
    left = _left(tokens, k, owned) if k >= 0 else []
    right = _right(tokens, i + 1, owned)
    if not left or not right:
        return None
    start = k - len(left) + 1
    if _low(left[0]) in _DETERMINERS and len(left) > 1 and _low(right[0]) not in _DETERMINERS:
        left, start = left[1:], start + 1  # "the terms and conditions": the article is shared
    if _low(right[0]) in _DETERMINERS and _low(left[0]) not in _DETERMINERS and not owned:
        return None  # "Microsoft's business and the evolution of": phrases of other shapes
    lead = [t for t in left if _low(t) not in _DETERMINERS]
    doubt = ""
    if lead and all(capitalized(t) for t in lead) and capitalized(right[0]):
        cut = next((n for n, t in enumerate(right) if not capitalized(t)), len(right))
        right = right[:cut]  # "Procter and Gamble report": the name ends where capitals do
    elif not owned:
        # "any major new acquisitions or sell-offs": the words before the nouns are shared,
        # as the words after them are ("market risk and financial instruments align")
        if len(left) > len(right) + 1:
            start += len(left) - len(right) - 1
            left = left[-(len(right) + 1) :]
        if _low(right[0]) in _DETERMINERS and _low(left[0]) in _DETERMINERS:
            right = right[: len(left)]  # "the -r flag or the -R flag copy": alike, word for word
        else:
            right, doubt = _own_words(tokens, start, left, right)
    end = i + 1 + len(right)
    head = heads = ""
    if len(right) > 1 and _plural(right[-1]) and lead and all(_code(t) for t in lead):
        # "the -f and -x options": the literals are modifiers of one head noun
        head, heads = _singular(right[-1]), right[-1]
        right = right[:-1]
    items = [tuple(left)]
    while start >= 2 and tokens[start - 1] == ",":
        more = _left(tokens, start - 2, owned)
        if not more:
            break
        items.insert(0, tuple(more))
        start -= 1 + len(more)
    first, rest = items[0], [*items[1:], right]
    alone = len(first) > 1 and not any(_low(item[0]) in _DETERMINERS for item in rest)
    if len(items) > 1 and alone and _low(first[0]) in _DETERMINERS and not owned:
        items[0], start = first[1:], start + 1  # "the -r, -R and -v options": shared
    items.append(tuple(right))
    return _Coordination(start, end, tuple(items), head, doubt, heads)


def _why_whole(tokens: list[Token], i: int, c: _Coordination, licensed: bool) -> str:
    """Why the coordination at ``i`` is not two things, or "" when it is."""
    k = c.start - 1
    while k > 0 and _low(tokens[k]) in _DETERMINERS:
        k -= 1  # "particularly any new or escalating risks"
    before = _low(tokens[k]) if k >= 0 else ""
    words = [t for item in c.items for t in item]
    if (_low(tokens[i - 1]), _low(tokens[i + 1])) in COMPOUND_PAIRS:
        return f"'{tokens[i - 1]} {tokens[i]} {tokens[i + 1]}' is one name"
    if before in _EXAMPLES or any(_low(item[-1]) in _OPEN_ENDED for item in c.items):
        return "its list gives examples of one thing"
    if c.doubt:
        return c.doubt
    if all(is_period(t) for item in c.items for t in item):
        return ""
    names = all(capitalized(t) or _code(t) for t in words)
    if names and not licensed and not any(possessive(item[-1]) for item in c.items[:-1]):
        plural_verb = c.start > 0 and before in {"do", "are", "were", "have", "both"}
        if not plural_verb and not any(_code(t) for t in words):
            return f"'{' '.join(words[:6])}' may be one name"
    return ""


def _fill(items: tuple[tuple[Token, ...], ...]) -> list[list[Token]]:
    """A conjunct naming only its owner ("Globex's") borrows its sibling's noun."""
    donors = [list(item[1:]) for item in items if possessive(item[0]) and len(item) > 1]
    noun = max(donors, key=len) if donors else []
    return [
        [*item, *noun] if len(item) == 1 and possessive(item[0]) and noun else list(item)
        for item in items
    ]


def _inherit(periods: list[str], items: list[list[Token]]) -> list[str]:
    """A bare year after a dated period takes its date ("March 31, 2024 and 2023")."""
    first = items[0][0] if len(items[0]) == 1 and is_period(items[0][0]) else ""
    dated = periods[int(first[1:])] if first else ""
    out = list(periods)
    for item in items[1:]:
        if dated and len(item) == 1 and is_period(item[0]):
            text = periods[int(item[0][1:])]
            if _YEAR.fullmatch(text) and _YEAR.search(dated) and not _YEAR.fullmatch(dated):
                out[int(item[0][1:])] = _YEAR.sub(text, dated, count=1)
    # "Q1 and Q2 2023": a period without a year takes the year its sibling states
    last = items[-1][0] if len(items[-1]) == 1 and is_period(items[-1][0]) else ""
    year = _YEAR.search(periods[int(last[1:])]) if last else None
    for item in items[:-1]:
        if year and len(item) == 1 and is_period(item[0]):
            n = int(item[0][1:])
            out[n] = out[n] if _YEAR.search(out[n]) else f"{out[n]} {year.group(0)}"
    return out


def _agree(tokens: list[Token], at: int, many: bool = False) -> list[Token]:
    """The verb before a coordinated subject agrees with the one conjunct left in its place:
    with the subject's head, its last word before a preposition ("the -f option of"); with
    ``many`` conjuncts left, it is plural."""
    k = at - 1
    while k > 0 and (_low(tokens[k]) in _DETERMINERS or _name_word(tokens[k])):
        k -= 1  # back over the owner the conjuncts share ("were ACME Corp [sales and dividend]")
    verb = _low(tokens[k]) if k >= 0 else ""
    if verb not in _PLURAL_AUX and verb not in _AUX:
        return tokens
    head = ""
    for tok in tokens[at:]:
        if _stops(tok) or is_period(tok) or (head and _participle(tok)):
            break  # "are the upper and lower bounds computed": the head is "bounds"
        head = tok
    if not head or (many or _plural(head)) == (verb in _PLURAL_AUX):
        return tokens
    agreed = _AUX[verb] if verb in _AUX else _PLURAL_AUX[verb]
    word = agreed.capitalize() if tokens[k][0].isupper() else agreed
    return [*tokens[:k], word, *tokens[k + 1 :]]


def _grouped(items: list[list[Token]], limit: int) -> list[list[Token]]:
    """More conjuncts than the plan has parts for, as ``limit`` runs of neighbours, each joined
    as a list again ("A, B and C" in three parts of two: "A and B", "C"): every thing asked
    about is researched, some two to a part."""
    if len(items) <= limit:
        return items
    size, extra = divmod(len(items), limit)
    out, at = [], 0
    for n in range(limit):
        run = items[at : at + size + (n < extra)]
        at += len(run)
        joined: list[Token] = []
        for k, item in enumerate(run):
            if k:
                joined.append("and" if k == len(run) - 1 else ",")
            joined += item
        out.append(joined)
    return out


def _parts(tokens: list[Token], c: _Coordination, limit: int = 0) -> list[list[Token]]:
    out = []
    filled = _fill(c.items)
    for item in _grouped(filled, limit) if limit else filled:
        many = "and" in item and "and" not in [t for one in filled for t in one]
        head = c.heads if many else c.head
        conjunct = [*item, head] if head else item
        before = list(tokens[: c.start])
        if all(is_period(t) for t in item) and before:
            # "for the quarters ended": one period, one quarter
            for n in range(len(before) - 1, max(-1, len(before) - 4), -1):
                if _low(before[n]) in _PERIOD_NOUNS:
                    before[n] = _PERIOD_NOUNS[_low(before[n])]
                    break
        joined = [*before, *conjunct, *tokens[c.end :]]
        out.append(_agree(joined, c.start, many))
    return out


def _end(question: str) -> str:
    return "." if question.rstrip().endswith(".") and not question.rstrip().endswith("?") else "?"


def _well_formed(part: str, whole: str) -> bool:
    words = part.rstrip("?.").split()
    if len(words) < 2 or part.strip() == whole.strip():
        return False
    last = words[-1].lower()
    return (
        words[0].lower() in _OPENERS
        and last not in _PREPOSITIONS | _DETERMINERS | _CONJ
        and words[0][0].isupper()
    )


def _split_on(
    question: str,
    tokens: list[Token],
    periods: list[str],
    licensed: bool,
    depth: int,
    limit: int = 0,
) -> tuple[list[str], set[str], str]:
    """Parts (each split again, to ``depth``), what was split, and why not when nothing was;
    with a ``limit``, the conjuncts are grouped into at most that many parts."""
    reason = "it names one thing: there is no 'and', 'or' or comparison to split"
    for i, tok in enumerate(tokens):
        if _low(tok) not in _CONJ | _VERSUS or i == 0 or i == len(tokens) - 1:
            continue
        if _low(tokens[i + 1]) in _CLAUSE or _low(tokens[i - 1]) in _WH:
            reason = "its 'and' joins two clauses, which are answered together"
            continue
        if {"between", "among"} & {_low(t) for t in tokens[:i]} and not licensed:
            reason = "it asks about one relation between two things"
            continue
        c = _coordination(tokens, i, licensed)
        if c is None:
            reason = "its 'and' joins phrases of different shapes: not each a whole question"
            continue
        why = _why_whole(tokens, i, c, licensed or _low(tok) in _VERSUS)
        if why:
            reason = why
            continue
        kind = (
            "periods"
            if all(is_period(t) for item in c.items for t in item)
            else "entities"
            if all(capitalized(item[0]) or possessive(item[0]) for item in c.items)
            else "items"
        )
        texts = (
            _inherit(periods, [list(item) for item in c.items]) if kind == "periods" else periods
        )
        out: list[str] = []
        kinds = {kind}
        for part in _parts(tokens, c, limit):
            # a comparison's sides are split once; within each, the rules of any question
            more, also, _ = (
                _split_on(question, part, texts, False, depth - 1) if depth > 1 else ([], set(), "")
            )
            if more:
                out += more
                kinds |= also
            else:
                out.append(render(part, texts).rstrip(" ?.") + _end(question))
        return out, kinds, ""
    return [], set(), reason


_WHICH = re.compile(
    r"^(?:which|what|who)(?: one)? (is|are|was|were) (?:the )?(more \w+|less \w+|\w+)"
    r"(?P<tail> [^,:]*)?[,:] (?:between )?(?P<a>.+?),? (?:or|and|vs\.?|versus) (?P<b>.+?)[?.]*$",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    r"\b(?:the |a |any )?(?:main |key |major )?(?:differences?|distinctions?) between "
    r"(?P<a>.+?) and (?P<b>.+?)(?P<tail> (?:for|in|when|on|with regard to|in terms of) .+?)?[?.]*$",
    re.IGNORECASE,
)
_HOW_THEY_COMPARE = re.compile(
    r"^how (?:does|do|did) (?P<rest>.+? and .+?) compare(?P<tail> (?:in|for|during|over) .+?)?[?.]*$",
    re.IGNORECASE,
)
_COMPARE_LEAD = re.compile(
    r"^(?:please )?(?:compare|contrast)\s+(?P<rest>.+?)[?.]*$", re.IGNORECASE
)
_HOW_COMPARE = re.compile(
    r"^how (?:does|do|did) (?P<a>.+?) (?:compare|stack up) (?:with|to|against) (?P<b>.+?)[?.]*$",
    re.IGNORECASE,
)


def _base(comparative: str) -> str:
    """ "faster" -> "fast", "more secure" -> "secure": the comparison's measure."""
    low = comparative.lower()
    if low.startswith(("more ", "less ")):
        return low.split(" ", 1)[1]
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ier") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith("er") and len(low) > 4:
        stem = low[:-2]
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsaeiou":
            return stem[:-1]  # bigger, hotter
        if re.search(r"[^aeiou][aeiou][^aeiouwxy]$", stem) or re.search(
            r"(?:rg|ns|rs|[^aeiou]l|v|c)$", stem
        ):
            return stem + "e"  # safer, larger, simpler, denser
        return stem
    return ""


def _short(side: str) -> bool:
    return 0 < len(side.split()) <= MAX_SIDE and not set(side.lower().split()) & (_WH | {"and"})


def _comparison(question: str, depth: int = 2, limit: int = 0) -> Decomposition | None:
    """A comparison's sides as questions of their own, or why it stays whole; None when the
    question compares nothing."""
    text = " ".join(question.split())
    which = _WHICH.match(text)
    if which:
        verb, measure = which.group(1).lower(), _base(which.group(2))
        a, b, tail = which.group("a"), which.group("b"), which.group("tail") or ""
        if measure and _short(a) and _short(b):
            is_ = "is" if verb in {"is", "are"} else "was"
            parts = tuple(f"How {measure} {is_} {side}{tail}?" for side in (a, b))
            return Decomposition(question, parts, "comparison")
        return None
    between = _BETWEEN.search(text)
    if between:
        a, b, tail = between.group("a"), between.group("b"), between.group("tail") or ""
        if not (_short(a) and _short(b)):
            return _whole(question, "it compares two descriptions: one relation between them")
        parts = tuple(
            f"What {'are' if _plural(side.split()[-1]) else 'is'} {side}{tail}?" for side in (a, b)
        )
        return Decomposition(question, parts, "comparison")
    how = _HOW_COMPARE.match(text)
    lead = _COMPARE_LEAD.match(text)
    they = _HOW_THEY_COMPARE.match(text)
    if they and not how:  # "How did A's and B's revenue compare in 2023?"
        rest = they.group("rest") + (they.group("tail") or "")
    elif how:
        a, b = how.group("a"), how.group("b")
        if not (_short(a) and len(b.split()) <= MAX_SIDE + 3):
            return _whole(question, "it compares two descriptions: one relation between them")
        rest = f"{a} and {b}"
    elif lead:
        rest = lead.group("rest")
        for word in (" with ", " to ", " against ", " versus ", " vs. ", " vs "):
            rest = rest.replace(word, " and ", 1) if " and " not in rest else rest
    else:
        return None
    owner = re.match(r"(?:the \w+ of )?([A-Z][\w.&-]*(?:'s|’s))", rest) if how else None
    if owner:  # "Acme's expenses against its earnings": its earnings are Acme's
        rest = re.sub(r"\b(?:its|their)\b", owner.group(1), rest)
    past = text.lower().startswith("how did")
    verb = "was" if _YEAR.search(text) or past or re.search(r"\bQ[1-4]\b", text) else "is"
    tokens, periods = tokenize(f"What {verb} {rest}?")
    if not any(_low(t) in _CONJ for t in tokens):
        return _whole(question, "it compares one thing with nothing named beside it")
    found, _, reason = _split_on(question, tokens, periods, True, depth, limit)
    if not found:
        return _whole(question, reason)
    # each part is about one side: "in their filings" is in its own
    asked = [re.sub(r"\btheir\b", "its", p[:-1] + "?" if p.endswith(".") else p) for p in found]
    return Decomposition(question, tuple(asked), "comparison")


_ORDER: tuple[Split, ...] = ("comparison", "entities", "periods", "items")


def _decompose(text: str, depth: int, limit: int) -> Decomposition:
    found = _comparison(text, min(depth, 2), limit)
    if found is None:
        tokens, periods = tokenize(text)
        split, kinds, reason = _split_on(text, tokens, periods, False, depth, limit)
        if not split and _COMPARE & {_low(t) for t in tokens}:
            reason = "it compares two descriptions: one relation between them"
        if not split:
            return _whole(text, reason)
        found = Decomposition(text, tuple(split), next(k for k in _ORDER if k in kinds))
    if found.whole:
        return found
    parts = tuple(dict.fromkeys(found.parts))
    if not all(_well_formed(p, text) for p in parts) or len(parts) < 2:
        return _whole(text, "a part would not read as a whole question")
    return Decomposition(text, parts, found.split)


def decompose(question: str, max_parts: int) -> Decomposition:
    """``question`` as up to ``max_parts`` whole questions, or whole with the reason. When it
    has more parts than that, it is split on its outer coordination alone ("A's and B's
    revenues in 2022 and 2023" by company), and a longer list is grouped into that many parts."""
    text = " ".join(question.split())
    if not text:
        return _whole(question, "the question is empty")
    limit = max(1, max_parts)
    found = _decompose(text, 3, 0)
    if len(found.parts) > limit:
        found = _decompose(text, 1, 0)
    if len(found.parts) > limit:
        found = _decompose(text, 1, limit) if limit > 1 else found
    if len(found.parts) > limit:
        n = len(found.parts)
        return _whole(text, f"it has {n} parts, more than the plan's {max_parts}")
    return found


__all__ = ["Decomposition", "Split", "decompose"]
