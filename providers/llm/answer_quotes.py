"""Which findings the extractive Answer quotes: each whole, each once.

A finding is a page's sentence with the rest of its paragraph. At a page's top it can start
inside a sentence begun on the page before, at its foot end inside one ("We funded the
acquisitions of"); deep mode's sections can each hold the same sentence of another period. The
Answer quotes whole sentences, and a sentence once unless it states another amount or rate;
never a cross-reference ("For additional information, see Item 8 of Part II ...").
"""

from __future__ import annotations

import re

from deepresearch.llm_messages import DraftFinding
from deepresearch.text.boilerplate import chart_text, document_of, note_to_entry, points_elsewhere
from deepresearch.text.figures import states_figure
from deepresearch.text.question import Question
from deepresearch.text.rates import asks_rate, states_rate
from deepresearch.text.sentences import split_sentences
from deepresearch.text.tables import parse_row
from deepresearch.text.terms import terms

# "respectively, ...", not "iPad net sales ..."; "2022, the Company expects ..." (the date's
# month and day were on the page before); "Wash.) in January 2023, ..." closes a bracket opened
# on the page before (not an enumerator: "a) Revenue ...", "(1) Includes ...")
_FRAGMENT = re.compile(
    r"[a-z](?![A-Z])|\d[\d,.]*,\s+[a-z]|(?!\(?\w{1,3}\)\s)[^()]{1,40}\)(?=[\s,.;:])"
)
# an amount or a rate (not a date): what makes a sentence of another period news
_NUMBER = re.compile(r"\$\s?\d[\d,.]*|\d[\d,.]*\s?(?:%|percent|million|billion)")
MAX_TREND_SENTENCES = 5  # a trend told in sentences: one per filing, at most this many
# a stated amount: "$6.0 billion", "46.2 million", "19%", "1,234" (not a year or a "Q3")
STATED_AMOUNT = re.compile(r"\$\s?\d|\d(?:\.\d+)?\s?(?:%|percent|million|billion)|\d,\d{3}")
RESTATED = 0.7  # share of the shorter quote's words that makes two Answer quotes one
# a period's results ("the third quarter of 2023", "first nine months of fiscal year 2024", "the
# quarter ended July 1, 2023"), not a document's date ("our Form 10-K for the fiscal year ended
# January 29, 2023", "our Form 10-Q for the period ended March 31, 2023")
_OF_A_PERIOD = re.compile(
    r"\b(?:quarter|months|half|year)\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?(?:19|20)\d{2}\b"
    r"|\b(?:quarter|months)\s+ended\b",
    re.IGNORECASE,
)


def quotable(
    ranked: list[tuple[bool, DraftFinding]], q: Question
) -> dict[str, tuple[tuple[int, ...], bool]]:
    """The findings the Answer may quote, best first: each text whole (``whole_sentences``)
    -> (its sources, whether it ranked among the leaders); a rate question's amount rows and
    a finding that opens with what another already says (``restates``) are not: its news is
    among the findings, and the Answer's place goes to the next."""
    out: dict[str, tuple[tuple[int, ...], bool]] = {}
    for lead, finding in ranked:
        text = whole_sentences(finding.text)
        row = parse_row(text)
        text = text if row is not None else informative(text)
        if not text or text in out:
            continue
        if row is not None and asks_rate(q) and not states_rate(row, q):
            continue  # "effective tax rate": not the "Income before income tax" row
        opening = (split_sentences(text) or [text])[0] if row is None else ""
        if opening and any(restates(opening, t) for t in out):
            continue  # the same sentence of another period or sub-question's section
        out[text] = (finding.sources, lead)
    return out


def restates(text: str, other: str) -> bool:
    """Whether ``text`` says mostly what ``other`` says (``RESTATED`` of its words are in it):
    "The increase in fulfillment costs in Q3 ..." and "... for the nine months ..." are one
    explanation, told twice."""
    mine, theirs = set(terms(text)), set(terms(other))
    if not set(_NUMBER.findall(text)) <= set(_NUMBER.findall(other)):
        return False  # "Our effective tax rate was 18% ..." of another quarter is news
    return bool(mine) and len(mine & theirs) >= RESTATED * min(len(mine), len(theirs))


def whole_sentences(text: str) -> str:
    """``text`` from its first whole sentence to its last: a finding that starts inside a
    sentence (its start was on the page before) opens with words no reader can follow ("cost
    of revenue and operating expenses, respectively, which ..."), and one torn at the page's
    foot ends in them ("We funded the acquisitions of"); "" when nothing whole is left."""
    start = bool(_FRAGMENT.match(text))
    # a sentence torn at its end stops at a word or a lead-in ("of", "were:"), a table line
    # at a figure ("Total net sales $ 81,797 $ 82,959")
    last = text.rstrip(' "”’)')[-1:]
    end = (last.isalpha() or last in ",:;") and parse_row(text) is None
    if not (start or end):
        return text
    sentences = split_sentences(text)
    return " ".join(sentences[int(start) : len(sentences) - int(end)])


def per_document_figures(
    flat: list[tuple[int, DraftFinding]], scores: list[float], urls: dict[int, str]
) -> list[int]:
    """For a trend told in sentences (no row to tabulate), each document's best finding that
    states a figure, best first, at most ``MAX_TREND_SENTENCES``: "our effective tax rate was
    19%" from every filing, not three sentences from one."""
    best: dict[str, int] = {}
    for k, (_, draft) in enumerate(flat):
        if not STATED_AMOUNT.search(draft.text) or scores[k] <= 0:
            continue
        doc = document_of(urls.get(draft.sources[0], ""))
        if doc not in best or scores[k] > scores[best[doc]]:
            best[doc] = k
    return sorted(best.values(), key=lambda k: (-scores[k], k))[:MAX_TREND_SENTENCES]


def standing(findings: list[tuple[str, str]]) -> set[int]:
    """The prose findings (of ``(document, text)`` pairs) whose opening sentence a finding of
    another document says too (``restates``), figure-free and of no period's results: standing
    language a filer repeats each quarter ("The Company is involved from time to time in
    claims, proceedings, and litigation ..."), which tells a reader nothing the filing at hand
    reports."""
    openings = [
        (doc, (split_sentences(text) or [text])[0] if parse_row(text) is None else "")
        for doc, text in findings
    ]
    out: set[int] = set()
    for k, (doc, opening) in enumerate(openings):
        if not opening or states_figure(opening):
            continue
        if _OF_A_PERIOD.search(opening):
            continue  # "... for the third quarter of 2023 was lower ...": that quarter's news
        if any(d != doc and o and restates(opening, o) for d, o in openings):
            out.add(k)
    return out


def informative(text: str) -> str:
    """``text`` without the cross-references that open or close it ("For additional
    information, see Item 8 of Part II ..."): a reader is told where to look, not what is
    there; "" when that is all it says."""
    sentences = split_sentences(text) if text else []
    if not sentences or not (_aside(sentences[0]) or _aside(sentences[-1])):
        return text
    while sentences and _aside(sentences[0]):
        sentences.pop(0)
    while sentences and _aside(sentences[-1]):
        sentences.pop()
    return " ".join(sentences)


def _aside(sentence: str) -> bool:
    return points_elsewhere(sentence) or chart_text(sentence) or note_to_entry(sentence)


__all__ = [
    "MAX_TREND_SENTENCES",
    "STATED_AMOUNT",
    "informative",
    "per_document_figures",
    "quotable",
    "restates",
    "standing",
    "whole_sentences",
]
