"""URL normalization table and the claim book."""

from __future__ import annotations

import pytest

from deepresearch.policies.urls import (
    ClaimBook,
    Claimed,
    Taken,
    claim,
    hit_url_problem,
    normalize_url,
    taken_by_others,
    web_url_problem,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM/a/b", "http://example.com/a/b"),
        ("https://example.com:443/x", "https://example.com/x"),
        ("http://example.com:80/x", "http://example.com/x"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://example.com:443/x", "http://example.com:443/x"),  # not http's default port
        ("https://example.com/page#section-2", "https://example.com/page"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com/docs/", "https://example.com/docs"),
        ("https://example.com/a?utm_source=x&b=2&a=1", "https://example.com/a?a=1&b=2"),
        (
            "https://example.com/a?gclid=1&fbclid=2&mc_cid=3&mc_eid=4&ref_src=5&igshid=6&msclkid=7",
            "https://example.com/a",
        ),
        ("https://example.com/a?UTM_Campaign=z&q=1", "https://example.com/a?q=1"),
        (
            "https://example.com/a?gbraid=1&wbraid=2&yclid=3&_ga=4&_gl=5&mkt_tok=6&_hsenc=7&id=8",
            "https://example.com/a?id=8",
        ),
        ("https://example.com/a?page=2&ga=1", "https://example.com/a?ga=1&page=2"),  # not _ga
        ("https://example.com/a?b=2&a=9&b=1", "https://example.com/a?a=9&b=2&b=1"),  # stable
        ("https://example.com/%7Euser/a%20b", "https://example.com/~user/a%20b"),
        ("https://example.com/%7euser", "https://example.com/~user"),
        ("https://example.com/a%2fb", "https://example.com/a%2Fb"),  # encoded slash stays
        ("https://example.com/caf\u00e9", "https://example.com/caf%C3%A9"),
        ("https://example.com/s?q=a+b", "https://example.com/s?q=a+b"),
        ("https://example.com/s?q=a%20b", "https://example.com/s?q=a+b"),
        ("https://example.com/s?q=%41&flag", "https://example.com/s?flag&q=A"),
        ("https://example.com/s?q=1&q=1&", "https://example.com/s?q=1&q=1"),
        ("https://b\u00fccher.example/x", "https://xn--bcher-kva.example/x"),
        ("https://user:pw@Example.com:443/x", "https://user:pw@example.com/x"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("doc:2023 Q3 AAPL.pdf#page=4", "doc:2023 Q3 AAPL.pdf#page=4"),
        ("  doc:notes/A.md  ", "doc:notes/A.md"),
        ("ftp://Example.com/x/", "ftp://Example.com/x/"),
        ("mailto:A@B.com", "mailto:A@B.com"),
        ("not a url", "not a url"),
        ("https://example.com:notaport/x", "https://example.com:notaport/x"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "HTTPS://Example.com:443/a/b/?utm_medium=m&z=1&a=%7E#f",
        "https://b\u00fccher.example/%7e/",
        "https://example.com/s?q=a+b&x=%2F",
    ],
)
def test_normalize_is_idempotent(raw: str) -> None:
    once = normalize_url(raw)
    assert normalize_url(once) == once


def test_claim_new_url() -> None:
    book, result = claim(ClaimBook(), "https://Example.com/a/", "r1")
    assert result == Claimed("https://example.com/a")
    assert book.owner("https://example.com/a") == "r1"
    assert len(book) == 1


def test_same_owner_claims_again_idempotently() -> None:
    book, _ = claim(ClaimBook(), "https://example.com/a", "r1")
    again, result = claim(book, "https://example.com/a#x", "r1")
    assert result == Claimed("https://example.com/a")
    assert again == book


def test_other_owner_is_refused_even_with_another_spelling() -> None:
    book, _ = claim(ClaimBook(), "https://example.com/a?utm_source=t", "r1")
    after, result = claim(book, "HTTPS://EXAMPLE.COM:443/a/", "r2")
    assert result == Taken("https://example.com/a", "r1")
    assert after == book


def test_claim_does_not_mutate_the_old_book() -> None:
    empty = ClaimBook()
    claim(empty, "https://example.com/a", "r1")
    assert len(empty) == 0


def test_doc_ids_are_claimable() -> None:
    book, result = claim(ClaimBook(), "doc:a.pdf#page=1", "r1")
    assert result == Claimed("doc:a.pdf#page=1")
    _, other = claim(book, "doc:a.pdf#page=2", "r2")
    assert isinstance(other, Claimed)


def test_taken_by_others() -> None:
    book = ClaimBook()
    book, _ = claim(book, "https://a.example/1", "r1")
    book, _ = claim(book, "https://b.example/2", "r2")
    urls = ["https://A.example/1/", "https://b.example/2", "https://c.example/3"]
    assert taken_by_others(book, urls, "r2") == ("https://A.example/1/",)
    assert taken_by_others(book, urls, "r1") == ("https://b.example/2",)
    assert taken_by_others(book, urls, "r3") == tuple(urls[:2])
    assert taken_by_others(book, [], "r1") == ()


# --------------------------------------------------------------------------- safe parsing


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://a..b/solar-2024", "empty label"),
        ("http://.example.com/", "empty label"),
        (f"http://{'a' * 64}.example/x", "label longer than 63"),
        ("http://" + "abcd." * 60 + "com/", "longer than 253"),
        ("http://xn--a.example/", "invalid punycode"),
        ("http://\uff41\uff42\uff43.example/", "not a valid international name"),
        ("http://exa%20mple.com/", "invalid character"),
        ("http://x.com:99999/", "Port out of range"),
        ("http://x.com:-1/", "invalid URL"),
        ("http://x.com:0/", "port 0"),
        ("http://[::1/", "invalid URL"),
        ("http://[::1]x/", "malformed host or port"),
        ("http://[::1%25eth0]/", "malformed"),
        ("http://user@evil.example@good.example/", "ambiguous"),
        ("http://good.example\\@evil.example/", "ambiguous"),
        ("http:///path", "no host"),
        ("http://exa mple.com/", "whitespace or control"),
        (" http://example.com/", "whitespace or control"),
        ("http://example.com/a\tb", "whitespace or control"),
        ("http://example.com/\x1b[2J", "whitespace or control"),
        ("http://example.com/\u202egpj.exe", "whitespace or control"),
        ("http://example.com/" + "a" * 9000, "longer than 8192"),
        ("ftp://example.com/", "scheme ftp"),
        ("javascript:alert(1)", "scheme javascript"),
        ("example.com/page", "scheme (none)"),
    ],
)
def test_web_url_problem_names_why_a_url_is_unusable(url: str, reason: str) -> None:
    problem = web_url_problem(url)
    assert problem is not None and reason in problem


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "HTTP://Example.COM:8080/a?b=c#frag",
        "http://user:pass@example.com/",
        f"http://{'a' * 63}.example/",
        "https://example.com./",
        "http://m\u00fcnchen.de/",
        "http://xn--mnchen-3ya.de/",
        "http://a_b.example/",
        "http://127.0.0.1:80/",
        "http://[2001:db8::1]:443/",
    ],
)
def test_web_url_problem_accepts_ordinary_urls(url: str) -> None:
    assert web_url_problem(url) is None


def test_hit_url_problem_leaves_local_ids_to_their_fetchers() -> None:
    assert hit_url_problem("doc:reports/a.pdf#page=2") is None
    assert hit_url_problem("code:pkg/a.py#L3") is None
    assert hit_url_problem("http://a..b/") == "empty label in host name"
