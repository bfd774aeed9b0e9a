"""Extraction artefacts out of document text, structure kept: what a reader never sees on the page.

* **hyphens** — a soft hyphen (U+00AD) is invisible; a hyphen PDFium marks as a line-end break
  ("op-tion", read as U+FFFE) or a word printed broken across two lines ("dis-\\nconnect") joins
  its halves when the joined word is used elsewhere in the document or the halves are not both
  words it uses ("manip-ulate"), else stays a hyphen ("stock-based");
* **running matter** — a foot printed on every page of a PDF (a man page's "GNU tar 1.34
  2023-... 1", page numbers aside) and lone page numbers there (running heads stay: they name
  the document, see ``drop_running_matter``);
* **markup left in text** — heading anchors ("¶", "Permalink to this heading"), footnote marks,
  Markdown link syntax (``[text](url)`` is ``text``), inline HTML tags and entities, a Markdown
  file's front matter.

Structure is kept: a definition list's term stays with its description (an option line such as
"-f, --file=ARCHIVE" printed above its description, Markdown's "term" / ": description", HTML's
``<dt>``/``<dd>``), and code (a Markdown fence, an HTML ``<pre>``) is left as written, never read
as a table or a definition. Pure functions over strings, shared by every path into the index and
by pages fetched from the web.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable, Sequence

from deepresearch.text.terms import stem

SOFT_HYPHEN = "\u00ad"
EDGE_LINES = 2  # lines at a page's foot where running feet and page numbers are printed

_WORD = re.compile(r"[A-Za-z]+")
_BROKEN = re.compile(r"([A-Za-z]+)\u00ad([A-Za-z]+)")
# a word broken at a line's end by a printed hyphen: "dis-" / "connect ..."
_LINE_BROKEN = re.compile(r"(?<![\w-])([A-Za-z]{2,})-\n([a-z]{2,})(?=[\s.,;:)]|$)[ \t]?")
_DIGITS = re.compile(r"\d+")
_ENDS = (".", "!", "?", ":")  # a line ending one is text, however often repeated
_PAGE_NUMBER = re.compile(
    r"(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?|[-–—]\s*\d{1,4}\s*[-–—]|[ivxlc]{1,6}",
    re.IGNORECASE,
)
# an option printed on its own line above its description: "-f, --file=ARCHIVE", "--help",
# "-name pattern", "-U NUM, --unified[=NUM]"
_OPTION_TERM = re.compile(
    r"[-+]{1,2}[A-Za-z0-9?#][\w.#+-]*(?:\[?=[^\s,]+\]?)?(?:\s+\[?[A-Za-z_][\w.-]*\]?)?"
    r"(?:,\s+[-+]{1,2}[A-Za-z0-9?#][\w.#+-]*(?:\[?=[^\s,]+\]?)?(?:\s+\[?[A-Za-z_][\w.-]*\]?)?)*"
)
_OPTION_START = re.compile(r"[-+]{1,2}[A-Za-z0-9?#]")
_TERM_CHARS = 48
_DESCRIPTION_START = re.compile(r"[A-Za-z(\"'“]")


# ----------------------------------------------------------------------------- hyphens


def _vocabulary(pages: Sequence[str]) -> frozenset[str]:
    """The stems of the words a document uses whole (its broken words' halves aside)."""
    words: set[str] = set()
    for page in pages:
        plain = _LINE_BROKEN.sub(" ", _BROKEN.sub(" ", page))
        words.update(w.lower() for w in _WORD.findall(plain))
    return frozenset(stem(w) for w in words)


def _joined(vocabulary: frozenset[str], hyphen: str) -> Callable[[re.Match[str]], str]:
    def join(match: re.Match[str]) -> str:
        whole = match.group(1) + match.group(2)
        halves = all(stem(half.lower()) in vocabulary for half in match.groups())
        if stem(whole.lower()) in vocabulary or not halves:  # not two words: one, broken
            return whole + ("\n" if hyphen == "\n" else "")
        if hyphen:  # left as printed
            return match.group(0)
        return match.group(1) + "-" + match.group(2)

    return join


def mend_hyphens(pages: Sequence[str]) -> tuple[str, ...]:
    """Pages with each line-end break resolved by the document's own words (see module doc)."""
    if not any(SOFT_HYPHEN in p or "-\n" in p for p in pages):
        return tuple(pages)
    vocabulary = _vocabulary(pages)
    out = []
    for page in pages:
        page = _BROKEN.sub(_joined(vocabulary, ""), page)
        page = _LINE_BROKEN.sub(_joined(vocabulary, "\n"), page)
        out.append(page.replace(SOFT_HYPHEN, "-"))  # a hyphen between anything but letters
    return tuple(out)


def drop_soft_hyphens(text: str) -> str:
    return text.replace(SOFT_HYPHEN, "")


# ----------------------------------------------------------------------------- running matter


def _feet(lines: Sequence[str]) -> list[int]:
    """The last ``EDGE_LINES`` filled lines of a page, when it has text above them."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    return filled[-EDGE_LINES:] if len(filled) > EDGE_LINES else []


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def drop_running_matter(pages: Sequence[str]) -> tuple[str, ...]:
    """Pages without the running feet printed at the foot of every page, the first included
    (digits aside: "GNU tar 1.34 2023-01-01 7"), nor page numbers there: a foot is read into
    the sentence the page leaves open. Running heads stay: a head sits above the page's text
    and names the document on every page ("GREP(1) User Commands GREP(1)", "Table of
    Contents"), which search and the cover's identity read. A line that ends a sentence is
    text however often repeated; a one-page document has no running matter to tell apart."""
    if len(pages) < 2:
        return tuple(pages)
    split = [page.split("\n") for page in pages]
    feet = [_feet(lines) for lines in split]
    seen: Counter[str] = Counter()
    for lines, at in zip(split, feet, strict=True):
        seen.update({_key(lines[i]) for i in at})
    running = {
        key for key, count in seen.items() if count == len(pages) and not key.endswith(_ENDS)
    }
    out = []
    for lines, at in zip(split, feet, strict=True):
        drop = {
            i for i in at if _key(lines[i]) in running or _PAGE_NUMBER.fullmatch(lines[i].strip())
        }
        out.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return tuple(out)


# ----------------------------------------------------------------------------- definitions


def _is_option_term(line: str) -> bool:
    text = line.strip()
    return len(text) <= _TERM_CHARS and bool(_OPTION_TERM.fullmatch(text))


def join_option_terms(text: str) -> str:
    """An option printed alone on its line ("-C, --directory=DIR") and the description under
    it as one line: the description never says which option it describes."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if (
            _is_option_term(line)
            and nxt
            and _DESCRIPTION_START.match(nxt)
            and not _OPTION_START.match(nxt)
        ):
            out.append(f"{line.strip()} {nxt}")
            i += 2
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def clean_pdf_pages(pages: Sequence[str]) -> tuple[str, ...]:
    """A PDF's pages read as printed: hyphens mended, running matter dropped, option terms kept
    with their descriptions."""
    mended = drop_running_matter(mend_hyphens(pages))
    return tuple(join_option_terms(page) for page in mended)


# ----------------------------------------------------------------------------- Markdown

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_REF_LINK = re.compile(r"!?\[([^\]\n]+)\]\[[^\]\n]*\]")
_REF_DEFINITION = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:\s+\S+.*$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+)>")
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|b|br|code|del|details|div|em|i|img|ins|kbd|mark|p|s|small|span|strong|sub"
    r"|summary|sup|u)(?:\s[^<>\n]*)?/?>",
    re.IGNORECASE,
)
_HEADING_ID = re.compile(r"^(#{1,6}\s.*?)\s*\{#[\w.:-]+\}[ \t]*$", re.MULTILINE)
_DEFINITION = re.compile(
    r"^((?![-*+]\s)[^\n\s:|#>`][^\n]*)\n(?:[ \t]*\n)?[ \t]{0,3}:[ \t]+", re.MULTILINE
)


def code_split(text: str) -> list[tuple[bool, str]]:
    """(is code, text) runs of a Markdown text: fenced blocks (fences included) and the rest."""
    runs: list[tuple[bool, list[str]]] = []
    fence = ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence:
            runs[-1][1].append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            runs.append((True, [line]))
            continue
        if not runs or runs[-1][0]:
            runs.append((False, []))
        runs[-1][1].append(line)
    return [(code, "\n".join(lines)) for code, lines in runs]


def _markdown_prose(text: str) -> str:
    text = _REF_DEFINITION.sub("", text)
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _HEADING_ID.sub(r"\1", text)
    text = _DEFINITION.sub(r"\1: ", text)
    return html.unescape(text)


def clean_markdown(text: str, prose: Callable[[str], str] | None = None) -> str:
    """A Markdown file's text as read: front matter dropped, links as their text, tags and
    entities resolved, "term" / ": description" as one line; fenced code as written. ``prose``
    runs on the text outside code after that (pipe tables into rows)."""
    text = _FRONT_MATTER.sub("", drop_soft_hyphens(text), count=1)
    out = []
    for code, run in code_split(text):
        if code:
            out.append(run)
        else:
            cleaned = _markdown_prose(run)
            out.append(prose(cleaned) if prose is not None else cleaned)
    return "\n".join(out)


# ----------------------------------------------------------------------------- HTML

_PRE = re.compile(r"(<(pre|textarea|script|style)\b.*?</\2\s*>)", re.IGNORECASE | re.DOTALL)
_ANCHOR_LINK = re.compile(
    r"<a\b[^>]*?(?:class=[\"'][^\"']*\b(?:headerlink|anchor|footnote-reference|fn-ref)\b"
    r"|title=[\"']Permalink)[^>]*>.*?</a\s*>",
    re.IGNORECASE | re.DOTALL,
)
_DT = re.compile(r"<dt\b[^>]*>", re.IGNORECASE)
_DT_DD = re.compile(r"</dt\s*>\s*<dd\b[^>]*>(?:\s*<p\b[^>]*>)?", re.IGNORECASE)
_DD_END = re.compile(r"</dd\s*>", re.IGNORECASE)
_LINE_WRAP = re.compile(r"[ \t]*\r?\n\s*")
_ANCHOR_TEXT = re.compile(
    r"[ \t]*(?:¶|Permalink to this (?:headline|heading|section))[ \t]*$", re.M
)


def clean_html_markup(markup: str) -> str:
    """An HTML page before its text is taken: heading anchors and footnote marks out, each
    ``<dt>`` term opening its ``<dd>`` description's paragraph, and a paragraph's source line
    breaks as the spaces a browser shows (``<pre>`` as written)."""
    parts = _PRE.split(markup)
    out = []
    # re.split with two groups yields: text, whole match, tag name, text, ...
    for k in range(0, len(parts), 3):
        prose = _ANCHOR_LINK.sub("", parts[k])
        prose = _DT_DD.sub(": ", _DT.sub("<p>", prose))
        out.append(_LINE_WRAP.sub(" ", _DD_END.sub("", prose)))
        if k + 1 < len(parts):
            out.append(parts[k + 1])
    return "".join(out)


def clean_html_text(text: str) -> str:
    """A page's extracted text without the anchors' marks the markup pass could not see."""
    return _ANCHOR_TEXT.sub("", drop_soft_hyphens(text))
