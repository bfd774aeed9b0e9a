"""The fetcher's address rule (check_url), body decoding caps and content sniffing; no network."""

from __future__ import annotations

import gzip
import importlib
import ipaddress
import zlib
from collections.abc import Sequence

import pytest

from deepresearch.errors import FetchBlocked, FetchError
from deepresearch.providers.testing.fake_web import build_pdf, static_resolver
from deepresearch.providers.web.body import CappedDecoder, media_type, sniff
from deepresearch.providers.web.netguard import PinnedAddress, check_url

# (address, a word the refusal reason must contain)
BLOCKED: list[tuple[str, str]] = [
    ("10.1.2.3", "private"),
    ("10.255.255.255", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.1", "private"),
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("febf::1", "link-local"),
    ("169.254.1.1", "link-local"),
    ("169.254.169.254", "metadata"),
    ("fd00:ec2::254", "metadata"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "metadata"),
    ("::127.0.0.1", "loopback"),
    ("64:ff9b::a9fe:a9fe", "metadata"),
    ("64:ff9b::7f00:1", "loopback"),
    ("64:ff9b:1::a00:1", "NAT64"),
    ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
    ("100.64.0.1", "shared"),
    ("100.127.255.254", "shared"),
    ("198.18.0.1", "private"),
    ("198.19.255.255", "private"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("2001:db8::1", "private"),
    ("192.0.2.1", "private"),
]


def resolver_for(*addresses: str):  # type: ignore[no-untyped-def]
    return static_resolver({"site.test": addresses})


async def no_dns(host: str, port: int) -> Sequence[str]:
    raise AssertionError(f"resolver called for {host}")


@pytest.mark.parametrize(("address", "word"), BLOCKED)
async def test_every_non_public_address_is_refused_by_name(address: str, word: str) -> None:
    with pytest.raises(FetchBlocked) as info:
        await check_url("http://site.test/page", resolve=resolver_for(address))
    assert word.lower() in info.value.reason.lower()
    assert info.value.url == "http://site.test/page"


@pytest.mark.parametrize(("address", "word"), BLOCKED)
async def test_every_non_public_address_is_refused_as_a_literal(address: str, word: str) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(FetchBlocked) as info:
        await check_url(f"https://{host}:8443/x", resolve=no_dns)
    assert word.lower() in info.value.reason.lower()


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://site.test:70/_GET",
        "ftp://site.test/file",
        "javascript:alert(1)",
        "data:text/html,hi",
        "//site.test/no-scheme",
        "http:///no-host",
        "not a url at all",
    ],
)
async def test_only_http_and_https_with_a_host(url: str) -> None:
    with pytest.raises(FetchBlocked):
        await check_url(url, resolve=resolver_for("93.184.216.34"))


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",  # 127.0.0.1 as one number
        "http://0x7f.0.0.1/",
        "http://0177.0.0.1/",  # octal
        "http://127.1/",
        "http://0x7f000001/",
        "http://10.0.0.1./",  # trailing dot
        "http://[::ffff:7f00:1]/",
        "http://[fe80::1%25eth0]/",  # zone id
        "http://999.1.1.1/",  # numeric but malformed: never sent to a resolver
    ],
)
async def test_numeric_host_forms_never_reach_the_resolver(url: str) -> None:
    with pytest.raises(FetchBlocked):
        await check_url(url, resolve=no_dns)


@pytest.mark.parametrize(
    "host",
    ["localhost", "LOCALHOST.", "api.localhost", "metadata.google.internal", "metadata.goog"],
)
async def test_loopback_and_metadata_names_are_refused(host: str) -> None:
    with pytest.raises(FetchBlocked):
        await check_url(f"http://{host}/", resolve=resolver_for("93.184.216.34"))


async def test_a_mixed_answer_is_refused_and_a_public_one_pinned() -> None:
    with pytest.raises(FetchBlocked, match=r"10.0.0.7"):
        await check_url("http://site.test/", resolve=resolver_for("93.184.216.34", "10.0.0.7"))
    pinned = await check_url(
        "https://user:pw@Site.Test/a?b=1", resolve=resolver_for("93.184.216.34", "2606:2800::1")
    )
    assert pinned == PinnedAddress(host="site.test", port=443, ip="93.184.216.34")


@pytest.mark.parametrize("address", ["::ffff:8.8.8.8", "64:ff9b::808:808", "2606:4700::1111"])
async def test_public_addresses_in_ipv6_forms_pass(address: str) -> None:
    assert (await check_url("http://site.test:8080/", resolve=resolver_for(address))).port == 8080


async def test_resolution_failure_is_a_fetch_error_not_a_block() -> None:
    with pytest.raises(FetchError, match="cannot resolve"):
        await check_url("http://unknown.test/", resolve=resolver_for("1.1.1.1"))

    async def empty(host: str, port: int) -> Sequence[str]:
        return []

    with pytest.raises(FetchError, match="no addresses"):
        await check_url("http://site.test/", resolve=empty)


async def test_allow_private_lifts_the_address_rule_but_not_metadata() -> None:
    for address in ("127.0.0.1", "10.0.0.1", "::1", "fe80::1", "100.64.0.1", "::ffff:192.168.0.1"):
        pinned = await check_url(
            "http://site.test/", resolve=resolver_for(address), allow_private=True
        )
        assert ipaddress.ip_address(pinned.ip) == ipaddress.ip_address(address)
    for address in ("169.254.169.254", "fd00:ec2::254", "0.0.0.0", "224.0.0.1"):
        with pytest.raises(FetchBlocked):
            await check_url("http://site.test/", resolve=resolver_for(address), allow_private=True)
    with pytest.raises(FetchBlocked, match="metadata"):
        await check_url("http://metadata.google.internal/", allow_private=True, resolve=no_dns)


async def test_allowed_private_hosts_is_per_name() -> None:
    resolve = static_resolver({"fake.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    allowed = {"fake.test"}
    assert (
        await check_url("http://fake.test/", resolve=resolve, allowed_private_hosts=allowed)
    ).ip == "127.0.0.1"
    for url in ("http://other.test/", "http://127.0.0.1/"):
        with pytest.raises(FetchBlocked):
            await check_url(url, resolve=resolve, allowed_private_hosts=allowed)


# --------------------------------------------------------------------------- decoding caps


def feed_all(decoder: CappedDecoder, data: bytes, chunk: int = 4096) -> bytes:
    for start in range(0, len(data), chunk):
        decoder.feed(data[start : start + chunk])
    return decoder.body()


def test_gzip_deflate_and_identity_decode_within_the_cap() -> None:
    text = b"hello world " * 1000
    assert feed_all(CappedDecoder("u", "gzip", 20_000), gzip.compress(text)) == text
    two_members = gzip.compress(b"first ") + gzip.compress(b"second")
    assert feed_all(CappedDecoder("u", "gzip", 100), two_members) == b"first second"
    assert feed_all(CappedDecoder("u", "deflate", 20_000), zlib.compress(text)) == text
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    assert feed_all(CappedDecoder("u", "deflate", 20_000), raw.compress(text) + raw.flush()) == text
    assert feed_all(CappedDecoder("u", "", 20_000), text) == text


def test_a_gzip_bomb_is_cut_at_the_cap_without_inflating_it() -> None:
    bomb = gzip.compress(bytes(50 << 20), compresslevel=1)  # 50 MiB of zeros
    decoder = CappedDecoder("http://x.test/bomb", "gzip", 1_000_000)
    with pytest.raises(FetchError, match="decoded body over 1000000"):
        decoder.feed(bomb)  # one chunk holding the whole bomb
    assert sum(len(p) for p in decoder._parts) <= 1_000_000


def test_a_truncating_decoder_keeps_the_first_bytes_and_says_it_is_full() -> None:
    bomb = gzip.compress(b"Disallow: /x\n" * (4 << 20), compresslevel=9)  # 52 MiB of rules
    decoder = CappedDecoder("http://x.test/robots.txt", "gzip", 1000, truncate=True)
    decoder.feed(bomb)
    assert decoder.full and decoder.body() == (b"Disallow: /x\n" * 100)[:1000]
    small = CappedDecoder("u", "gzip", 1000, truncate=True)
    small.feed(gzip.compress(b"User-agent: *\n"))
    assert not small.full and small.body() == b"User-agent: *\n"


def test_a_brotli_bomb_is_cut_at_the_cap() -> None:
    brotli = pytest.importorskip("brotli")
    bomb = brotli.compress(bytes(50 << 20), quality=5)
    assert len(bomb) < 1000
    assert importlib.import_module("brotli") is brotli
    with pytest.raises(FetchError, match="decoded body over"):
        CappedDecoder("u", "br", 1_000_000).feed(bomb)
    assert feed_all(CappedDecoder("u", "br", 100), brotli.compress(b"small")) == b"small"


def test_unknown_or_corrupt_encodings_are_fetch_errors() -> None:
    with pytest.raises(FetchError, match="content-encoding"):
        CappedDecoder("u", "zstd", 100)
    with pytest.raises(FetchError, match="corrupt"):
        CappedDecoder("u", "gzip", 100).feed(b"\x1f\x8b\x08\x00garbage-not-deflate")


# --------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    ("declared", "body", "kind"),
    [
        ("text/html", b"<p>hi</p>", "html"),
        ("application/xhtml+xml", b"<?xml version='1.0'?><html/>", "html"),
        ("application/octet-stream", b"\xef\xbb\xbf  <!DOCTYPE html><html></html>", "html"),
        ("", b"<html><body>x</body></html>", "html"),
        ("application/octet-stream", build_pdf([["x"]]), "pdf"),
        ("text/html", b"junk\n%PDF-1.7\n...", "pdf"),
        ("application/pdf", build_pdf([["x"]]), "pdf"),
        ("text/plain", b"<html> shown as text </html>", "text"),
        ("text/markdown", b"# notes", "text"),
        ("application/json", b'{"a": 1}', "text"),
        ("application/octet-stream", b"plain words only", "text"),
    ],
)
def test_sniff_decides_the_kind(declared: str, body: bytes, kind: str) -> None:
    assert sniff("u", declared, body) == kind


@pytest.mark.parametrize(
    ("declared", "body"),
    [
        ("application/pdf", b"<html>an error page</html>"),
        ("text/html", b"\x00\x01\x02binary"),
        ("application/octet-stream", bytes(range(256))),
        ("application/zip", b"PK\x03\x04rest"),
        ("application/octet-stream", "é".encode("latin-1") * 200),
    ],
)
def test_sniff_refuses_binaries_and_lies(declared: str, body: bytes) -> None:
    with pytest.raises(FetchError):
        sniff("u", declared, body)


def test_media_type_splits_the_charset() -> None:
    assert media_type('Text/HTML; Charset="ISO-8859-1"') == ("text/html", "iso-8859-1")
    assert media_type("") == ("", None)
