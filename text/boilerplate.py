"""Boilerplate is never evidence: text that every filing carries and that answers no question.

Certifications, signature blocks, cover-page dates, consent letters, exhibit indexes, tables of
contents, defined-term sentences and forward-looking disclaimers share shapes rather than words:

* **sentence shape** — an officer certifying ("I ... certify", "I have reviewed", "... does
  hereby certify"), a signature
  (``/s/``, a name line with a title), a definition (a quoted term that "refers to" / "means"),
  an index line (an item or exhibit number with a page number or a dotted leader), a statement
  about statements (forward-looking, "actual results may differ") with no figure;
* **repetition across documents** — a figure-free sentence found verbatim in two different
  documents of one task is a template (certifications, legends), not a finding; a signed page
  whose prose most filings carry is a template page no search returns (``template_pages``);
* **absence of question terms** — a unit that shares only the entity's name or a period with the
  question says nothing about what was asked (``off_topic``).

Pure functions over plain strings; callers decide what to drop.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from deepresearch.text.figures import states_figure
from deepresearch.text.sentences import split_sentences
from deepresearch.text.tables import parse_row

_CERTIFYING = re.compile(
    r"(?:^|[\s,;(])I(?:,| have| am| hereby| certify| further)\b"
    # an officer certifying in the third person ("Amy Hood, Chief Financial Officer of the
    # Company, does hereby certify, pursuant to § 906 ...")
    r"|\bhereby certif(?:y|ies)\b"
)
_SIGNATURE = re.compile(r"/s/|^\s*(?:By|Name|Title|Date)\s*:", re.IGNORECASE | re.MULTILINE)
_DEFINITION = re.compile(
    r"[\"“][^\"”]{1,40}[\"”](?:\s*\)|\s*,)?\s*(?:or\s+[\"“][^\"”]{1,40}[\"”]\s*)?"
    r"(?:refers?|refer to|means|shall mean|is defined)\b|\b(?:refers? to|collectively referred"
    r" to as)\s+[\"“]"
    # a defined name in brackets: "... and its wholly owned subsidiaries (collectively “Acme” or
    # the “Company”)"
    r"|\(\s*(?:collectively|together)\s*,?\s+(?:the\s+)?[\"“]",
    re.IGNORECASE,
)
_INDEX_LINE = re.compile(
    r"(?:\.{4,}|…{2,})\s*\d+\s*$|^\s*(?:item|part|exhibit|note)\s+[\dIVX]+[A-Z]?\.?\s.{0,80}\s\d{1,3}\s*$"
    r"|^\s*\d{1,3}\.\d{1,2}\*{0,2}\s"
    # an exhibit number of three digits opening a line ("101 Inline XBRL Document Set ...",
    # "104 Cover Page ..."): no sentence starts with a bare three-digit number and a capital
    r"|^\s*\d{3}\*{0,2}\s+(?-i:[A-Z])",
    re.IGNORECASE,
)
# Sentences about the document's own statements: hedged and figure-free.
_META = re.compile(
    r"\bforward[- ]looking\b|\bactual results (?:could|may|might) differ|\bsafe harbor\b"
    # "actual results (and outcomes) could differ materially", however the PDF split "differ"
    r"|\bactual results\b[^.]{0,40}?\b(?:could|may|might)\b[^.]{0,24}?\bmaterially\b"
    r"|\bundertakes? no obligation\b|\bincorporated (?:herein )?by reference\b"
    r"|\bpursuant to (?:the requirements of|section|rule|§)"
    # a reading instruction: "The following discussion should be read in conjunction with ..."
    r"|\bshould be read (?:in conjunction|together) with\b"
    # the filer's statement on its own controls (Item 4): about its reporting, not its business
    r"|\binternal controls? over financial reporting\b|\bdisclosure controls and procedures\b"
    # the interim statements' standing assertion: "reflect all adjustments ... necessary for a
    # fair presentation"
    r"|\ball adjustments\b[^.]{0,80}?\bnecessary\b[^.]{0,40}?\bfair\b"
    # an auditor's review report on the interim statements: "We have reviewed the accompanying
    # condensed consolidated balance sheet ...", "conducted in accordance with the standards of
    # the Public Company Accounting Oversight Board"
    r"|\b(?:we|I) have reviewed the accompanying\b|\bstandards of the public company accounting\b",
    re.IGNORECASE,
)
_KEY_WORD = re.compile(r"[a-z0-9]+")
_COVER_DATE = re.compile(
    r"^\s*(?:date[d:]?\s*)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},"
    r"\s+\d{4}\s*$",
    re.IGNORECASE,
)


# a glossary flattened into a sentence: "5G The fifth-generation ... ADAS Advanced
# driver-assistance systems ASP Average selling price": acronyms each followed by their words
_GLOSSARY_TERM = re.compile(r"(?:^|\s)[A-Z][A-Z0-9&]{1,6}s?\s+(?=[A-Z][a-z])")
GLOSSARY_TERMS = 3
# a running head or foot: four capitalized words or more and a page number, no sentence
# ("Financial Statements Notes to Financial Statements 15")
_RUNNING_HEAD = re.compile(r"^\s*(?:(?:[A-Z][\w’'&-]*|and|of|to|the|for|in|&)\s+){4,12}\d{1,3}\s*$")
_PAGE_HEADER = re.compile(r"^(?:page|pages|page no\.?|page number)$", re.IGNORECASE)


# a cross-reference: it sends the reader elsewhere ("For additional information, see Item 8 of
# Part II ...", "Refer to Note 14 ...") or names where something is told ("... are described in
# greater detail in Item 1A of Part II", "Note 1, “Summary of ...” ... describe the significant
# accounting policies"); not "as described in Note 15", whose sentence tells something first
_POINTER = re.compile(
    r"^.{0,80}?\b(?:see|refer to)\s[^.]{0,120}?\b(?:item|note|part)\s+(?:[\dIVX]+|[“\"])"
    r"|\b(?:is|are)\s+(?:described|discussed|set forth)\s+(?:in greater detail |more fully |further "
    r"|below and )?in\s+(?:item|note|part)\s+[\dIVX]"
    r"|^note\s+\d+[^.]{0,240}?\bdescribe\b",
    re.IGNORECASE,
)


def points_elsewhere(sentence: str) -> bool:
    """Whether ``sentence`` only sends the reader to another part of a filing (figure-free):
    an Answer never quotes it. It is no boilerplate for the evidence, since the paragraph it
    opens can hold the figures ("See Note 5. ... we repurchased 12 million shares")."""
    return bool(_POINTER.search(sentence)) and not states_figure(sentence)


# a chart's labels read as text: a unit line, or "$B" heading a column of a bar chart
_CHART_UNIT = re.compile(r"\(in (?:millions|billions|thousands)\b[^)]*\)|\$[BM](?!\w)", re.I)
_AMOUNT = re.compile(r"\(\d[\d,.]*\)|\$\s?\(?\d|\b\d{1,3}(?:,\d{3})+\b")


def chart_text(sentence: str) -> bool:
    """Whether ``sentence`` is a chart's or a table's text read as prose ("(In Millions) $ 6,018
    Q3 2023 Gross Margin (467) Lower product margin ..."; "Operations $B Capital Expenditures
    $B Dividends $B $5.9 $(1.8)"): a unit line or a "$B" column head among amounts, which no
    sentence of a filing's prose carries; a reader cannot tell which figure is which."""
    return bool(_CHART_UNIT.search(sentence)) and len(_AMOUNT.findall(sentence)) >= 2


# "(1) Represents the change ...", "(a) Includes sales of ...": a note to a table's entry
_NOTE_TO_ENTRY = re.compile(
    r"^\s*\((?:\d{1,2}|[a-z])\)\s+"
    r"(?:Represents?|Includes?|Excludes?|Reflects?|Consists?|Relates?|Amounts?)\b"
)


def note_to_entry(sentence: str) -> bool:
    """Whether ``sentence`` is a table's footnote saying what an entry of it holds ("(1)
    Represents the change in reported amounts resulting from changes in foreign exchange
    rates"): it defines a column the reader of an Answer does not see."""
    return bool(_NOTE_TO_ENTRY.match(sentence))


def _contents_row(text: str) -> bool:
    """A table row that only points at pages ("Item 2. Management's Discussion: Page = 25"):
    a table of contents, whatever the heading above it says."""
    row = parse_row(text) if " = " in text else None
    return (
        row is not None
        and bool(row.cells)
        and all(_PAGE_HEADER.match(h.strip()) and v.strip().isdigit() for h, v in row.cells)
    )


@functools.lru_cache(maxsize=1 << 15)  # a crew process sees the same pages' units run after run
def shape_of(text: str) -> str | None:
    """The boilerplate shape ``text`` has ("certification", "signature", ...), or None."""
    if _contents_row(text):
        return "table of contents"
    if _SIGNATURE.search(text):
        return "signature"
    if _COVER_DATE.match(text):
        return "date line"
    if _INDEX_LINE.search(text) or _RUNNING_HEAD.match(text):
        return "index line"
    if len(_GLOSSARY_TERM.findall(text)) >= GLOSSARY_TERMS:
        return "glossary"
    if _CERTIFYING.search(text) and not states_figure(text):
        return "certification"
    if _DEFINITION.search(text) and not states_figure(text):
        return "definition"
    if _META.search(text) and not states_figure(text):
        return "disclaimer"
    return None


@functools.lru_cache(maxsize=1 << 15)
def _key(text: str) -> str:
    return " ".join(_KEY_WORD.findall(text.lower()))


def repeated(units: Sequence[tuple[str, str]], min_words: int = 8) -> set[str]:
    """Texts (of ``(document, text)`` pairs) that appear, figure-free, in two or more documents.

    Texts are compared by their words and numbers, ignoring punctuation and case; short texts
    are left alone (headings repeat legitimately)."""
    docs: dict[str, set[str]] = {}
    for doc, text in units:
        if not states_figure(text) and len(text.split()) >= min_words:
            docs.setdefault(_key(text), set()).add(doc)
    spread = {key for key, where in docs.items() if len(where) >= 2}
    return {text for _, text in units if _key(text) in spread}


def off_topic(text_terms: Iterable[str], metric_terms: Iterable[str]) -> bool:
    """True when the question names metric terms and ``text_terms`` contain none of them."""
    wanted = set(metric_terms)
    return bool(wanted) and not (wanted & set(text_terms))


def boilerplate(units: Sequence[tuple[str, str]]) -> list[bool]:
    """One flag per ``(document, text)`` unit: True for boilerplate by shape or repetition."""
    copies = repeated(units)
    return [shape_of(text) is not None or text in copies for _, text in units]


def boilerplate_share(text: str) -> float:
    """The share of ``text``'s non-blank lines that have a boilerplate shape: a page of index
    lines, signatures or certifications is a page no question is answered from."""
    lines = [line for line in text.split("\n") if line.strip()]
    return sum(1 for line in lines if shape_of(line.strip())) / len(lines) if lines else 0.0


COMMON_DOCUMENTS = 5  # words this many documents carry are a template's, not a finding's
SHINGLE = 8  # words in a run compared across documents
COMMON_SHARE = 0.5  # share of a signed page's sentence words in boilerplate: a template


def _signed_statement(sentence: str) -> bool:
    """A boilerplate shape on a signed page, figures or not: "I, ..., certify, pursuant to 18
    U.S.C. Section 1350" states the statute's numbers, no finding."""
    return shape_of(sentence) is not None or any(
        r.search(sentence) for r in (_CERTIFYING, _META, _DEFINITION)
    )


def template_pages(passages: Iterable[tuple[tuple[int, int], str]]) -> frozenset[tuple[int, int]]:
    """The pages (``(document, page)`` keys of their passages' texts) that are templates: they are
    signed ("/s/", "By:", "Date:") and most of their prose is boilerplate, by shape ("I ...
    certify", "pursuant to section ...", "incorporated by reference") or by repetition: runs of
    ``SHINGLE`` words that signed pages of ``COMMON_DOCUMENTS`` documents or more carry, however
    each filer wraps and enumerates them. Officers' certifications, an auditor's letter and
    signature pages are; a signed agreement, or a company's risk factors repeated in each of its
    own filings, are not."""
    texts: dict[tuple[int, int], list[str]] = {}
    for key, text in passages:
        texts.setdefault(key, []).append(text)
    shingles: dict[tuple[int, int], set[tuple[str, ...]]] = {}
    shaped: dict[tuple[int, int], float] = {}  # page -> share of its prose in shaped sentences
    carriers: dict[tuple[str, ...], set[int]] = {}
    for key, parts in texts.items():
        page = "\n".join(parts)
        if not _SIGNATURE.search(page):
            continue
        prose = " ".join(line for line in page.split("\n") if " = " not in line)
        words = _KEY_WORD.findall(prose.lower())  # a page, once: not through ``_key``'s cache
        said = split_sentences(prose)
        shaped[key] = sum(len(x.split()) for x in said if _signed_statement(x)) / max(1, len(words))
        shingles[key] = {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}
        for shingle in shingles[key]:
            carriers.setdefault(shingle, set()).add(key[0])
    out = set()
    for key, runs in shingles.items():
        common = sum(1 for run in runs if len(carriers[run]) >= COMMON_DOCUMENTS)
        if shaped[key] >= COMMON_SHARE or (runs and common >= COMMON_SHARE * len(runs)):
            out.add(key)
    return frozenset(out)


def document_of(url: str) -> str:
    """The document a source URL belongs to (pages of one file are one document)."""
    return url.split("#", 1)[0]


__all__ = [
    "boilerplate",
    "boilerplate_share",
    "chart_text",
    "document_of",
    "note_to_entry",
    "off_topic",
    "points_elsewhere",
    "repeated",
    "shape_of",
    "template_pages",
]
