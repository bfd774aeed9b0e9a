"""The words a question's analysis knows (``text.question``): capitalized words that are never
the entity asked about, words that frame a question rather than name what it measures, and the
filings' plain-English equivalents of what questions ask for ("net sales" ~ "revenue").

Kept apart from the grammar that reads them: the lists grow with every kind of question met.
"""

from __future__ import annotations

import re

from deepresearch.text.periods import MONTHS
from deepresearch.text.terms import terms

# Capitalized words that are never the entity asked about: question words, months, document and
# period labels, generic reporting acronyms.
NOT_NAMES = {
    "what", "which", "who", "how", "when", "where", "why", "did", "does", "do", "is", "are",
    "was", "were", "has", "have", "can", "could", "would", "should", "will", "the", "a", "an",
    "in", "for", "of", "and", "or", "compare", "list", "describe", "explain", "please", "give",
    "q1", "q2", "q3", "q4", "fy", "h1", "h2", "sec", "gaap", "non-gaap", "us", "u.s", "usd",
    "eps", "ceo", "cfo", "form", "quarter", "fiscal", "i", "based", "according", "across",
    "during", "between", "from", "to", "on", "at", "by", "with", "its", "their", "total", "net",
    "if", "so", "then", "also", "had", "as", "ytd",
    *(m for m in MONTHS), *(m[:3] for m in MONTHS),
}  # fmt: skip
# who a possessive names when it names no one in particular ("the company's revenue")
GENERIC_OWNERS = frozenset(
    {
        "company", "companies", "firm", "business", "organization", "industry", "sector",
        "market", "group", "segment", "division", "unit", "management", "board", "team",
        "government", "country", "world", "customer", "customers", "competitor", "competitors",
        "quarter", "year", "month", "period", "report", "filing", "statement", "today", "it",
        "who", "one", "other", "others", "everyone", "nobody", "its", "their", "our",
    }
)  # fmt: skip
# Words that frame the question (shape, document, time) rather than name what is measured.
FRAME = {
    "what", "which", "who", "how", "when", "where", "why", "did", "does", "do", "is", "are",
    "was", "were", "has", "have", "had", "hold", "holds", "held", "be", "been", "the", "a",
    "an", "of", "for", "in", "on", "at", "by", "from", "to", "with", "and", "or", "its", "their", "his", "her", "it", "they",
    "this", "that", "these", "those", "company", "company's", "companies", "report", "reported",
    "reports", "filing", "filings", "10-q", "10-k", "form", "quarter", "quarters", "quarterly",
    "period", "periods", "year", "years", "fiscal", "ended", "ending", "end", "latest", "most",
    "recent", "last", "current", "across", "over", "time", "trend", "trends", "change",
    "changed", "changes", "compare", "compared", "comparison", "between", "versus", "vs", "vs.",
    "much", "many", "amount", "value", "figure", "during", "as", "per", "each", "both", "all",
    "any", "some", "can", "could", "would", "please", "tell", "me", "give", "show",
    "list", "describe", "explain", "about", "there", "than", "into", "within", "q1", "q2",
    "q3", "q4", "fy", "based", "according", "document", "documents", "statement", "statements",
    "fluctuate", "fluctuated", "fluctuation", "fluctuations", "evolve", "evolved", "respectively",
    "perform", "performed", "performance", "year-over-year", "relative", "differ", "difference",
    "differences", "against", "stacks", "measures", "varied", "vary", "allocate", "allocated",
    "sec", "provide", "provided", "stated", "state", "say", "says", "mentioned",
    "months", "month", "three", "six", "nine", "twelve", "three-month", "nine-month", "so",
    "far", "our", "we", "you", "your", "new", "being", "up", "down", "if", "not", "no",
    "significant", "notable", "major", "key", "main", "primary", "considerable", "substantial",
    "identified", "identifiable", "might", "may", "potentially", "potential", "seen", "reporting", "timeframe", "throughout", "disclosed", "previous", "prior",
    "ones", "same", "other", "such", "qs", "10-qs", "outline",
    "summarize", "comparing", "shift", "shifts", "variations", "trended", "alterations",
    "one", "two", "four", "five", "seven", "eight", "ten", "higher",
    "lower", "larger", "smaller", "bigger", "past", "next", "then", "also",
    # words about the analysis asked for, not about what is measured ("how does the discussion
    # of X relate to Y", "what insights can be gleaned from X")
    "analyze", "analyse", "analysis", "examine", "assess", "relationship", "relate", "relates",
    "correlate", "correlates", "correlation", "connection", "discussion", "discussions",
    "discussed", "discuss", "insight", "insights", "information", "detail", "details",
    "section", "sections", "disclose", "discloses", "align", "aligns", "measure", "stack",
    "glean", "gleaned", "discern", "discerned", "pattern", "patterns", "indicate", "suggest",
    "reveal", "revealed", "highlight", "highlighted", "outlined", "announce", "announced",
    "engage", "engaged", "combine", "understand", "implication", "implications", "impact",
    "affect", "affected", "affecting", "effect", "effects", "influence", "influenced",
    "reflect", "specific", "specifically", "particular", "particularly", "various", "diverse",
    "elements", "correspond", "shared", "mention", "regarding",
    # the part something plays, not the thing ("what role have X played", "the chief factor",
    # "the driver behind X", "provide a breakdown", "list this out separately"), and the
    # qualifiers around it ("financial results", "debt strategy"): no line item is named so
    "role", "roles", "play", "played", "plays", "factor", "factors", "driver", "drivers",
    "behind", "chief", "breakdown", "separately", "out", "associated", "contributing",
    "contributors", "contributor", "evolution", "transformed", "significantly", "especially",
    "financial", "financials", "outcomes", "results", "strategy", "strategies",
    # what moved it, not what it is ("the principal influences on", "what drove", "the reasons
    # behind the decline in", "what caused the increase in")
    "principal", "influences", "drove", "drive", "drives", "driven", "reason", "reasons",
    "cause", "caused", "causes", "increase", "increases", "increased", "decrease",
    "decreases", "decreased", "decline", "declines", "declined", "rise", "rose", "growth",
    # and words no filing uses for what it reports ("revenue figures", "debt configuration")
    "figures", "configuration", "repercussions", "escalating", "arisen", "newly", "aside",
    "prioritized", "priorities",
    # a balance asked for ("inventory levels", "cash levels", "cash balance"; ``Question.level``
    # says so): not the fair-value hierarchy's "Level 2" a filing tabulates, nor "Ending balances"
    "levels", "balance", "balances",
}  # fmt: skip
# Plain-English equivalents of financial line items: a company reports "revenue" where the
# question says "net sales", "net income" where it says "earnings".
SYNONYMS: dict[str, tuple[str, ...]] = {
    "sales": ("revenue", "revenues"),
    "revenue": ("sales",),
    "revenues": ("sales",),
    "earnings": ("income",),
    "profit": ("income",),
    "margin": ("profit",),  # "gross margin" in dollars is what some filers call gross profit
    "costs": ("expenses",),
    "expenses": ("costs",),
    "spending": ("expenses",),
    "expenditures": ("expenses",),  # "operational expenditures" are operating expenses
    "expenditure": ("expenses",),
    "exchange": ("currency", "currencies"),  # "foreign exchange rates" ~ "foreign currencies"
    "currency": ("exchange",),
    "currencies": ("exchange",),
    "buybacks": ("repurchases", "repurchased"),
    # "operating cash flow" is "net cash provided by operating activities"
    "flow": ("activities",),
    "flows": ("activities",),
    "repurchases": ("repurchased",),
    "debt": ("notes", "borrowings", "loan"),  # a filer's debt is its notes, borrowings, loans
    "rate": ("percentage",),  # "income tax as a percentage of income before income tax"
    "legal": ("litigation", "lawsuit", "lawsuits"),  # what a filer calls its legal proceedings
}  # for scorers that weigh what a question is about
# the same, as stemmed terms (``terms``): what scorers compare
SYNONYM_TERMS: dict[str, frozenset[str]] = {
    t: frozenset(x for v in alike for x in terms(v))
    for w, alike in SYNONYMS.items()
    for t in terms(w)
}

# what an amount is called, whoever reports it: "what revenue did X report" asks for a figure,
# "what legal proceedings did X disclose" does not
AMOUNT_NOUNS = frozenset(
    terms("revenue revenues sales income earnings margin profit expenses costs spending cash debt")
)

# Abbreviations of line items, spelled out as filings print them: "R&D" is no name and its
# letters are no words, so unexpanded it matches no row ("Research and development").
ABBREVIATIONS: dict[str, str] = {
    "R&D": "research and development",
    "SG&A": "selling, general and administrative",
    "PP&E": "property, plant and equipment",
    "D&A": "depreciation and amortization",
    "M&A": "mergers and acquisitions",
    "capex": "capital expenditures",
    "EPS": "earnings per share",
    "FX": "foreign exchange",
}
# What a cash-flow statement calls spending that questions name otherwise: capital expenditures
# are the purchases of (payments for, additions to) property and equipment, whatever the filer
# ("Payments for acquisition of property, plant and equipment", "Additions to property and
# equipment"); never "expenses", which are the income statement's
_CAPEX = "purchases payments additions acquisition property plant equipment"
CASH_FLOW_NAMES: dict[str, str] = {
    "capital expenditures": _CAPEX,
    "capital expenditure": _CAPEX,
    "capital spending": _CAPEX,
}
_CASH_FLOW_NAME = re.compile(
    r"\b(" + "|".join(map(re.escape, sorted(CASH_FLOW_NAMES, key=len, reverse=True))) + r")\b",
    re.IGNORECASE,
)


def cash_flow_names(text: str) -> list[str]:
    """The ``CASH_FLOW_NAMES`` phrases ``text`` holds, lower case, in order."""
    return [m.lower() for m in _CASH_FLOW_NAME.findall(text)]


def equivalents(text: str) -> dict[str, frozenset[str]]:
    """Per stemmed term of ``text``, the terms a filing may state it by: ``SYNONYM_TERMS``, and
    for the words of a ``CASH_FLOW_NAMES`` phrase the words it is filed as instead ("capital
    expenditures": property, equipment; not "expenses")."""
    out = {t: SYNONYM_TERMS[t] for t in terms(text) if t in SYNONYM_TERMS}
    for name in cash_flow_names(text):
        filed = frozenset(terms(CASH_FLOW_NAMES[name]))
        out.update(dict.fromkeys(terms(name), filed))
    return out


# Line items whose "and" or comma is part of the name, not a list of two metrics, or one of whose
# words frames questions elsewhere ("risk factors", not "the chief factor")
COMPOUNDS = (
    "risk factors",
    "selling, general and administrative",
    "property, plant and equipment",
    "research and development",
    "general and administrative",
    "sales and marketing",
    "property and equipment",
    "cash and cash equivalents",
    "mergers and acquisitions",
    "depreciation and amortization",
    "gains and losses",
    "profit and loss",
    "terms and conditions",
)
# each compound's words around its "and": a coordination there is a name, not two conjuncts
COMPOUND_PAIRS = frozenset(
    (words[i - 1], words[i + 1])
    for c in COMPOUNDS
    for words in [c.replace(",", "").split()]
    for i, w in enumerate(words)
    if w == "and"
)
_ABBREVIATION = re.compile(
    r"(?<![\w&])(" + "|".join(re.escape(a) for a in ABBREVIATIONS) + r")(?![\w&])", re.I
)
_BY_LOWER = {a.lower(): full for a, full in ABBREVIATIONS.items()}


def expand_abbreviations(text: str) -> str:
    """``text`` with each line-item abbreviation spelled out ("Intel's R&D expenditure" ->
    "Intel's research and development expenditure")."""
    return _ABBREVIATION.sub(lambda m: _BY_LOWER[m.group(1).lower()], text)


__all__ = [
    "ABBREVIATIONS",
    "AMOUNT_NOUNS",
    "CASH_FLOW_NAMES",
    "COMPOUNDS",
    "COMPOUND_PAIRS",
    "FRAME",
    "GENERIC_OWNERS",
    "NOT_NAMES",
    "SYNONYMS",
    "SYNONYM_TERMS",
    "cash_flow_names",
    "equivalents",
    "expand_abbreviations",
]
