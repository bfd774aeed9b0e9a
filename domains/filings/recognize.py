"""Whether a document is a financial filing, from its content: a cover stating the period the
report covers and who files it, and financial statement tables (a balance sheet, a statement of
operations or of cash flows, as self-describing rows). Either kind of evidence alone is enough
(an earnings release has the tables, a filing's first pages the cover); a file's name counts
for nothing. Pure.
"""

from __future__ import annotations

import re

from deepresearch.domains.filings.periods import period_end
from deepresearch.text.tables import parse_row

COVER_CHARS = 6000  # a cover is the top of the first page
TABLE_LINES = 4000  # lines read for statement tables: a report's statements come early
# a cover's words for a periodic report and who files it (any regulator's form)
_COVER = re.compile(
    r"\bregistrant\b|\breport pursuant to\b|\bfile number\b|\bexact name of\b"
    r"|\b(?:quarterly|annual|interim|semi-?annual) report\b|\bform \d{1,2}-?[a-z]{1,2}\b",
    re.IGNORECASE,
)
# the titles financial statements carry; and line items only they hold
_STATEMENT = re.compile(
    r"\bbalance sheets?\b|\bstatements? of (?:financial position|operations|income|earnings"
    r"|cash flows?|comprehensive (?:income|loss)|(?:stock|share)holders.? equity)\b",
    re.IGNORECASE,
)
_LINE_ITEM = re.compile(
    r"^(?:total assets|total liabilities|net (?:income|loss|earnings)|cash and cash equivalents"
    r"|total (?:stockholders|shareholders).? equity|(?:basic|diluted) (?:earnings|net income))\b",
    re.IGNORECASE,
)
COVER_SIGNS = 2  # of a dated period and the cover's words, this many make a cover
STATEMENT_ITEMS = 2  # statement line items in table rows that make statement tables


def cover_score(first_page: str) -> float:
    """1 when the top of the first page reads as a periodic report's cover, else 0."""
    top = first_page[:COVER_CHARS]
    signs = {m[0].lower() for m in _COVER.finditer(top)}
    return 1.0 if len(signs) + (period_end(top) > 0) >= COVER_SIGNS else 0.0


def statement_score(text: str) -> float:
    """1 when ``text``'s table rows are financial statements: rows of a table titled as one,
    or ``STATEMENT_ITEMS`` of their line items, else 0."""
    items: set[str] = set()
    for line in text.splitlines()[:TABLE_LINES]:
        if " = " not in line:
            continue
        row = parse_row(line)
        if row is None:
            continue
        if _STATEMENT.search(row.title):
            return 1.0
        if m := _LINE_ITEM.match(row.label.strip()):
            items.add(m[0].lower())
            if len(items) >= STATEMENT_ITEMS:
                return 1.0
    return 0.0


def filing_score(text: str) -> float:
    """How much a document (its first pages, ``text``) is a filing: half for a cover, half for
    statement tables."""
    return 0.5 * cover_score(text) + 0.5 * statement_score(text)


__all__ = ["cover_score", "filing_score", "statement_score"]
