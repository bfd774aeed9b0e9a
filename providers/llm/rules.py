"""Search queries for the model-free provider, by plain English grammar (its plans are
``decomposition``'s).

A question is tokenized with its period expressions ("quarter ended July 1, 2023", "Q3 2023",
"2022") frozen as single tokens so they survive verbatim into every query. Coordinations
("A and B", "A, B and C", "A vs B", "compare A with B") are expanded into one variant per conjunct;
a conjunct that names only an entity borrows the metric of its sibling ("Apple's net income vs
Microsoft's" → "Microsoft's net income"). Expansion recurses, so entities × periods multiply.
"""

from __future__ import annotations

import re

from deepresearch.text.periods import PERIOD_RE
from deepresearch.text.question import analyze
from deepresearch.text.question_words import COMPOUND_PAIRS, expand_abbreviations
from deepresearch.text.terms import FORM_NUMBER, FUNCTION_WORDS, REQUEST_WORDS, strip_possessive

_CONJ = {"and", "or", "&", "vs", "vs.", "versus", "v.", "v"}
_COMPARE_CONJ = {"with", "to", "against"}
_COMPARE_WORDS = {
    "compare",
    "compared",
    "comparing",
    "comparison",
    "contrast",
    "versus",
    "vs",
    "vs.",
}
_BOUNDARY = {
    "the", "a", "an", "of", "for", "in", "on", "at", "by", "from", "during", "between", "over",
    "across", "within", "than", "what", "which", "who", "whom", "how", "was", "were", "is", "are",
    "be", "been", "did", "does", "do", "has", "have", "had", "much", "many", "about", "per",
    "into", "difference", "differences", "compare", "compared", "comparing", "contrast", "change",
    "changed", "grow", "grew", "increase", "increased", "decrease", "decreased", "differ",
    "evolve", "evolved", "perform", "performed", "when", "where", "why", "that", "this",
}  # fmt: skip
# every function word goes ("If so, what ...": a capitalized "If" is no name to search for),
# but "most" ("most recent" asks for the latest filing)
_QUERY_STOP = _BOUNDARY | (FUNCTION_WORDS - {"most"}) | {
    "and", "or", "vs", "vs.", "versus", "with", "to", "against", "please", "tell", "me", "can",
    "could", "would", "you", "give", "show", "find", "list", "describe", "explain", "its",
    "their", "there", "these", "those", "it", "as", "i", "we", "our", "&", "any", "some",
    "both", "respectively", "each", "also", "so", "far", "far?", "whose", "should", "will",
    # words about the documents, not their topic: every page of boilerplate (certifications,
    # exhibit lists) says "this quarterly report", so they pull searches toward it
    "report", "reports", "reported", "reporting", "quarterly", "filing", "filings", "filed",
    "disclosed", "document", "documents", "stated",
}  # fmt: skip
Token = str  # a word, a punctuation mark "," / ";", or a period placeholder "\x00<i>"


def is_period(tok: Token) -> bool:
    return tok.startswith("\x00")


def possessive(tok: Token) -> bool:
    return tok.lower().endswith(("'s", "’s", "s'", "s’")) and len(tok) > 2


def capitalized(tok: Token) -> bool:
    return bool(tok) and not is_period(tok) and tok[0].isupper()


def tokenize(text: str) -> tuple[list[Token], list[str]]:
    """Word tokens with periods frozen as placeholders; returns (tokens, period texts)."""
    periods: list[str] = []

    def freeze(m: re.Match[str]) -> str:
        periods.append(m.group(0))
        return f" \x00{len(periods) - 1} "

    frozen = PERIOD_RE.sub(freeze, text)
    tokens: list[Token] = []
    for raw in re.findall(r"\x00\d+|[^\s,;:?!()\"“”\[\]]+|[,;]", frozen):
        tok = raw
        abbreviation = re.fullmatch(r"(?:[A-Za-z]\.)+", tok) or tok.lower() == "vs."
        if not is_period(tok) and len(tok) > 1 and tok.endswith(".") and not abbreviation:
            tok = tok[:-1]
        if tok:
            tokens.append(tok)
    return tokens, periods


# words that open a clause: a conjunct ends before them ("10-Q, and if so, what was ...",
# "particularly any new or escalating risks")
_CLAUSE = frozenset({
    "if", "so", "particularly", "especially", "including", "whether", "then", "describe",
    "explain", "summarize", "analyze", "discuss", "identify", "list", "assess", "evaluate",
    "as", "align", "aligns", "correlate", "correlates", "relate", "relates", "correspond",
    "corresponds",
})  # fmt: skip


def _stops_left(tok: Token, comparative: bool) -> bool:
    low = tok.lower()
    return (
        low in _BOUNDARY
        or low in _CLAUSE
        or low in _CONJ
        or tok in {",", ";"}
        or (comparative and low in _COMPARE_CONJ)
    )


def _scan_left(tokens: list[Token], k: int, comparative: bool) -> list[Token]:
    out: list[Token] = []
    while k >= 0 and not _stops_left(tokens[k], comparative):
        if out and possessive(tokens[k]) and not comparative:
            break  # "Apple's [revenue and income]": the possessor is shared context
        out.insert(0, tokens[k])
        k -= 1
    return out


def _scan_right(tokens: list[Token], j: int, comparative: bool, limit: int) -> list[Token]:
    out: list[Token] = []
    while j < len(tokens) and len(out) < limit and not _stops_left(tokens[j], comparative):
        out.append(tokens[j])
        if possessive(tokens[j]):
            break
        j += 1
    return out


def find_coordination(tokens: list[Token]) -> tuple[int, int, list[list[Token]]] | None:
    """The first coordination as (start, end, conjuncts) over ``tokens[start:end]``."""
    comparative = any(t.lower() in _COMPARE_WORDS for t in tokens)
    for i, tok in enumerate(tokens):
        low = tok.lower()
        if low not in _CONJ and not (comparative and low in _COMPARE_CONJ):
            continue
        if (
            0 < i < len(tokens) - 1
            and (tokens[i - 1].lower(), tokens[i + 1].lower()) in COMPOUND_PAIRS
        ):
            continue
        k = i - 1
        if k >= 0 and tokens[k] == ",":
            k -= 1
        if k >= 0 and tokens[k].lower() in _COMPARE_WORDS:
            k -= 1  # "revenue compared to ..." / "compare X with Y"
        left = _scan_left(tokens, k, comparative)
        if not left:
            continue
        limit = 6 if comparative else max(len(left), 1) + 1
        right = _scan_right(tokens, i + 1, comparative, limit)
        if not right:
            continue
        if not comparative and len(left) > len(right) + 1:
            # "Has Microsoft announced any major new company acquisitions or sell-offs": the
            # nouns are coordinated; the words before them are shared, as on the right
            left = left[-(len(right) + 1) :]
        if all(capitalized(t) for t in left) and capitalized(right[0]):
            cut = next((n for n, t in enumerate(right) if not capitalized(t)), len(right))
            right = right[:cut]  # "Apple and Microsoft revenue": the head noun is shared
        items = [left]
        start = k - len(left) + 1
        while start >= 2 and tokens[start - 1] == ",":
            more = _scan_left(tokens, start - 2, comparative)
            if not more:
                break
            items.insert(0, more)
            start = start - 1 - len(more)
        items.append(right)
        return start, i + 1 + len(right), items
    return None


def _entity_split(conj: list[Token]) -> tuple[list[Token], list[Token]]:
    n = 0
    while n < len(conj) and capitalized(conj[n]):
        n += 1
        if possessive(conj[n - 1]):
            break
    return conj[:n], conj[n:]


def _fill_metrics(items: list[list[Token]]) -> list[list[Token]]:
    """Entity-only conjuncts borrow the metric of the longest sibling that has one."""
    splits = [_entity_split(c) for c in items]
    donors = [rest for ent, rest in splits if ent and rest]
    if not donors:
        return items
    metric = max(donors, key=len)
    return [ent + metric if ent and not rest else ent + rest for ent, rest in splits]


def expand(tokens: list[Token], depth: int = 3) -> list[list[Token]]:
    """Every variant of ``tokens`` with each coordination resolved to one conjunct."""
    found = find_coordination(tokens) if depth > 0 else None
    if found is None:
        return [tokens]
    start, end, items = found
    out: list[list[Token]] = []
    for conj in _fill_metrics(items):
        out.extend(expand([*tokens[:start], *conj, *tokens[end:]], depth - 1))
    return out


def render(tokens: list[Token], periods: list[str]) -> str:
    words = [periods[int(t[1:])] if is_period(t) else t for t in tokens]
    return re.sub(r"\s+([,;])", r"\1", " ".join(words)).strip(" ,;")


# what may come before a request verb ("Please list", "can you find", "and describe")
_REQUEST_OPENERS = frozenset({
    "please", "and", "then", "also", "to", "you", "me", "i", "we", "can", "could", "would", "will",
})  # fmt: skip
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_WORDS = re.compile(r"[\w.'’-]+|[,;:]")


def subject_words(question: str) -> frozenset[str]:
    """Words the question treats as names (lower-cased), kept in its search queries even when
    they are request verbs: written as code (`` `find` ``) or quoted ("list"), or a request verb
    where no request can be: not at a sentence's start nor after "please", "can you", "and"
    ("how do I use find", "the Find utility"). Only request verbs change: the question's other
    function words stay out of queries."""
    out: set[str] = set()
    for match in (*_CODE_SPAN.finditer(question), *_QUOTED.finditer(question)):
        text = next(g for g in match.groups() if g)
        out.update(w.lower() for w in _WORDS.findall(text))
    for sentence in _SENTENCE.split(question):
        words = _WORDS.findall(sentence)
        for k, word in enumerate(words):
            if word.lower() not in REQUEST_WORDS or k == 0:
                continue
            if words[k - 1].lower() not in _REQUEST_OPENERS | {",", ";", ":"}:
                out.add(word.lower())
    return frozenset(out)


def keywords(tokens: list[Token], periods: list[str], keep: frozenset[str] = frozenset()) -> str:
    """A search query: content words (possessives stripped) and periods verbatim; the words of
    ``keep`` (the question's ``subject_words``) stay even when they are stop words."""
    kept = [
        t if is_period(t) else strip_possessive(t)
        for t in tokens
        if t not in {",", ";"}
        and (
            is_period(t)
            or t.lower().strip("'’") in keep
            or (t.lower() not in _QUERY_STOP and not FORM_NUMBER.fullmatch(t))
        )
    ]
    return render([t for t in kept if t], periods)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def dedupe(texts: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for t in texts:
        key = _norm(t)
        if key and key not in seen:
            seen.add(key)
            out.append(t)
    return out


def _named(query: str, entities: tuple[str, ...]) -> str:
    """``query`` naming the question's subject: a resolved coordination can lose it ("Apple's
    acquisitions or divestitures" -> "divestitures"), and a query without the name finds every
    company's divestitures. A variant naming any of the entities (one side of "A and B") is
    left alone."""
    if not entities or any(e.lower() in query.lower() for e in entities):
        return query
    return f"{entities[0]} {query}"


def search_queries(question: str, max_queries: int, notes: tuple[str, ...] = ()) -> list[str]:
    """The cleaned question first, then one query per resolved coordination, then the question's
    entities, metrics and periods alone, then steering."""
    tokens, periods = tokenize(expand_abbreviations(question))
    q = analyze(question)
    subject = subject_words(question)
    # what the question is about, without the words that frame it ("trends", "reported periods")
    focused = " ".join([*q.entities, *q.metrics, *(p.text for p in q.periods)])
    candidates = [keywords(tokens, periods, subject)]
    candidates += [_named(keywords(v, periods, subject), q.entities) for v in expand(tokens)]
    candidates += [focused] if q.entities and q.metrics else []
    if notes:
        note_tokens, note_periods = tokenize(notes[-1])
        steer = keywords(note_tokens, note_periods).split()[:6]
        if steer:
            candidates.append(f"{candidates[0]} {' '.join(steer)}")
    out = dedupe(candidates)
    return out[: max(1, max_queries)] if out else [question.strip()]


__all__ = [
    "capitalized",
    "dedupe",
    "expand",
    "find_coordination",
    "is_period",
    "keywords",
    "possessive",
    "search_queries",
    "tokenize",
]
