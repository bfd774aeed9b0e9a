"""URL normalization and the claim book that lets each URL be read once per run.

Researchers find the same page through different providers and spellings (tracking parameters,
``HTTP://Example.com:443/a/``, ``%7E`` vs ``~``). Normalizing first makes those one key, so
the UrlPool can hand each page to one researcher and a report cites each source once. Corpus
document ids (``doc:...``) are already canonical and are never touched.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote_to_bytes, urlsplit, urlunsplit

import idna

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


MAX_URL_CHARS = 8192
MAX_HOST_CHARS = 253  # RFC 1035, in the ASCII (punycode) form, without the root dot
MAX_LABEL_CHARS = 63
LOCAL_ID_SCHEMES = ("doc:", "code:")  # corpus and code ids: parsed by their own fetchers
_LABEL = re.compile(r"[a-z0-9_-]+")  # '_' is not DNS-legal in names but real hosts use it
_HOSTPORT = re.compile(r"(?:\[[0-9a-f:.]+\]|[^\[\]@:]+)(?::[0-9]*)?")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


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


def host_problem(host: str) -> str | None:
    """Why ``host`` (as a URL spells it, brackets removed) cannot be looked up, or None.

    The resolver and the HTTP client encode names with IDNA and raise ``UnicodeError`` (not an
    ``OSError``) on an empty label (``a..b``), a label over 63 characters or an invalid punycode
    label, so every such name is refused here, before anything tries to encode it.
    """
    if not host:
        return "no host"
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return "malformed IPv6 address"
        return None
    if not host.isascii():
        try:
            host = idna.encode(host.lower()).decode("ascii")
        except UnicodeError as exc:
            return f"host is not a valid international name ({exc})"[:200]
    name = host.lower().removesuffix(".")
    if len(name) > MAX_HOST_CHARS:
        return f"host name longer than {MAX_HOST_CHARS} characters"
    for label in name.split("."):
        if not label:
            return "empty label in host name"
        if len(label) > MAX_LABEL_CHARS:
            return f"host label longer than {MAX_LABEL_CHARS} characters"
        if not _LABEL.fullmatch(label):
            return "invalid character in host name"
        if label.startswith("xn--"):
            try:
                idna.decode(label)
            except UnicodeError:
                return "invalid punycode label in host name"
    return None


def web_url_problem(url: str) -> str | None:
    """Why ``url`` is not a usable http(s) URL, or None: the one parse every web URL passes
    (search hits before they are scored, every fetch and redirect hop) so a malformed one is a
    reason to skip it, never an exception from deep inside a resolver."""
    if len(url) > MAX_URL_CHARS:
        return f"URL longer than {MAX_URL_CHARS} characters"
    if any(c.isspace() or unicodedata.category(c) == "Cc" or c in _BIDI for c in url):
        return "whitespace or control character in URL"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # an unclosed '[', a port out of 0-65535 or not a number
        return f"invalid URL ({exc})"[:200]
    if parts.scheme.lower() not in DEFAULT_PORTS:
        return f"scheme {parts.scheme or '(none)'} is not http or https"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if "\\" in parts.netloc or (at and "@" in userinfo):  # parsers disagree on the host
        return "ambiguous '@' or '\\' before the host"
    if not hostport:
        return "no host"
    if not _HOSTPORT.fullmatch(hostport.lower()):
        return "malformed host or port"
    if port == 0:
        return "port 0"
    return host_problem(parts.hostname or "")


def hit_url_problem(url: str) -> str | None:
    """``web_url_problem`` for a search hit; corpus and code ids are checked by their fetchers."""
    return None if url.startswith(LOCAL_ID_SCHEMES) else web_url_problem(url)


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
