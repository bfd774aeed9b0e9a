"""arXiv papers through its Atom API (``/api/query``), parsed with ``xml.etree``.

The API has its own query language (``all:term AND ...``); free text is turned into terms joined
with AND, and arXiv ids found in the query are looked up directly with ``id_list``. The API
reports bad queries as a feed whose single entry is an error, which becomes a ``ProviderError``.
Documents declaring a DTD or entities are refused: a search feed never needs them.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET

import httpx

from deepresearch.errors import ProviderError
from deepresearch.providers.search.transport import (
    DEFAULT_TIMEOUT_S,
    Clock,
    clean_text,
    ranked_hits,
    request,
)
from deepresearch.schemas import SearchHit
from deepresearch.text.terms import STOPWORDS

_NS = {"a": "http://www.w3.org/2005/Atom"}
_ARXIV_ID = re.compile(r"\b(\d{4}\.\d{4,5}(?:v\d+)?)\b")
_TERM = re.compile(r"[A-Za-z0-9][\w+-]*")
_OPERATORS = frozenset({"and", "or", "not", "andnot"})
MAX_TERMS = 8


def arxiv_query(query: str) -> dict[str, str]:
    """Query parameters for ``query``: ``id_list`` for arXiv ids, else AND-ed ``all:`` terms."""
    ids = _ARXIV_ID.findall(query)
    if ids:
        return {"id_list": ",".join(dict.fromkeys(ids))}
    terms = [t for t in _TERM.findall(query) if t.lower() not in STOPWORDS | _OPERATORS]
    if not terms:
        terms = _TERM.findall(query)
    terms = list(dict.fromkeys(terms))[:MAX_TERMS]
    return {"search_query": " AND ".join(f"all:{t}" for t in terms)}


def _text(entry: ET.Element, path: str) -> str:
    node = entry.find(path, _NS)
    return (node.text or "").strip() if node is not None else ""


def parse_feed(provider: str, body: bytes) -> list[tuple[str, str, str]]:
    """(url, title, snippet) per entry, in feed order."""
    head = body[:2048].lower()
    if b"<!doctype" in head or b"<!entity" in body.lower():
        raise ProviderError(provider, "feed declares a DTD or entities; refused", False)
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        raise ProviderError(provider, "response is not a valid Atom feed", False) from None
    found: list[tuple[str, str, str]] = []
    for entry in root.findall("a:entry", _NS):
        entry_id = _text(entry, "a:id")
        if "/api/errors" in entry_id:
            reason = clean_text(_text(entry, "a:summary"), 200) or "query error"
            raise ProviderError(provider, f"query rejected: {reason}", False)
        url = entry_id
        for link in entry.findall("a:link", _NS):
            if link.get("rel") == "alternate" and link.get("href"):
                url = link.get("href", url)
        url = re.sub(r"^http://", "https://", url)
        authors = [_text(a, "a:name") for a in entry.findall("a:author", _NS)]
        published = _text(entry, "a:published")[:4]
        byline = ", ".join(a for a in authors[:3] if a) + (" et al." if len(authors) > 3 else "")
        head_line = " ".join(p for p in (byline, f"({published})" if published else "") if p)
        summary = clean_text(_text(entry, "a:summary"), 320)
        snippet = f"{head_line}. {summary}" if head_line else summary
        found.append((url, _text(entry, "a:title"), snippet))
    return found


class ArxivSearch:
    """``SearchProvider`` over arXiv's export API."""

    name = "arxiv"
    MAX_RESULTS = 100

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str = "https://export.arxiv.org",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        clock: Clock = time.time,
    ) -> None:
        self._client = client
        self.base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._clock = clock

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        wanted = max(1, min(limit, self.MAX_RESULTS))
        params: dict[str, str | int] = {
            **arxiv_query(query),
            "start": 0,
            "max_results": wanted,
            "sortBy": "relevance",
        }
        response = await request(
            self._client,
            self.name,
            "GET",
            f"{self.base_url}/api/query",
            params=params,
            headers={"Accept": "application/atom+xml"},
            timeout_s=self._timeout_s,
            clock=self._clock,
        )
        return ranked_hits(self.name, parse_feed(self.name, response.content), limit)
