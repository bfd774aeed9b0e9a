"""Text made safe to echo: the one place control characters are taken out of what we show.

A query, a page title or a model's sentence can carry terminal controls: a ``\\r`` that rewrites
the line ``runs list`` printed, ESC sequences that recolour or clear the screen, BEL, NUL, the C1
controls (U+0080-U+009F, where U+009B is a one-byte CSI) and the bidirectional overrides that
make text read in a different order than it is stored. Everything that is printed to a terminal
or written as a title or heading passes through ``printable``.
"""

from __future__ import annotations

import re

# line and paragraph breaks and tabs: one space each, so words stay apart on one line
_BREAKS = re.compile(r"[\t\n\v\f\r\x1c-\x1f\x85\u2028\u2029]")
# C0 controls, DEL, C1 controls, and the bidirectional marks, embeddings, overrides and isolates
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"\r\n?|[\v\f\x1c-\x1e\x85\u2028\u2029]")


def printable(text: str, *, keep_lines: bool = False) -> str:
    """``text`` without control or bidi-override characters; breaks and tabs become spaces, or
    with ``keep_lines`` line breaks become ``\\n`` (and tabs stay) for multi-line prose."""
    if keep_lines:
        text = _LINE_BREAKS.sub("\n", text)
        return _CONTROLS.sub(lambda m: m.group() if m.group() in "\n\t" else "", text)
    return _CONTROLS.sub("", _BREAKS.sub(" ", text))
