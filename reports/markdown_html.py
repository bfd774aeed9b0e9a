"""A report's Markdown as safe HTML: the one renderer of the HTML export and the web page.

Reports quote untrusted web pages, so nothing in them may become markup of its own: raw HTML is
text (markdown-it-py with ``html`` off), images are not loaded (a remote image would be a tracking
pixel in a file meant to load nothing), and a link survives only with an http(s) address, a
relative path or an anchor (``javascript:``, ``data:`` and every other scheme stay text). Tables
(GFM pipes, as the Answer writes them), lists and fenced code come out as such; a table column's
alignment is a class (``align-right``), not a ``style`` attribute the page's CSP would refuse.

Citations work as in the Markdown: a bare ``[n]`` (``[1, 3]``) outside code and links becomes a
link to ``#source-n`` when the report's "Sources" list has an item n, and that item gets the id.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import unquote

from deepresearch.policies.verification.citations import NUMERIC_MARKER

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

SAFE_SCHEMES = frozenset({"http", "https"})
_SCHEME = re.compile(r"^([^/?#]*):")  # whatever precedes the first ":" of the path part
_ALIGN = re.compile(r"^text-align:\s*(left|center|right)$")
_SOURCES = "sources"


def safe_link(url: str) -> bool:
    """An http(s) address, a relative path or an anchor; any other scheme is refused. The check
    reads the address decoded, without whitespace or control characters, so no spelling
    ("java\\tscript:", "JAVASCRIPT%3A") slips past what a browser would make of it."""
    decoded = unquote(url)
    flat = "".join(ch for ch in decoded if ch.isprintable() and not ch.isspace())
    match = _SCHEME.match(flat)
    return match is None or match.group(1).lower() in SAFE_SCHEMES


def to_html(markdown: str) -> str:
    """The HTML fragment of ``markdown``; every text escaped, every link checked."""
    html: str = _parser().render(markdown)
    return html


@cache
def _parser() -> MarkdownIt:
    # Imported here: the CLI's start-up must not pay for the renderer it may never use.
    from markdown_it import MarkdownIt

    class _SafeMarkdown(MarkdownIt):
        def validateLink(self, url: str) -> bool:
            return safe_link(url)

    md = _SafeMarkdown("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").disable("image")
    # Before text_join: an escaped "\[1]" is still its own token there, so it is never linked.
    md.core.ruler.before("text_join", "report_markup", _report_markup)
    return md


def _report_markup(state: StateCore) -> None:
    tokens = state.tokens
    sources = _number_sources(tokens)
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            _align_by_class(token)
        elif token.type == "inline" and token.children:
            token.children = _link_citations(token.children, sources)


def _number_sources(tokens: Sequence[Token]) -> frozenset[int]:
    """Give the items of the ordered list under a "Sources" heading ids ``source-n``."""
    numbers: set[int] = set()
    for i, token in enumerate(tokens):
        heading = token.type == "heading_open" and i + 1 < len(tokens)
        if not heading or tokens[i + 1].content.strip().lower() != _SOURCES:
            continue
        close = next(j for j in range(i + 1, len(tokens)) if tokens[j].type == "heading_close")
        start = close + 1
        if start >= len(tokens) or tokens[start].type != "ordered_list_open":
            continue
        level = tokens[start].level
        for item in tokens[start + 1 :]:
            if item.type == "ordered_list_close" and item.level == level:
                break
            if item.type == "list_item_open" and item.level == level + 1 and item.info.isdigit():
                numbers.add(int(item.info))
                item.attrSet("id", f"source-{int(item.info)}")
    return frozenset(numbers)


def _align_by_class(token: Token) -> None:
    style = token.attrGet("style")
    if style is None:
        return
    del token.attrs["style"]
    match = _ALIGN.match(str(style).strip())
    if match:
        token.attrSet("class", f"align-{match.group(1)}")


def _link_citations(children: list[Token], sources: frozenset[int]) -> list[Token]:
    from markdown_it.token import Token

    def text(content: str) -> Token:
        token = Token("text", "", 0)
        token.content = content
        return token

    out: list[Token] = []
    in_link = 0
    for child in children:
        if child.type == "link_open":
            in_link += 1
            href = str(child.attrGet("href") or "")
            if href.lower().startswith(("http://", "https://", "//")):
                child.attrSet("rel", "noopener noreferrer")
        elif child.type == "link_close":
            in_link -= 1
        if child.type != "text" or in_link or not sources or "[" not in child.content:
            out.append(child)
            continue
        last = 0
        for match in NUMERIC_MARKER.finditer(child.content):
            numbers = [int(x) for x in re.split(r"\s*[,;]\s*", match.group(1).strip())]
            listed = [n for n in dict.fromkeys(numbers) if n in sources]
            if not listed:
                continue  # a number no source has: left as the text it is
            out.append(text(child.content[last : match.start()]))
            for n in listed:
                link = Token("link_open", "a", 1)
                link.attrs = {"class": "cite", "href": f"#source-{n}"}
                out.extend((link, text(f"[{n}]"), Token("link_close", "a", -1)))
            last = match.end()
        out.append(text(child.content[last:]))
    return [t for t in out if t.type != "text" or t.content]
