"""What every extractor returns (``ExtractedDoc``), and the HTML extractor: web pages, ``.html``
files and EPUB chapters (``extract_office``) share it, so it sits below both dispatchers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape

_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")
_SCRIPT_RE = re.compile(r"<(script|style)[^>]*>.*?</\1>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class ExtractedDoc:
    """A document's text: one entry per page (page n is ``pages[n-1]``): a PDF page, a slide, a
    worksheet or an EPUB spine document (``PAGE_LABELS``); one entry for other kinds."""

    title: str
    pages: tuple[str, ...]
    content_type: str
    published: str = ""  # publish date (ISO) when the page states one


def html_doc(html: str, name: str) -> ExtractedDoc:
    """Main text, title and publish date of an HTML page (markup-stripped when trafilatura fails)."""
    import trafilatura

    from deepresearch.text.artefacts import clean_html_markup, clean_html_text
    from deepresearch.text.grid_tables import rows_from_pipes

    markup = clean_html_markup(html)  # anchors out, <dt> with its <dd>, source wraps as spaces
    text = trafilatura.extract(markup, include_tables=True, include_comments=False) or ""
    text = rows_from_pipes(clean_html_text(text))  # table rows with their headers and caption
    title = published = ""
    meta = trafilatura.extract_metadata(html)
    if meta is not None and meta.title:
        title = str(meta.title)
    if meta is not None and meta.date:
        published = str(meta.date)
    if not title:
        match = _TITLE_RE.search(html)
        title = " ".join(_TAG_RE.sub("", match.group(1)).split()) if match else ""
    if not text.strip():  # too short or too odd for trafilatura: fall back to stripped markup
        text = "\n".join(
            " ".join(line.split())
            for line in _TAG_RE.sub("\n", _SCRIPT_RE.sub("", html)).split("\n")
        )
        text = clean_html_text(unescape(re.sub(r"\n{2,}", "\n", text).strip()))
    title = clean_html_text(title).strip()  # a heading's anchor mark in the page's title
    return ExtractedDoc(title or name, (text,), "text/html", published)
