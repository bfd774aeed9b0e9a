"""Text as a reader sees it, not as its code points spell it: what the intent gate judges.

A request can hide its words from a rule without changing what a person reads: a Cyrillic "а"
inside "sаrin", a zero-width space inside "ri\u200bcin", fullwidth "ｓａｒｉｎ". ``normalize`` undoes
all three (NFKC, format characters removed, look-alike letters folded to Latin) and folds case.

Look-alikes come from Unicode's confusables data as the ``confusable_homoglyphs`` package ships
it, kept to letters with a single ASCII look-alike. A word is folded only where its letters mix
Latin with look-alikes, or where it stands in Latin text and every letter has a look-alike:
Russian or Greek text stays itself, so its own words can still be read.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_WORD = re.compile(r"[^\W_]+")


@functools.cache
def lookalikes() -> dict[str, str]:
    """Non-Latin letters (Cyrillic, Greek, Armenian, ...) to the ASCII letter they look like."""
    from confusable_homoglyphs import utils  # type: ignore[import-untyped]

    table: dict[str, str] = {}
    for char, glyphs in utils.load("confusables.json").items():
        if len(char) != 1 or char.isascii() or not char.isalpha():
            continue
        if "LATIN" in unicodedata.name(char, ""):
            continue  # accented Latin letters are Latin: "é" is not a disguised "e"
        ascii_glyphs = {g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()}
        ascii_glyphs = {g for g in ascii_glyphs if g.isalnum()}
        if len(ascii_glyphs) == 1:
            table[char] = ascii_glyphs.pop()
    return table


def _latin(char: str) -> bool:
    return char.isascii() and char.isalpha()


def _fold_word(word: str, table: dict[str, str], latin_text: bool) -> str:
    if word.isascii():
        return word
    mixed = any(_latin(c) for c in word)
    disguised = latin_text and all(c in table or c.isascii() for c in word)
    if not (mixed or disguised):
        return word
    return "".join(table.get(c, c) for c in word)


def normalize(text: str) -> str:
    """NFKC, no format (category Cf) characters, look-alike letters folded, case folded, one
    space between words."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    if not text.isascii():  # folded before case: a Greek capital eta is an "H", its "η" is not
        table = lookalikes()
        letters = [c for c in text if c.isalpha()]
        latin_text = sum(_latin(c) for c in letters) * 2 > len(letters) or any(
            not w.isascii() and any(_latin(c) for c in w) for w in _WORD.findall(text)
        )  # Latin text, or text with one word already caught mixing scripts
        text = _WORD.sub(lambda m: _fold_word(m.group(0), table, latin_text), text)
    return " ".join(text.casefold().replace("’", "'").split())
