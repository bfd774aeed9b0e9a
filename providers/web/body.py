"""Response bodies for the safe fetcher: capped incremental decompression and content sniffing.

A few kilobytes of gzip or brotli can expand to gigabytes, so bodies are read raw and decoded
here chunk by chunk, never producing more than the cap plus one byte before giving up. The kind
of a document is decided from its first bytes as much as from its declared type, since servers
label PDFs ``application/octet-stream`` and error pages ``application/pdf``.
"""

from __future__ import annotations

import importlib
import zlib
from typing import Any, Literal, Protocol

from deepresearch.errors import FetchError
from deepresearch.providers.documents.extract_office import ZipKind, zip_kind

Kind = Literal["html", "pdf", "text", "csv"] | ZipKind
CSV_TYPES = frozenset({"text/csv", "application/csv", "text/tab-separated-values"})

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "text/xml",
        "application/rss+xml",
        "application/atom+xml",
    }
)
# declared types refused before the body is read: never worth downloading
BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/")
_HTML_STARTS = (
    b"<!doctype html",
    b"<html",
    b"<head",
    b"<body",
    b"<title",
    b"<!--",
    b"<meta",
    b"<?xml",
)


def _brotli() -> Any | None:
    try:
        return importlib.import_module("brotli")
    except ImportError:  # optional: without it we never ask for br
        return None


def accept_encoding() -> str:
    """The encodings we can decode with a cap (``br`` only when the brotli module is present)."""
    return "gzip, deflate, br" if _brotli() is not None else "gzip, deflate"


class _Decoder(Protocol):
    def feed(self, data: bytes, room: int) -> bytes:
        """Decode ``data``; may stop early once more than ``room`` bytes came out."""
        ...


class _Identity:
    def feed(self, data: bytes, room: int) -> bytes:
        return data


class _Zlib:
    """gzip (possibly multi-member), zlib-wrapped deflate, or raw deflate (detected from the header)."""

    def __init__(self, encoding: str) -> None:
        self._wbits: int | None = 16 + zlib.MAX_WBITS if encoding == "gzip" else None
        self._d: Any = zlib.decompressobj(self._wbits) if self._wbits is not None else None

    def feed(self, data: bytes, room: int) -> bytes:
        if self._d is None:  # "deflate" is zlib-wrapped by the RFC, raw by some servers
            wrapped = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._wbits = zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS
            self._d = zlib.decompressobj(self._wbits)
        out = bytearray()
        while data:
            out += self._d.decompress(data, room - len(out) + 1)  # never 0: 0 means unlimited
            if len(out) > room:
                break
            data = self._d.unconsumed_tail
            if (
                not data
                and self._d.eof
                and self._d.unused_data
                and self._wbits == 16 + zlib.MAX_WBITS
            ):
                data = self._d.unused_data  # next gzip member
                self._d = zlib.decompressobj(self._wbits)
        return bytes(out)


class _Brotli:
    def __init__(self, module: Any) -> None:
        self._d = module.Decompressor()

    def feed(self, data: bytes, room: int) -> bytes:
        out = bytearray(self._d.process(data, output_buffer_limit=room + 1))
        while len(out) <= room and not self._d.can_accept_more_data():
            out += self._d.process(b"", output_buffer_limit=room - len(out) + 1)
        return bytes(out)


class CappedDecoder:
    """Decodes one body's ``Content-Encoding`` incrementally; ``FetchError`` past ``max_bytes``,
    or with ``truncate`` the first ``max_bytes`` are kept and ``full`` tells the reader to stop."""

    def __init__(
        self, url: str, content_encoding: str, max_bytes: int, *, truncate: bool = False
    ) -> None:
        self.url = url
        self.max_bytes = max_bytes
        self.truncate = truncate
        self.full = False
        self._parts: list[bytes] = []
        self._size = 0
        encoding = content_encoding.strip().lower()
        decoder: _Decoder
        if encoding in ("", "identity"):
            decoder = _Identity()
        elif encoding in ("gzip", "x-gzip", "deflate"):
            decoder = _Zlib("gzip" if encoding != "deflate" else "deflate")
        elif encoding == "br" and (module := _brotli()) is not None:
            decoder = _Brotli(module)
        else:
            raise FetchError(url, f"unsupported content-encoding {encoding!r}")
        self._decoder = decoder

    def feed(self, chunk: bytes) -> None:
        try:
            out = self._decoder.feed(chunk, self.max_bytes - self._size)
        except Exception as exc:  # zlib.error, brotli.error: a corrupt stream
            raise FetchError(self.url, f"corrupt compressed body ({exc})") from None
        if self._size + len(out) > self.max_bytes:
            if not self.truncate:
                raise FetchError(self.url, f"decoded body over {self.max_bytes} bytes")
            out, self.full = out[: self.max_bytes - self._size], True
        self._size += len(out)
        self._parts.append(out)

    def body(self) -> bytes:
        return b"".join(self._parts)


def media_type(content_type: str) -> tuple[str, str | None]:
    """``("text/html", "utf-8")`` from ``"text/html; charset=UTF-8"``."""
    main, _, params = content_type.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").lower()
    return main.strip().lower(), charset


def refused_before_body(declared: str) -> bool:
    """Declared types that no sniffing will turn into a document (images, audio, video, fonts)."""
    return declared.startswith(BINARY_PREFIXES)


def sniff(url: str, declared: str, body: bytes) -> Kind:
    """The document kind from the first bytes and the declared type; ``FetchError`` for the rest."""
    head = body[:1024]
    if b"%PDF-" in head:  # the PDF header may follow up to 1 KiB of junk
        return "pdf"
    if head.startswith(b"PK\x03\x04"):  # DOCX, PPTX, XLSX and EPUB are zip files
        kind = zip_kind(body)  # names only, bounded: a zip bomb is not inflated here
        if kind is None:
            raise FetchError(url, "a zip archive that is not a DOCX, PPTX, XLSX or EPUB document")
        return kind
    if declared == "application/pdf":
        raise FetchError(url, "declared application/pdf but has no PDF header")
    if b"\x00" in head:
        raise FetchError(url, f"binary content ({declared or 'no type'}) is not a document")
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if declared in HTML_TYPES or (start.startswith(_HTML_STARTS) and declared != "text/plain"):
        return "html"
    if declared in CSV_TYPES:
        return "csv"
    if declared.startswith("text/") or declared in TEXT_TYPES:
        return "text"
    if declared in ("", "application/octet-stream", "binary/octet-stream") and _printable(head):
        return "text"
    raise FetchError(url, f"unsupported content type {declared or '(none)'}")


def _printable(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    good = sum((ch.isprintable() or ch.isspace()) and ch != "\ufffd" for ch in text)
    return bool(text) and good >= 0.95 * len(text)


def decode_text(body: bytes, charset: str | None) -> str:
    """Plain text in its declared charset, else UTF-8 (undecodable bytes replaced)."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name
        return body.decode("utf-8", errors="replace")
