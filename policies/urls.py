"""URL normalization and the claim book that lets each URL be read once per run.

Researchers find the same page through different providers and spellings (tracking parameters,
``HTTP://Example.com:443/a/``, ``%7E`` vs ``~``). Normalizing first makes those one key, so
the UrlPool can hand each page to one researcher and a report cites each source once. Corpus
document ids (``doc:...``) are already canonical and are never touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote_to_bytes, urlsplit, urlunsplit

TRACKING_PARAMS = frozenset(
    {
        *("gclid", "gbraid", "wbraid", "dclid", "fbclid", "msclkid", "yclid", "twclid"),
        *("mc_cid", "mc_eid", "ref_src", "igshid", "li_fat_id", "mkt_tok"),
        *("_ga", "_gl", "_hsenc", "_hsmi"),
    }
)
DEFAULT_PORTS = {"http": 80, "https": 443}

# Characters left as they are when re-quoting (RFC 3986 sub-delims plus ':' and '@').
_PATH_SAFE = "!$&'()*+,;=:@"
_QUERY_SAFE = "!$'()*,;:@/?"


def _is_tracking(key: str) -> bool:
    lowered = key.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMS


def _normalize_host(host: str) -> str:
    host = host.lower().rstrip(".")
    if host.isascii():
        return host
    try:
        return ".".join(
            label.encode("idna").decode("ascii") if not label.isascii() else label
            for label in host.split(".")
        ).lower()
    except UnicodeError:
        return host


def _normalize_path(path: str) -> str:
    # Segment by segment so an encoded "/" (%2F) stays encoded and never splits a segment.
    segments = [quote(unquote_to_bytes(seg), safe=_PATH_SAFE) for seg in path.split("/")]
    normalized = "/".join(segments)
    if not normalized.startswith("/"):
        normalized = "/" + normalized
    stripped = normalized.rstrip("/")
    return stripped or "/"


def _normalize_query(query: str) -> str:
    kept: list[tuple[str, str | None]] = []
    for part in query.split("&"):
        if not part:
            continue
        raw_key, sep, raw_value = part.partition("=")
        key = quote_plus(unquote_to_bytes(raw_key.replace("+", " ")), safe=_QUERY_SAFE)
        if _is_tracking(unquote_to_bytes(raw_key).decode("utf-8", "replace")):
            continue
        value = (
            quote_plus(unquote_to_bytes(raw_value.replace("+", " ")), safe=_QUERY_SAFE)
            if sep
            else None
        )
        kept.append((key, value))
    kept.sort(key=lambda kv: kv[0])  # stable: repeated keys keep their relative order
    return "&".join(key if value is None else f"{key}={value}" for key, value in kept)


def normalize_url(url: str) -> str:
    """The canonical spelling of ``url``; anything but a usable http(s) URL is only stripped."""
    text = url.strip()
    if text.startswith("doc:"):
        return text
    try:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            return text
        port = parts.port
    except ValueError:
        return text
    host = _normalize_host(parts.hostname)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{host}:{port}"
    if "@" in parts.netloc:
        netloc = parts.netloc.rpartition("@")[0] + "@" + netloc
    return urlunsplit(
        (scheme, netloc, _normalize_path(parts.path), _normalize_query(parts.query), "")
    )


# --------------------------------------------------------------------------- the claim book


@dataclass(frozen=True)
class Claimed:
    url: str


@dataclass(frozen=True)
class Taken:
    url: str
    owner: str


ClaimResult = Claimed | Taken


@dataclass(frozen=True)
class ClaimBook:
    """Normalized URL -> id of the researcher that claimed it. Never mutated: ``claim`` copies."""

    claims: Mapping[str, str] = field(default_factory=dict)

    def owner(self, url: str) -> str | None:
        return self.claims.get(normalize_url(url))

    def __len__(self) -> int:
        return len(self.claims)


def claim(book: ClaimBook, url: str, owner: str) -> tuple[ClaimBook, ClaimResult]:
    """Give ``url`` to ``owner`` unless another owner has it; claiming again is idempotent."""
    key = normalize_url(url)
    current = book.claims.get(key)
    if current is None:
        return ClaimBook({**book.claims, key: owner}), Claimed(key)
    if current == owner:
        return book, Claimed(key)
    return book, Taken(key, current)


def taken_by_others(book: ClaimBook, urls: Iterable[str], owner: str) -> tuple[str, ...]:
    """The given URLs (as given, in order) whose normalized form belongs to someone else."""
    result: list[str] = []
    for url in urls:
        current = book.claims.get(normalize_url(url))
        if current is not None and current != owner:
            result.append(url)
    return tuple(result)
