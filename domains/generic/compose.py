"""The generic Answer: the answer-bearing statements of the best findings, each with what it
is about.

Documentation states its answers in entries as often as in sentences: an option's flags then
its description ("-i[SUFFIX], --in-place[=SUFFIX] edit files in place"), a setting with its own
default ("-t, --time int Seconds to wait for stop before killing it (default 10)"). Extracted
text runs a page's entries together, and none ends with a full stop, so a finding is cut into
statements: its sentences, and each sentence at the flags that open an entry. A statement is
scored for the question over all statements of the findings (BM25, ``Scorer``) on the
question's words, the subject kept (a command called like a verb: "the -L option of find"),
more when it opens with a flag the question names or holds an item it quotes (or the
cross-reference after it does: "... when halfway typing it. See 'incsearch'."), when its
document's title is the question's subject, when it states the default a question asks for,
a cause (why), a contrast (comparison) or a way (a command or an option's entry, for a how-to
or which-option question); less for a command line, a synopsis, a trail of headings, a
statement that only echoes the question's words, or one that illustrates ("For example, ...")
when the question asks what or why, not how. The best is quoted with its entry's head, or
a sentence with its paragraph (``passage``), for a how-to on to the way the paragraph shows
when the sentence itself shows none; the next only when nearly as good, or, when the
question names several flags or items (a comparison: quoted, or the short names of "the
difference between X and Y"), each one's best, one that names it alone first. Each sentence carries
its sources' markers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deepresearch.domains.protocol import AnswerTask, Composed, cite
from deepresearch.text.entries import FLAG, HEAD
from deepresearch.text.periods import find_periods
from deepresearch.text.sentences import POINTER, Scorer, Unit, split_sentences, with_pointers
from deepresearch.text.terms import terms

# words before a flag that make it part of a sentence, not the head of the next entry ("use
# -xtype", "a previous -n option", "-H or -L", "the -P option")
_IN_PROSE = frozenset(
    [
        "a",
        "an",
        "the",
        "use",
        "using",
        "or",
        "and",
        "nor",
        "with",
        "like",
        "than",
        "previous",
        "overrides",
        "see",
        "as",
        "of",
        "to",
        "by",
        "for",
        "if",
        "when",
        "unless",
        "option",
        "options",
        "also",
        "both",
        "either",
        "e.g.",
        "i.e.",
        "via",
    ]
)
# words of a question that say how it asks, not what about: what is left is its subject and
# what it asks of it, a command's name ("find", "make") included
_ASKING = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "done",
        "i",
        "me",
        "my",
        "we",
        "you",
        "your",
        "it",
        "its",
        "they",
        "them",
        "their",
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "about",
        "into",
        "and",
        "or",
        "not",
        "no",
        "can",
        "could",
        "should",
        "would",
        "may",
        "might",
        "must",
        "shall",
        "will",
        "there",
        "this",
        "that",
        "these",
        "those",
        "between",
        "difference",
    ]
)
_MARK = "zzsubject"  # a subject word ``terms`` would drop, as a term it keeps
_DEFAULT = re.compile(r"\bdefault", re.IGNORECASE)
# what a question names verbatim: a quoted item ('hlsearch', "*") or an editor command (:wall)
_NAMED = re.compile(r"(?<!\w)(?:'([^'\s]{1,40})'|\"([^\"\s]{1,40})\"|(:[A-Za-z]\w*))")
# a statement that shows rather than says: a shell prompt's command line, a synopsis, a link
_EXAMPLE = re.compile(r"\s*(?:[$#>]\s|usage:|\[[^\]]*\]\([^)]*\)\s*\.?\s*$)", re.IGNORECASE)
NAMED_WEIGHT = 2.0  # a statement holding what the question names verbatim
UNNAMED_WEIGHT = 0.5  # and one holding none of it, for a question that names something
EXAMPLE_WEIGHT = 0.3  # a command line or a synopsis answers no question by itself
HEAD_WEIGHT = 2.5  # a statement opening with a flag the question names is that flag's entry
TITLE_WEIGHT = 1.5  # a statement of the document the question's subject names
DEFAULT_WEIGHT = 1.5  # a statement of a default, for a question asking for one
NEARLY = 0.75  # a further statement is quoted when scoring this share of the best
MAX_STATEMENTS = 3
WAY_CHARS = 700  # how far a how-to's statement runs on to the way its paragraph shows
CONTEXT_CHARS = 500  # a sentence's paragraph is quoted with it up to this length
# a sentence that points back to the one before it for what it is about
_ANAPHOR = re.compile(
    r"(?:It|This|These|They|That|Such|So|Thus|Then)\b|\w+\s+(?:this|these|that|such)\s+\w"
)
# words that say why, and words that set two things against each other: what a why question's
# and a comparison's answer is stated with
_CAUSE = re.compile(
    r"\b(?:because|since|so that|in order to|reasons?|due to|purpose|otherwise|cause[sd]?"
    r"|needed|required|prevents?|avoids?|allows?|ensures?)\b",
    re.IGNORECASE,
)
_CONTRAST = re.compile(
    r"\b(?:but|whereas|while|unlike|instead|opposite|differ\w*|similar|same as|rather than"
    r"|stronger|weaker)\b",
    re.IGNORECASE,
)
_WHY = re.compile(r"^\W*(?:why|what\b.{0,40}\b(?:for|purpose|reason))\b", re.IGNORECASE)
_COMPARE = re.compile(r"\b(?:difference|differ\w*|compar\w*|versus|vs)\b", re.IGNORECASE)
# a question asking for a way: how to do something, or which option or command does it
_HOWTO = re.compile(
    r"\W*(?:how\s+(?:do|can|should|would|could)\s+(?:i|you|we|one)\b|how\s+to\b"
    r"|which\s+(?:\w+\s+)?(?:option|flag|command|setting|switch)s?\b)",
    re.IGNORECASE,
)
# a statement that illustrates ("For example, if you want ... add this line"): how to use a
# thing, not what it is or does, so no answer to a what or why question
_ILLUSTRATION = re.compile(r"\W*(?:for example|for instance|e\.g\.)\W", re.IGNORECASE)
ILLUSTRATION_WEIGHT = 0.5
KIND_WEIGHT = 1.5  # a statement saying why / setting things against each other, when asked
WAY_WEIGHT = 1.5  # a statement giving a way (a command, an option's entry), when one is asked


def statements(text: str) -> list[str]:
    """``text`` cut into its sentences, a short cross-reference kept with the one before it
    (``with_pointers``: what it names is what that one is about), and each sentence at the
    flags that open an entry."""
    out: list[str] = []
    for sentence in with_pointers(split_sentences(text)) or [text]:
        out += _entries(sentence)
    return [s for s in (s.strip() for s in out) if s]


def _entries(sentence: str) -> list[str]:
    cuts = [0]
    for m in FLAG.finditer(sentence):
        start = m.start()
        before = sentence[:start].rstrip()
        if not before or before.endswith((",", "(", "[", "/", "|", "`", "'", '"', "=")):
            continue
        previous = before.split()[-1].lower()
        if previous in _IN_PROSE or FLAG.fullmatch(previous.rstrip(",")):
            continue
        head = HEAD.match(sentence, start)
        rest = sentence[head.end() if head else m.end() :].lstrip()
        if rest[:1].isalpha():  # a description (or an argument's name) follows the flags
            cuts.append(start)
    return [sentence[a:b] for a, b in zip(cuts, [*cuts[1:], len(sentence)], strict=True)]


def subject_words(question: str) -> list[str]:
    """The question's words without those that only say how it asks (``_ASKING``)."""
    words = re.findall(r"[A-Za-z0-9][\w'-]*", question)
    return [w for w in words if w.lower() not in _ASKING and not w.lower().endswith("'s")]


def _query(question: str) -> str:
    """What statements are scored on: the question's words, its subject's repeated in the
    form ``terms`` keeps (a stopword-like name, "find", counts as itself)."""
    return " ".join([question, *subject_words(question)])


def compose(task: AnswerTask) -> Composed | None:
    """The statements answering ``task.question``, best first, each with its context
    (``passage``), cited; None when no finding shares a word with it."""
    owned: list[tuple[str, tuple[int, ...], int, int]] = []  # statement, sources, finding, place
    parts: list[list[str]] = []
    for f, (text, sources, _) in enumerate(task.findings):
        parts.append(statements(text))
        owned += [(st, sources, f, i) for i, st in enumerate(parts[-1])]
    if not owned:
        return None
    subject = {w.lower() for w in subject_words(task.question)}
    extra = sorted(w for w in subject if not terms(w))  # words ``terms`` drops: "find"
    units = [
        Unit(st, k, k, False, (*terms(st), *_extra_terms(st, extra)))
        for k, (st, *_) in enumerate(owned)
    ]
    query = " ".join([task.question, *(_MARK + w for w in extra)])
    scores = Scorer(units).score(query, find_periods(task.question))
    asked = frozenset(terms(task.question))
    flags = list(FLAG.findall(task.question))
    named = named_items(task.question) or _compared(task.question, owned)
    titles = dict(task.titles)
    asks_default = bool(_DEFAULT.search(task.question))
    ways = bool(_HOWTO.match(task.question))
    kind = _CAUSE if _WHY.search(task.question) else None
    kind = _CONTRAST if _COMPARE.search(task.question) else kind
    for k, (st, sources, _, _) in enumerate(owned):
        if POINTER.match(st):
            scores[k] = 0.0
            continue
        if kind is not None and kind.search(st):
            scores[k] *= KIND_WEIGHT
        head = HEAD.match(st)
        if flags and head and set(FLAG.findall(head.group())) & set(flags):
            scores[k] *= HEAD_WEIGHT
        elif named:  # what the question is about, named as the documents write it
            scores[k] *= NAMED_WEIGHT if any(n in st for n in named) else UNNAMED_WEIGHT
        if _EXAMPLE.match(st) or _trail(st) or _echoes(st, asked):
            scores[k] *= EXAMPLE_WEIGHT
        if _dangling(parts[owned[k][2]], owned[k][3]):
            scores[k] *= EXAMPLE_WEIGHT
        title_words = {w.lower() for t in (titles.get(n, "") for n in sources) for w in _words(t)}
        if subject & title_words:
            scores[k] *= TITLE_WEIGHT
        if ways and _shows_way(st):
            scores[k] *= WAY_WEIGHT
        elif not ways and _ILLUSTRATION.match(st):
            scores[k] *= ILLUSTRATION_WEIGHT
        if asks_default and _DEFAULT.search(st):
            scores[k] *= DEFAULT_WEIGHT
    order = sorted(range(len(owned)), key=lambda k: (-scores[k], k))
    if scores[order[0]] <= 0:
        return None
    picked = [order[0]]
    if len(flags) > 1:  # a comparison of flags: each one's best entry
        for flag in flags:
            best = next((k for k in order if _opens_with(owned[k][0], flag)), None)
            if best is not None and best not in picked and scores[best] > 0:
                picked.append(best)
    elif len(named) > 1:  # of named items: each one's best statement
        for item in named:  # what is said of it alone, else with the others
            others = [n for n in named if n not in item and item not in n]
            best = next(
                (k for k in order if item in owned[k][0] and not _names_any(owned[k][0], others)),
                next((k for k in order if item in owned[k][0]), None),
            )
            if best is not None and best not in picked and scores[best] > 0:
                picked.append(best)
    top = scores[order[0]]
    quoted = [passage(parts[owned[k][2]], owned[k][3], asked, ways) for k in picked]
    for k in order[1:]:
        if len(picked) >= MAX_STATEMENTS or scores[k] < NEARLY * top:
            break
        text = passage(parts[owned[k][2]], owned[k][3], asked, ways)
        if k not in picked and not _restated(text, quoted) and not _inside(text, quoted):
            picked.append(k)
            quoted.append(text)
    kept = [
        (t, owned[k][1])
        for t, k in zip(quoted, picked, strict=True)
        if not _inside(t, [o for o in quoted if o != t])
    ]
    text = " ".join(_cited(t, nums) for t, nums in kept)
    sources = tuple(dict.fromkeys(n for _, nums in kept for n in nums))
    return Composed(text, sources, whole=True)


def named_items(question: str) -> list[str]:
    """What ``question`` names verbatim: quoted items ("'hlsearch'", '"*"') with their quotes
    as documents write them too, and editor commands (":wall")."""
    out: list[str] = []
    for m in _NAMED.finditer(question):
        out.append(m.group(0) if m.group(3) is None else m.group(3))
        if m.group(3) is None:
            out.append(m.group(1) or m.group(2) or "")
    return [n for n in out if n and (n[0] in "'\":" or re.fullmatch(r"\w[\w-]{2,}", n))]


# the two things a comparison sets side by side: "the difference between X and Y"
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)\W*$", re.I)
COMPARED_WORDS = 3  # longer sides are descriptions, not names a document writes verbatim


def _compared(question: str, owned: Sequence[tuple[str, tuple[int, ...], int, int]]) -> list[str]:
    """The sides of "the difference between X and Y" as a document writes them, when each is
    a short name (``COMPARED_WORDS``) some statement holds verbatim ("Build-Depends-Arch" and
    "Build-Depends-Indep"): each side's best statement is quoted, as for quoted items."""
    m = _BETWEEN.search(question)
    if not m:
        return []
    sides = [m.group(1).strip(), m.group(2).strip()]
    if any(len(side.split()) > COMPARED_WORDS for side in sides):
        return []
    return sides if all(any(side in st for st, *_ in owned) for side in sides) else []


def passage(
    parts: Sequence[str], i: int, asked: frozenset[str] = frozenset(), way: bool = False
) -> str:
    """Statement ``i`` of a finding's ``parts`` with what it needs to be read: an entry (a
    flag's description) alone, as its neighbours are other settings, unless it leads in to
    what follows (ends with ":"); a sentence with the one before when it opens by pointing
    back ("It repeats the last change"), and the rest of its paragraph, up to
    ``CONTEXT_CHARS``."""
    if HEAD.match(parts[i]) and not parts[i].rstrip().endswith((":", ">")):
        return parts[i]
    if way and not _shows_way(parts[i]):
        shown = _on_to_way(parts, i)
        if shown is not None:
            return shown
    start = i - 1 if i and _ANAPHOR.match(parts[i]) else i
    out = [parts[start]] if start < i else []
    size = len(out[0]) if out else 0
    for part in parts[i:]:
        follows = out and len(out) > i - start
        if follows and size + len(part) > CONTEXT_CHARS:
            break
        if follows and HEAD.match(part):
            break  # the next setting's entry
        if follows and asked and not _continues(out[-1], part, asked):
            break  # the paragraph's next point
        out.append(part)
        size += len(part)
    return " ".join(out)


def _on_to_way(parts: Sequence[str], i: int) -> str | None:
    """Statement ``i`` and those after it in its finding up to the first that shows a way (a
    command as code, an option's entry), within ``WAY_CHARS``; None when none does: a how-to's
    best statement often says what is done ("You can do this by saving your editing session"),
    and its paragraph then shows how (":mksession vimbook.vim")."""
    size = 0
    for j in range(i, len(parts)):
        size += len(parts[j]) + 1
        if size > WAY_CHARS or (j > i and HEAD.match(parts[j]) and not _shows_way(parts[j])):
            return None
        if _shows_way(parts[j]):
            return " ".join(parts[i : j + 1])
    return None


def _continues(before: str, part: str, asked: frozenset[str]) -> bool:
    """Whether ``part`` goes on with what the sentence ``before`` it says, for a reader of the
    question (``asked``: its terms): it follows a lead-in, points back, or is on the question."""
    return (
        before.rstrip().endswith((":", ">"))
        or bool(_ANAPHOR.match(part))
        or bool(asked & set(terms(part)))
    )


def _dangling(parts: Sequence[str], i: int) -> bool:
    """Whether statement ``i`` leads in to what its finding does not hold ("you can change the
    extension: >" as the finding's last words): the example it introduces is the answer."""
    return i == len(parts) - 1 and parts[i].rstrip().endswith((":", " >"))


def _names_any(statement: str, items: Sequence[str]) -> bool:
    return any(item in statement for item in items)


def _inside(text: str, others: Sequence[str]) -> bool:
    return any(text != o and text in o for o in others)


def _echoes(statement: str, asked: frozenset[str]) -> bool:
    """Whether ``statement`` holds no word the question lacks: a name line ("tr - translate or
    delete characters"), a synopsis ("mv [OPTION]..."), a heading that repeats what was asked.
    Sharing every word, it scores high, yet tells the reader nothing they did not ask."""
    return not set(terms(statement)) - asked


def _shows_way(statement: str) -> bool:
    """Whether ``statement`` gives a way to do something: a command or setting written as code,
    or an option's entry ("-P, --max-procs=N run up to N processes at a time")."""
    return "`" in statement or bool(HEAD.match(statement))


def _trail(statement: str) -> bool:
    """Whether ``statement`` is a trail of headings ("08.4: Split a window = Vertical splits"):
    where a passage is, not what it says."""
    return " = " in statement and not statement.rstrip().endswith((".", "!", "?"))


def _words(title: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", title.rsplit(".", 1)[0] if "." in title else title)


def _extra_terms(statement: str, extra: Sequence[str]) -> list[str]:
    """The subject words ``terms`` drops (a command named "find"), as the statement has them."""
    if not extra:
        return []
    have = {w.lower() for w in re.findall(r"[A-Za-z0-9][\w-]*", statement)}
    return [_MARK + w for w in extra if w in have]


def _opens_with(statement: str, flag: str) -> bool:
    head = HEAD.match(statement)
    return bool(head) and flag in FLAG.findall(head.group()) if head else False


def _restated(statement: str, said: Sequence[str]) -> bool:
    mine = set(terms(statement))
    return any(mine and len(mine & set(terms(s))) >= 0.7 * len(mine) for s in said)


def _cited(passage: str, sources: Sequence[int]) -> str:
    """``passage`` with its sources' markers in each of its sentences, before the full stop:
    each sentence of the Answer is checked as a claim of its own, by the markers in its text,
    and a marker after the stop would be read as the next sentence's ("X. [2] Y." cites 2
    for Y), so a statement of another source would be checked against the wrong one."""
    return " ".join(_closed(s, cite(sources)) for s in split_sentences(passage) or [passage])


def _closed(statement: str, marker: str) -> str:
    statement = statement.strip()
    if statement.endswith((".", "!", "?")):
        return f"{statement[:-1].rstrip()} {marker}{statement[-1]}"
    return f"{statement} {marker}" if statement.endswith(":") else f"{statement} {marker}."


__all__ = ["compose", "statements", "subject_words"]
