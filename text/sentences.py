"""Candidate text units, relevance scoring and MMR selection (model-free provider, verifier).

Filing PDFs mix wrapped prose with table rows on one line ("Total net sales $ 81,797 $ 82,959"),
so units are built per line kind: prose lines are re-joined into paragraphs and split into
sentences, table-like lines stay single units. Scoring is BM25 over this task's units (light
stemming) with bonuses for question bigrams, figures (when the question asks for a quantity) and
matching periods. Everything is order-stable and free of randomness: same input, same bytes.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from deepresearch.text.entries import HEAD
from deepresearch.text.figures import has_figure
from deepresearch.text.names import names_in
from deepresearch.text.tables import parse_row
from deepresearch.text.terms import terms

_NUMERIC_TOKEN = re.compile(r"^[$€£(]*-?\d[\d,]*(?:\.\d+)?\)?%?$|^[$€£%—–-]$|^\(\d+\)%$")
_QUANT_QUESTION = re.compile(
    r"\b(?:how much|how many|what (?:was|were|is|are)|total|change[ds]?|increase[ds]?"
    r"|decrease[ds]?|grow(?:th)?|grew|amount|percent(?:age)?|number of)\b",
    re.IGNORECASE,
)
_FOOTER = re.compile(r"^[^|]{1,80}\|[^|]{1,80}\|\s*\d{1,4}$|^(?:page\s+)?\d{1,4}(?:\s+of\s+\d+)?$")
# Names in the question (capitalized words: the company, product or place asked about) identify the
# subject, which an answering sentence usually refers to as "the Company" or "we"; a sentence that
# merely repeats the name ("Apple TV, Apple Watch ...") must not outrank one that answers.
NAME_WEIGHT = 0.4
_MD_SEPARATOR = re.compile(r"^\|?[\s:|-]+\|?$")
_BULLET = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")
# fmt: off
_ABBREV = frozenset({
    "inc", "corp", "co", "ltd", "no", "nos", "mr", "mrs", "ms", "dr", "st", "vs", "etc", "fig",
    "approx", "jr", "sr", "u.s", "e.g", "i.e", "",
})
# fmt: on
_TERMINAL = (".", "!", "?", ":", ";", '"', "”", ")")
_TWO_LETTERS = re.compile(r"[A-Za-z]{2}")
_LETTER_WORD = re.compile(r"[A-Za-z]{2,}")
# a title capitalizes its longer words ("Acquisitions and Divestitures"), up to TITLE_WORDS
_LONG_WORD = re.compile(r"[A-Za-z]{4,}")
TITLE_WORDS = 10
_SENTENCE_END = re.compile(r"[.!?][\"”’)]?\s+(?=[A-Z0-9“\"(\[])")
_INITIALS = re.compile(r"(?:[a-z]\.)*[a-z]")
HEADINGS = 2  # heading lines kept above a paragraph (a section and its sub-section)
# a line repeated across sources within this many lines of a page's top or bottom is running
# matter ("Table of Contents", "Apple Inc. | Q3 2023 Form 10-Q"); one inside the page that is
# shaped like a heading is a section title each filing repeats ("Legal Proceedings"), which is
# what the sentences under it are about
EDGE_LINES = 2
_SENTENCE_REST_WORDS = 8  # a repeated line this long that ends a sentence is no running matter
CONTEXT_CHARS = 600  # a sentence and the rest of its paragraph, as one quote (verify.quote_chars)


def asks_quantity(question: str) -> bool:
    return bool(_QUANT_QUESTION.search(question))


@dataclass(frozen=True)
class Unit:
    """One candidate finding: verbatim text and the number of the source it came from."""

    text: str
    source: int
    order: int  # position across the task, for stable tie-breaking
    table: bool = False
    terms: tuple[str, ...] = field(default=(), compare=False)
    # the sentences after this one in its paragraph (verbatim, up to ``CONTEXT_CHARS`` in all):
    # "In December 2018, Kove IO filed a complaint ..." is followed by what the complaint alleges
    follow: tuple[str, ...] = field(default=(), compare=False)
    # the heading lines above its paragraph ("Legal Proceedings"): what a sentence that never
    # names its topic ("In April 2019, VLSI filed three suits against us") is about
    heading: str = field(default="", compare=False)
    # the sentence before this one in its paragraph: "Substantially all of these hedges were
    # foreign currency contracts" says what the figures of the sentence before it were
    before: str = field(default="", compare=False)


@functools.lru_cache(maxsize=1 << 14)
def _is_table_line(line: str) -> bool:
    if line.startswith("|") or parse_row(line) is not None:  # a self-describing table row
        return True
    tokens = line.split()
    numeric = sum(1 for t in tokens if _NUMERIC_TOKEN.match(t))
    alpha = sum(1 for t in tokens if _TWO_LETTERS.search(t))
    ends_numeric = bool(tokens) and bool(_NUMERIC_TOKEN.match(tokens[-1]))
    return numeric >= 2 and ends_numeric and numeric * 3 >= alpha


def _split_sentences(paragraph: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(paragraph):
        before = paragraph[start : m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if last in _ABBREV or _INITIALS.fullmatch(last):
            continue
        out.append(paragraph[start : m.end()].strip())
        start = m.end()
    tail = paragraph[start:].strip()
    if tail:
        out.append(tail)
    return out


split_sentences = _split_sentences  # public name for the citation verifier


def _keep(text: str, table: bool) -> bool:
    words = _LETTER_WORD.findall(text)
    if table:
        return any(len(w) >= 3 for w in words)
    return len(words) >= 4


# a sentence that only sends the reader elsewhere: "See 'incsearch'.", "Refer to ls(1) ..."
POINTER = re.compile(r"\W*(?:see|refer to)\b", re.IGNORECASE)


def with_pointers(sentences: list[str]) -> list[str]:
    """``sentences`` with each short cross-reference joined to the sentence before it:
    documentation names what a description is about in the pointer after it ("Display the
    match for a search pattern when halfway typing it. See 'incsearch'."), and alone the
    pointer is too short to be a unit, so it would be lost."""
    out: list[str] = []
    for s in sentences:
        if out and POINTER.match(s) and not _keep(s, False):
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def _following(sentences: list[str], k: int) -> tuple[str, ...]:
    """The sentences after ``sentences[k]`` that fit with it in ``CONTEXT_CHARS``, up to one
    too short to be a unit (the verifier's quotes are runs of units)."""
    size, out = len(sentences[k]), []
    for s in sentences[k + 1 :]:
        size += 1 + len(s)
        if size > CONTEXT_CHARS or not _keep(s, False):
            break
        out.append(s)
    return tuple(out)


def _heading_shaped(line: str) -> bool:
    """A short line, or a title-cased one ("Note 13 - Commitments and Contingencies"), that
    ends no sentence: a heading or a label, not the start of a paragraph."""
    words = line.split()
    if line.endswith(_TERMINAL) or len(words) > TITLE_WORDS:
        return False
    return len(words) <= 5 or all(w[0].isupper() for w in words if _LONG_WORD.fullmatch(w))


def _goes_on_with_open_sentence(line: str, paragraph: list[str]) -> bool:
    """Whether ``line`` goes on with the sentence the paragraph's last line left open: it starts
    in lower case ("benefit of 10.9% and 2.1% for ..."), or it is the rest of a sentence, words
    ending it ("Department, which delayed ... for Microsoft."); a table's column headers under
    an open line ("... as follows" / "Three Months Ended") are neither. A note that the
    discussion restates word for word repeats such lines across pages, as a running header
    repeats its own, and cut as one, it tore the sentence that states the figures ("...
    respectively, and a")."""
    if not paragraph or paragraph[-1].endswith(_TERMINAL):
        return False
    return line[:1].islower() or (
        line.endswith(_TERMINAL) and len(_LETTER_WORD.findall(line)) >= _SENTENCE_REST_WORDS
    )


class _Cut(NamedTuple):
    text: str
    table: bool
    follow: tuple[str, ...]
    heading: str
    before: str = ""


def _source_units(text: str, boilerplate: frozenset[str]) -> list[_Cut]:
    units: list[_Cut] = []
    paragraph: list[str] = []
    headings: list[str] = []  # the last HEADINGS heading lines above, outermost first

    def flush() -> None:
        if paragraph:
            sentences = with_pointers(_split_sentences(" ".join(paragraph)))
            under = " / ".join(headings)
            units.extend(
                _Cut(s, False, _following(sentences, k), under, sentences[k - 1] if k else "")
                for k, s in enumerate(sentences)
            )
            paragraph.clear()

    def heading(line: str) -> None:
        flush()
        headings.append(line)
        del headings[:-HEADINGS]

    raws = text.splitlines()
    lines = [" ".join(raw.split()) for raw in raws]
    body = [k for k, line in enumerate(lines) if line]
    edges = set(body[:EDGE_LINES] + body[-EDGE_LINES:])
    examples = _examples(raws, lines)
    skip = 0
    for k, line in enumerate(lines):
        if k < skip:
            continue
        if k in examples:  # the lead-in's paragraph ends at its example, quoted with it
            flush()
            skip, code = examples[k]
            if units and not units[-1].table:
                lead = units[-1]
                units[-1] = _with_example(lead, code)
                _shown_in_follow(units, lead.text, units[-1].text)
            continue
        if line in boilerplate and _goes_on_with_open_sentence(line, paragraph) and k not in edges:
            paragraph.append(line)  # a sentence's next line that another page repeats: prose
            continue
        if line in boilerplate and k not in edges and _heading_shaped(line):
            heading(line)  # a section title every filing repeats ("Legal Proceedings")
            continue
        if not line or line in boilerplate or _FOOTER.match(line) or _MD_SEPARATOR.match(line):
            flush()
            continue
        if line.startswith("#"):
            heading(line.lstrip("#").strip())
            continue
        if _is_table_line(line) or parse_row(line) is not None:
            flush()
            units.append(_Cut(line, True, (), ""))
            continue
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            paragraph.append(line[bullet.end() :])
            continue
        if _heading_shaped(line) and (not paragraph or paragraph[-1].endswith(_TERMINAL)):
            heading(line)  # a heading or label line, not part of a sentence
            continue
        paragraph.append(line)
    flush()
    return [u for u in units if _keep(u.text, u.table)]


# a sentence that introduces what follows it: "use this command:", Vim help's "command: >"
_LEAD_IN = re.compile(r"(?::|\s>)$")
_HELP_MARK = re.compile(r"\s*>$")  # Vim help's "an example follows", not part of the sentence
_FENCE_LINE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
# an indented line that is an entry of a list, not code: a flag ("-f, --force  Force ..."), a
# bullet, or a term and its description set apart by a column gap ("--help      Print usage")
_ENTRY_LINE = re.compile(r"\s*(?:[-*+\u2022]\s|-{1,2}\w|\S.*?\S\s{2,}\S)")
_PROMPT = re.compile(r"[$#>%]\s")  # a shell session's command line, not its output
EXAMPLE_LINES = 4  # an example's first lines ride with the sentence that introduces it
EXAMPLE_CHARS = 240


def _indent(raw: str) -> int:
    return len(raw.expandtabs(8)) - len(raw.expandtabs(8).lstrip())


def _examples(raws: list[str], lines: list[str]) -> dict[int, tuple[int, tuple[str, ...]]]:
    """The examples lead-in lines introduce, by their first line: (the line after the example,
    its lines). A lead-in ends with ":" (or Vim help's " >"); its example is the fenced block
    after it, or the lines indented deeper than it, up to ``EXAMPLE_LINES`` of them (an example;
    a longer indented run is a list or a quotation, read as text) unless Vim help's marker says
    it is one."""
    out: dict[int, tuple[int, tuple[str, ...]]] = {}
    k, n, last = 0, len(lines), -1
    while k < n:
        if not lines[k]:
            k += 1
            continue
        lead = last >= 0 and bool(_LEAD_IN.search(lines[last])) and k not in out
        start, prev = k, last
        last = k  # the line before the next one (-1 past an example: it leads in to nothing)
        if not lead:
            k += 1
            continue
        if _FENCE_LINE.match(raws[k]):
            stop = next((j for j in range(k + 1, n) if _FENCE_LINE.match(raws[j])), n)
            block = [j for j in range(k + 1, stop) if lines[j]]
            shown = _shown(block, lines)
            # the block's lines past those shown are read as they were: nothing is lost
            end = stop + 1 if len(shown) == len(block) or not shown else shown[-1] + 1
            out[start] = (end, tuple(lines[j] for j in shown))
            k, last = end, -1
            continue
        margin = _indent(raws[prev])
        end, code = k, []
        while end < n and (not lines[end] or _indent(raws[end]) > margin):
            if lines[end]:
                code.append(lines[end])
            end += 1
        while end > k and not lines[end - 1]:
            end -= 1
        marked = lines[prev].endswith(" >")
        # a shell session's output may look like a list (columns): its commands are the example
        session = bool(code) and bool(_PROMPT.match(code[0]))
        listed = not session and any(_ENTRY_LINE.match(raws[j]) for j in range(k, end))
        if code and (marked or session or (len(code) <= EXAMPLE_LINES and not listed)):
            shown = _shown([j for j in range(k, end) if lines[j]], lines)
            if len(shown) < len(code):
                end = shown[-1] + 1 if shown else k
            elif end < n and lines[end] == "<":
                end += 1  # Vim help's "the example ended"
            out[start] = (end, tuple(lines[j] for j in shown))
            k = end
            last = -1
            continue
        k += 1
    return out


def _shown(code: list[int], lines: list[str]) -> list[int]:
    """Of an example's lines (by index), the first ones a lead-in quotes: up to
    ``EXAMPLE_LINES``, and ``EXAMPLE_CHARS`` after the first; of a shell session, its command
    lines up to the first output."""
    shown: list[int] = []
    size = 0
    prompted = bool(code) and bool(_PROMPT.match(lines[code[0]]))
    for j in code[:EXAMPLE_LINES]:
        if shown and size + len(lines[j]) > EXAMPLE_CHARS:
            break
        if prompted and not _PROMPT.match(lines[j]):
            break  # a command's output: read as it was (a table, a message)
        shown.append(j)
        size += len(lines[j])
    return shown


def _shown_in_follow(units: list[_Cut], lead: str, shown: str) -> None:
    """The sentences before a lead-in (``units[-1]``) in its paragraph end their ``follow``
    with it as ``shown``, its example included: "You can do this by saving your editing
    session ..." is followed by "The following command creates a session file:
    `:mksession vimbook.vim`", not by a lead-in to nothing."""
    for k in range(len(units) - 2, -1, -1):
        cut = units[k]
        if cut.table or not cut.follow or cut.follow[-1] != lead:
            break
        units[k] = cut._replace(follow=(*cut.follow[:-1], shown))


def _with_example(cut: _Cut, code: tuple[str, ...]) -> _Cut:
    """The lead-in sentence with its example's first lines, as code."""
    shown = [line if "`" in line else f"`{line}`" for line in code]
    return cut._replace(text=f"{_HELP_MARK.sub('', cut.text)} {' '.join(shown)}")


# A crew process splits the same pages run after run: the lines of a text and its units (given
# the boilerplate lines it holds) are kept, keyed by the text itself (pure, so the cache is exact).
KEPT_TEXTS = 512


@functools.lru_cache(maxsize=KEPT_TEXTS)
def _lines(text: str) -> frozenset[str]:
    return frozenset(" ".join(line.split()) for line in text.splitlines())


@functools.lru_cache(maxsize=KEPT_TEXTS)
def _units_of(text: str, boilerplate: frozenset[str]) -> tuple[tuple[_Cut, tuple[str, ...]], ...]:
    return tuple((cut, tuple(terms(cut.text))) for cut in _source_units(text, boilerplate))


def _is_entry(line: str) -> bool:
    """Whether ``line`` is an option's entry, its flags then what it does ("-f, --force Do not
    prompt for confirmation"): commands that share an option share its entry, and it is still
    each one's answer, not a page's furniture."""
    head = HEAD.match(line)
    return head is not None and line[head.end() :].lstrip()[:1].isalpha()


def _framed(line: str) -> str:
    """What a running head says between two copies of its document's name ("HEAD(1) User
    Commands HEAD(1)": "User Commands"), else "": each document's head differs by that name,
    the rest is the same in every one."""
    words = line.split()
    return " ".join(words[1:-1]) if len(words) >= 3 and words[0] == words[-1] else ""


def build_units(sources: list[tuple[int, str]]) -> list[Unit]:
    """Candidate units of every source; short lines repeated across sources count as boilerplate,
    and so do running heads that frame the same words with each one's own name."""
    seen: Counter[str] = Counter()
    framed: Counter[str] = Counter()
    for _, text in sources:
        lines = _lines(text)
        seen.update(lines)
        framed.update({f for f in map(_framed, lines) if f})
    boilerplate = {
        line
        for line, count in seen.items()
        if (count >= 2 or framed[_framed(line)] >= 2)
        and len(line) < 120
        and line
        and not _is_table_line(line)
        and not _is_entry(line)
    }
    units: list[Unit] = []
    for n, text in sources:
        for cut, unit_terms in _units_of(text, _lines(text) & boilerplate):
            units.append(
                Unit(
                    cut.text,
                    n,
                    len(units),
                    cut.table,
                    unit_terms,
                    cut.follow,
                    cut.heading,
                    cut.before,
                )
            )
    return units


class Scorer:
    """BM25 over a fixed set of units plus question-aware bonuses."""

    def __init__(self, units: list[Unit], k1: float = 1.2, b: float = 0.75) -> None:
        self.units = units
        self.k1, self.b = k1, b
        self.df: Counter[str] = Counter()
        self.tf = [Counter(u.terms) for u in units]  # per unit, for every score and vector
        for tf in self.tf:
            self.df.update(tf.keys())
        self.n = max(len(units), 1)
        self.avg_len = sum(len(u.terms) for u in units) / self.n or 1.0

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def score(self, question: str, periods: list[str]) -> list[float]:
        """One score per unit; zero when the unit shares no content term with the question."""
        period_terms = {t for p in periods for t in terms(p) if not t.isdigit() or len(t) == 4}
        name_terms = {t for w in names_in(question) for t in terms(w)} - period_terms
        q_terms = [t for t in dict.fromkeys(terms(question)) if not (t.isdigit() and len(t) < 4)]
        content = [t for t in q_terms if t not in period_terms]
        stream = [t for t in terms(question) if t not in period_terms]
        bigrams = set(itertools.pairwise(stream))
        quantity = asks_quantity(question)
        out: list[float] = []
        for u, tf in zip(self.units, self.tf, strict=True):
            if not any(t in tf for t in content):
                out.append(0.0)
                continue
            norm = self.k1 * (1 - self.b + self.b * len(u.terms) / self.avg_len)
            base = 0.0
            for t in q_terms:
                if tf[t]:
                    weight = 0.5 if t in period_terms else NAME_WEIGHT if t in name_terms else 1.0
                    base += weight * self.idf(t) * tf[t] * (self.k1 + 1) / (tf[t] + norm)
            unit_bigrams = set(itertools.pairwise(u.terms))
            base *= 1.0 + 0.35 * min(len(bigrams & unit_bigrams), 3)
            if quantity and has_figure(u.text):
                base *= 1.5
            matched = sum(1 for p in periods if p.lower() in u.text.lower())
            if matched:
                base *= 1.0 + 0.2 * min(matched, 2)
            out.append(base)
        return out


def _vector(tf: Counter[str], scorer: Scorer) -> dict[str, float]:
    vec = {t: c * scorer.idf(t) for t, c in tf.items()}
    length = math.sqrt(sum(v * v for v in vec.values())) or 1.0
    return {t: v / length for t, v in vec.items()}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """The dot product of two unit vectors. ``map`` over C callables rather than a generator:
    MMR calls this for every pair of candidate and chosen unit, a tenth of a run's CPU; the
    products and their order, hence the float, are the same."""
    if len(a) > len(b):
        a, b = b, a
    total: float = sum(map(operator.mul, a.values(), map(b.get, a, itertools.repeat(0.0))))
    return total


def mmr_select(
    units: list[Unit],
    scores: list[float],
    scorer: Scorer,
    k: int,
    *,
    lam: float = 0.7,
    min_share: float = 0.15,
    duplicate: float = 0.85,
) -> list[int]:
    """Indices chosen by MMR; near-duplicates are skipped and no source may supply more than half
    of ``k`` while units from other sources remain eligible."""
    top = max(scores, default=0.0)
    if top <= 0 or k <= 0:
        return []
    pool = [i for i, s in enumerate(scores) if s > 0 and s >= min_share * top]
    shared = units is scorer.units  # the scorer's term counts are the units' own
    vectors = {
        i: _vector(scorer.tf[i] if shared else Counter(units[i].terms), scorer) for i in pool
    }
    # Each candidate's highest similarity to the chosen units, kept up to date as units are
    # chosen rather than recomputed against all of them every step (vectors are non-negative,
    # so 0.0 is the similarity to an empty choice).
    sim = dict.fromkeys(pool, 0.0)
    relevance = {i: lam * scores[i] / top for i in pool}  # fixed: computed once, not per step
    cap = max(1, k // 2)
    chosen: list[int] = []
    per_source: Counter[int] = Counter()
    while pool and len(chosen) < k:
        open_sources = {units[i].source for i in pool if per_source[units[i].source] < cap}
        best, best_value = -1, -math.inf
        for i in pool:
            if open_sources and units[i].source not in open_sources:
                continue
            value = relevance[i] - (1 - lam) * sim[i]
            if value > best_value:
                best, best_value = i, value
        if best < 0:
            break
        pool.remove(best)
        if sim[best] >= duplicate:
            continue
        chosen.append(best)
        per_source[units[best].source] += 1
        chosen_vector = vectors[best]
        for i in pool:
            similarity = cosine(vectors[i], chosen_vector)
            if similarity > sim[i]:
                sim[i] = similarity
    return chosen


__all__ = [
    "Scorer",
    "Unit",
    "asks_quantity",
    "build_units",
    "cosine",
    "mmr_select",
    "split_sentences",
]
