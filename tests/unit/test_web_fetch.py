"""SafeFetcher over the loopback FakeWeb, through the real httpx client and pinned transport."""

from __future__ import annotations

import asyncio
import datetime
import ssl
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from deepresearch.errors import ConfigError, FetchBlocked, FetchError
from deepresearch.providers.documents.extract import ExtractionPool, extract_bytes
from deepresearch.providers.testing.fake_web import FakeWeb, static_resolver
from deepresearch.providers.web.netguard import PinnedAddress, pinned
from deepresearch.providers.web.safe_fetcher import (
    USER_AGENT,
    FetchPolicy,
    SafeFetcher,
    make_client,
)

LOOPBACK = FetchPolicy(allow_private=True, per_host_delay_s=0.0)
NAMES = ("a.test", "b.test", "secure.test", "other.test")
RESOLVE = static_resolver({name: ["127.0.0.1"] for name in NAMES} | {"internal.test": ["10.0.0.5"]})


@pytest.fixture(scope="module")
def pool() -> Iterator[ExtractionPool]:
    with ExtractionPool(workers=1, timeout_s=30, memory_mb=1024) as extraction:
        yield extraction


@pytest.fixture
async def web() -> AsyncIterator[FakeWeb]:
    async with FakeWeb() as fake:
        yield fake


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with make_client() as http:
        yield http


def fetcher(
    client: httpx.AsyncClient, pool: ExtractionPool, policy: FetchPolicy = LOOPBACK, **kw: object
) -> SafeFetcher:
    return SafeFetcher(client, pool, policy, resolve=RESOLVE, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- documents


async def test_html_pdf_and_text_are_extracted(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    f = fetcher(client, pool)
    doc = await f.fetch(web.url("/article"))
    assert (doc.title, doc.provider, doc.content_type) == (
        "Solar output in 2024",
        "web",
        "text/html",
    )
    assert doc.url == doc.location == web.url("/article")
    assert doc.text.startswith("Published: 2024-03-05")
    assert "rose by 12 percent" in doc.text and "Fake Web" not in doc.text  # boilerplate dropped
    for path in ("/doc.pdf", "/mislabeled.pdf"):  # the second is sniffed from its %PDF header
        pdf = await f.fetch(web.url(path))
        assert pdf.content_type == "application/pdf"
        assert "Revenue was 41 million dollars." in pdf.text and "Page two" in pdf.text
    text = await f.fetch(web.url("/notes.txt"))
    assert (text.text, text.content_type) == ("Plain notes: the answer is 42.\n", "text/plain")
    assert all(r.headers["user-agent"] == USER_AGENT for r in web.requests)


async def test_a_pages_domain_is_recognized_from_its_content(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    from test_domains import filing_text

    web.texts["notes.txt"] = filing_text()  # a filing's text under a name that says nothing
    web.texts["10-q-report.txt"] = "Plain notes: the answer is 42.\n"  # and the reverse
    f = fetcher(client, pool)
    assert (await f.fetch(web.url("/texts/notes.txt"))).domain == "filings"
    assert (await f.fetch(web.url("/texts/10-q-report.txt"))).domain == "generic"
    assert (await f.fetch(web.url("/texts/notes.txt"))).source().domain == "filings"


async def test_a_page_that_fails_to_extract_is_a_fetch_error(
    web: FakeWeb, client: httpx.AsyncClient
) -> None:
    class BrokenPool:
        async def extract_data(self, *args: object) -> None:
            from deepresearch.errors import ExtractionError

            raise ExtractionError("article", "timed out after 30s")

    f = fetcher(client, BrokenPool())  # type: ignore[arg-type]
    with pytest.raises(FetchError, match="extraction failed: timed out"):
        await f.fetch(web.url("/article"))


async def test_wrong_content_types_are_sniffed_or_refused(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    f = fetcher(client, pool)
    assert (await f.download(web.url("/html-as-octet"))).kind == "html"
    for path, reason in [
        ("/image.png", "unsupported content type image/png"),
        ("/binary", "binary content"),
        ("/fake.pdf", "no PDF header"),
        ("/status/404", "HTTP 404"),
    ]:
        with pytest.raises(FetchError, match=reason):
            await f.download(web.url(path))


# --------------------------------------------------------------------------- redirects


async def test_a_redirect_to_a_private_address_is_refused(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    # a.test is a "public" name that happens to point at the loopback server; its redirects are not
    strict = FetchPolicy(allowed_private_hosts=frozenset({"a.test"}), per_host_delay_s=0.0)
    f = fetcher(client, pool, strict)
    assert (await f.download(web.url("/notes.txt", host="a.test"))).kind == "text"
    for target in (
        web.url("/article"),
        web.url("/article", host="internal.test"),
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]:1/",
        "file:///etc/passwd",
    ):
        with pytest.raises(FetchBlocked):
            await f.download(web.url(f"/redirect?to={quote(target)}", host="a.test"))
    assert web.paths("/article") == []  # the refused hop was never requested


async def test_redirects_are_capped_at_five(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    with pytest.raises(FetchError, match="more than 5 redirects"):
        await fetcher(client, pool).download(web.url("/loop/0"))
    assert web.paths("/loop/") == [f"/loop/{n}" for n in range(6)]


async def test_credentials_and_cookies_stay_with_their_origin(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    final = web.url("/notes.txt", host="b.test")
    same_origin_hop = f"/redirect?to={quote(final)}"
    start = web.url(
        f"/set-cookie-redirect?to={quote(same_origin_hop)}", host="a.test", userinfo="user:pw"
    )
    download = await fetcher(client, pool).download(start)
    assert download.url == final
    first, second, third = [r for r in web.requests if r.path != "/robots.txt"]
    assert first.headers["authorization"].startswith("Basic ") and "cookie" not in first.headers
    assert first.host.startswith("a.test") and "user:pw" not in first.path
    assert second.headers["authorization"] == first.headers["authorization"]
    assert second.headers["cookie"] == "session=secret-cookie"
    assert third.host.startswith("b.test")
    assert "authorization" not in third.headers and "cookie" not in third.headers


# --------------------------------------------------------------------------- hostile bodies


async def test_a_slow_drip_body_hits_the_total_deadline(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    f = fetcher(client, pool, replace(LOOPBACK, timeout_s=0.4))
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"deadline of 0.4s exceeded"):
        await f.download(web.url("/slow"))
    assert time.monotonic() - started < 3
    assert web.paths("/slow") == ["/slow"]


@pytest.mark.parametrize("path", ["/bomb.gz", "/bomb.br"])
async def test_compression_bombs_are_cut_at_the_decoded_cap(
    path: str, web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    if path.endswith(".br"):
        pytest.importorskip("brotli")
    f = fetcher(client, pool, replace(LOOPBACK, max_decoded_bytes=1_000_000))
    with pytest.raises(FetchError, match="decoded body over 1000000 bytes"):
        await f.download(web.url(path))


async def test_the_raw_size_cap_applies_before_decoding(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    web.drip_interval_s = 0.0005
    f = fetcher(client, pool, replace(LOOPBACK, max_raw_bytes=500))
    with pytest.raises(FetchError, match="500-byte cap"):
        await f.download(web.url("/pages/1"))
    with pytest.raises(FetchError, match="500-byte cap"):  # streamed, no Content-Length
        await f.download(web.url("/slow"))


# --------------------------------------------------------------------------- robots and politeness


async def test_robots_txt_is_respected_cached_and_configurable(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    f = fetcher(client, pool)
    with pytest.raises(FetchBlocked, match=r"robots.txt"):
        await f.download(web.url("/private/secret"))
    await f.download(web.url("/notes.txt"))
    assert web.paths("/private/") == []
    assert web.paths("/robots.txt") == ["/robots.txt"]  # once per origin
    relaxed = fetcher(client, pool, replace(LOOPBACK, respect_robots=False))
    assert (await relaxed.download(web.url("/private/secret"))).kind == "html"


async def test_missing_robots_allows_all_and_a_failing_one_refuses_for_now(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    async with FakeWeb(robots=None) as open_web:
        assert (await fetcher(client, pool).download(open_web.url("/private/x"))).kind == "html"
    async with FakeWeb() as failing:
        failing.robots_status = 503
        f = fetcher(client, pool)
        with pytest.raises(FetchBlocked, match=r"robots.txt answered HTTP 503"):
            await f.download(failing.url("/notes.txt"))
        failing.robots_status = 200
        assert (await f.download(failing.url("/notes.txt"))).kind == "text"  # not cached


async def test_a_gzip_robots_bomb_is_read_only_up_to_its_cap(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    # about 20 MB of rules in a few tens of KB of gzip; the last rule lies far beyond the cap
    filler = "Disallow: /pages/0/never-requested\n" * 560_000
    robots = f"User-agent: *\nDisallow: /private/\n{filler}Disallow: /article\n"
    async with FakeWeb(robots=robots) as web:
        web.robots_gzip = True
        f = fetcher(client, pool, replace(LOOPBACK, timeout_s=20.0))
        doc = await f.fetch(web.url("/article"))  # the rule past the cap is ignored
        with pytest.raises(FetchBlocked, match=r"robots\.txt"):
            await f.download(web.url("/private/x"))  # the rules before it apply
    assert "rose by 12 percent" in doc.text
    assert web.paths("/robots.txt") == ["/robots.txt"]


async def test_per_host_concurrency_limit_is_respected(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    async with FakeWeb(latency_s=0.05, pages=16) as slow:
        f = fetcher(client, pool, replace(LOOPBACK, per_host_concurrency=2, respect_robots=False))
        await asyncio.gather(*(f.download(slow.url(f"/pages/{n}")) for n in range(8)))
        assert slow.peak_in_flight == 2
        slow.peak_in_flight = 0
        urls = [slow.url(f"/pages/{n}", host=h) for n in range(4) for h in ("a.test", "b.test")]
        await asyncio.gather(*(f.download(u) for u in urls))
        assert slow.peak_in_flight == 4  # the limit is per host, not global


async def test_polite_delay_spaces_requests_to_one_host(
    web: FakeWeb, client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    now = [100.0]
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    policy = replace(LOOPBACK, per_host_delay_s=1.5, respect_robots=False)
    f = fetcher(client, pool, policy, clock=lambda: now[0], sleep=fake_sleep)
    for _ in range(3):
        await f.download(web.url("/notes.txt", host="a.test"))
    await f.download(web.url("/notes.txt", host="b.test"))  # another host: no wait
    assert slept == [1.5, 1.5]


# --------------------------------------------------------------------------- the pinned transport


async def test_the_transport_refuses_connections_that_were_not_checked(
    web: FakeWeb, client: httpx.AsyncClient
) -> None:
    with pytest.raises(httpx.ConnectError, match="not checked"):
        await client.get(web.url("/notes.txt"))
    with pinned(PinnedAddress("a.test", web.port, "127.0.0.1")):
        response = await client.get(web.url("/notes.txt", host="a.test"))
    assert response.status_code == 200 and web.requests[-1].host == f"a.test:{web.port}"


def _tls_pair(tmp: Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A test CA and a certificate for ``name``: (server context, client context trusting the CA)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def cert(
        subject: str,
        key: ec.EllipticCurvePrivateKey,
        issuer: str,
        signer: ec.EllipticCurvePrivateKey,
        ca: bool,
    ):  # type: ignore[no-untyped-def]
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key, leaf_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca_cert = cert("Test CA", ca_key, "Test CA", ca_key, True)
    leaf = cert(name, leaf_key, "Test CA", ca_key, False)
    pem = serialization.Encoding.PEM
    (tmp / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (tmp / "key.pem").write_bytes(
        leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tmp / "leaf.pem", tmp / "key.pem")
    client = ssl.create_default_context(cadata=ca_cert.public_bytes(pem).decode())
    return server, client


async def test_tls_goes_to_the_pinned_ip_and_is_verified_against_the_hostname(
    tmp_path: Path, pool: ExtractionPool
) -> None:
    server_ctx, client_ctx = _tls_pair(tmp_path, "secure.test")
    async with FakeWeb(ssl_context=server_ctx) as tls, make_client(ssl_context=client_ctx) as http:
        f = fetcher(http, pool)
        doc = await f.fetch(tls.url("/notes.txt", host="secure.test"))
        assert doc.text.startswith("Plain notes") and doc.url.startswith("https://secure.test:")
        with pytest.raises(FetchError, match=r"CERTIFICATE_VERIFY_FAILED|certificate"):
            await f.download(tls.url("/notes.txt", host="other.test"))  # same IP, wrong name


def test_handles_only_http_and_https(client: httpx.AsyncClient, pool: ExtractionPool) -> None:
    f = fetcher(client, pool)
    assert f.handles("https://x.test/") and f.handles("HTTP://x.test/")
    assert not f.handles("doc:abc#p1") and not f.handles("file:///etc/passwd")


def test_extract_bytes_honours_the_declared_and_the_meta_charset() -> None:
    page = "<html><head><title>Caf\u00e9 prices</title></head><body><p>Cr\u00e8me</p></body></html>"
    declared = extract_bytes(page.encode("latin-1"), "html", "p.html", "latin-1")
    assert declared.title == "Caf\u00e9 prices" and "Cr\u00e8me" in declared.pages[0]
    meta = page.replace("<head>", '<head><meta charset="iso-8859-1">').encode("latin-1")
    assert extract_bytes(meta, "html", "p.html").title == "Caf\u00e9 prices"
    assert extract_bytes(b"a\r\nb", "text", "t.txt").pages == ("a\nb",)


async def test_an_invalid_url_is_blocked_not_crashed(
    client: httpx.AsyncClient, pool: ExtractionPool
) -> None:
    with pytest.raises(FetchBlocked):
        await fetcher(client, pool).fetch("http://x.test:abc/")


async def test_a_client_without_the_pinned_transport_is_refused(pool: ExtractionPool) -> None:
    async with httpx.AsyncClient() as plain:
        with pytest.raises(ConfigError, match="make_client"):
            SafeFetcher(plain, pool)
