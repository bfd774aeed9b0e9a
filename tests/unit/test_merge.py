"""Merging hits across providers and reformulating queries that found nothing (pure)."""

from __future__ import annotations

from deepresearch.policies.search.merge import merge_hits, reformulate, strip_operators
from deepresearch.schemas import SearchHit


def hit(url: str, rank: int, provider: str = "a", snippet: str = "s", title: str = "") -> SearchHit:
    return SearchHit(
        url=url, title=title or url, snippet=snippet, provider=provider, rank=rank, location=url
    )


def test_duplicates_across_spellings_become_one_hit() -> None:
    a = [hit("https://Example.com:443/page/?utm_source=x#top", 1, "a")]
    b = [hit("https://example.com/page", 1, "b"), hit("https://other.example/", 2, "b")]
    merged = merge_hits([a, b], 10)
    assert [h.url for h in merged] == ["https://example.com/page", "https://other.example/"]
    assert merged[0].provider == "a"  # the first list's spelling wins
    assert merged[0].location == "https://example.com/page"
    assert [h.rank for h in merged] == [1, 2]


def test_agreement_beats_a_single_first_place() -> None:
    a = [hit("https://solo.example/", 1, "a"), hit("https://both.example/", 2, "a")]
    b = [hit("https://x.example/", 1, "b"), hit("https://both.example/", 2, "b")]
    merged = merge_hits([a, b], 10)
    assert merged[0].url == "https://both.example/"
    # ties (same rank in different lists) keep the chain's order
    assert [h.url for h in merged[1:]] == ["https://solo.example/", "https://x.example/"]


def test_ranks_not_list_order_decide_and_limit_applies() -> None:
    a = [
        hit("https://a.example/3", 3),
        hit("https://a.example/1", 1),
        hit("https://a.example/2", 2),
    ]
    merged = merge_hits([a], 2)
    assert [h.url for h in merged] == ["https://a.example/1", "https://a.example/2"]
    assert merge_hits([a], 0) == []
    assert merge_hits([], 5) == []


def test_a_provider_repeating_a_url_votes_once() -> None:
    a = [hit("https://dup.example/", 1, "a"), hit("https://dup.example/#x", 2, "a")]
    b = [hit("https://b.example/", 1, "b")]
    merged = merge_hits([a, b], 5)
    assert [h.url for h in merged] == ["https://dup.example/", "https://b.example/"]


def test_missing_snippet_is_filled_from_a_duplicate() -> None:
    a = [hit("https://p.example/", 1, "a", snippet="")]
    b = [hit("https://p.example/", 1, "b", snippet="from b")]
    assert merge_hits([a, b], 5)[0].snippet == "from b"


def test_doc_ids_pass_through() -> None:
    local = [
        SearchHit(url="doc:a.pdf#page=2", title="a", provider="local", rank=1, location="a, p. 2")
    ]
    merged = merge_hits([local, [hit("https://w.example/", 1, "web")]], 5)
    assert merged[0].url == "doc:a.pdf#page=2" and merged[0].location == "a, p. 2"


def test_strip_operators() -> None:
    query = 'site:sec.gov "net sales" AND (Apple OR apple) -iphone filetype:pdf +2023'
    assert strip_operators(query) == "net sales Apple apple 2023"


def test_reformulate_orders_variants_from_light_to_broad() -> None:
    variants = reformulate('"latest" revenue of Apple Inc in 2023 site:apple.com')
    assert variants == [
        "latest revenue of Apple Inc in 2023",
        "revenue Apple Inc 2023",
        "sales Apple Inc 2023",
        "revenue Apple Inc",
    ]


def test_reformulate_never_repeats_the_query_or_itself() -> None:
    assert reformulate("apple") == []
    assert reformulate("Apple revenue") == ["Apple sales"]
    many = reformulate("what is the total cost of the new car purchase in 2024", max_variants=10)
    assert len(many) == len({v.lower() for v in many})
    assert "what is the total cost of the new car purchase in 2024" not in many
    assert "price automobile buy 2024" in many
    assert "cost car purchase" in many
    assert reformulate("How does Ray handle actor failures?", 3)[1] == "Ray handle actor errors"
    assert reformulate("   ") == []
    assert len(reformulate("a b c d e f g h", max_variants=1)) <= 1
