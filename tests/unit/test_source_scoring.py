"""Source scoring: each dimension, the composite, the adaptive thresholds and config overrides."""

from __future__ import annotations

import pytest

from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.config.trust import ScoringSettings
from deepresearch.errors import ConfigError
from deepresearch.policies.search import source_scoring as sc
from deepresearch.schemas import SearchHit

QUESTION = "What are the semiconductor export controls on China?"


def cfg(**flags: object) -> ScoringSettings:
    return load_settings(None, overrides_from_flags(dict(flags)), env={}).scoring


def hit(url: str, title: str = "", snippet: str = "", provider: str = "web") -> SearchHit:
    return SearchHit(url=url, title=title, snippet=snippet, provider=provider, rank=1)


def test_key_terms_drop_boilerplate_and_numbers_and_weigh_names() -> None:
    key = {
        k.term: k.weight for k in sc.key_terms("How did Apple's net sales change in 2023?", cfg())
    }
    assert set(key) == {"appl", "net", "sale"}  # "change", "how", "2023" say nothing
    assert key["appl"] == 2.0 and key["net"] == 1.0


def test_relevance_is_weighted_coverage_in_title_and_snippet() -> None:
    c = cfg()
    key = sc.key_terms(QUESTION, c)
    on = hit(
        "https://x.org/a", "Export controls", "New rules restrict semiconductor exports to China"
    )
    part = hit("https://x.org/b", "Pest control", "Control aphids on roses without chemicals")
    off = hit("https://x.org/c", "Roses", "Prune roses in early spring")
    assert sc.hit_relevance(key, on, c) == 1.0
    assert 0 < sc.hit_relevance(key, part, c) < 0.3  # one common word of five weights
    assert sc.hit_relevance(key, off, c) == 0.0
    # irregular forms and shared prefixes still match
    sold = sc.key_terms("How many widgets were sold?", c)
    assert sc.coverage(sold, sc.normalized_terms("Widget sales rose")) == 1.0


def test_a_hit_without_snippet_is_left_for_reading_to_judge() -> None:
    c = cfg()
    key = sc.key_terms(QUESTION, c)
    assert sc.hit_relevance(key, hit("https://x.org/p1", "p1"), c) == c.unjudged_relevance


def test_quality_priors_by_domain_and_provider() -> None:
    c = cfg()
    q = {
        url: sc.source_quality(hit(url, provider=p), c)
        for url, p in [
            ("https://www.bis.doc.gov/rules", "web"),
            ("https://service.gov.uk/page", "web"),
            ("https://docs.python.org/3/", "web"),
            ("https://en.wikipedia.org/wiki/X", "web"),
            ("https://blog.example.com/post", "web"),
            ("https://www.chegg.com/answers", "web"),
            ("doc:report.pdf#page=2", "local"),
            ("https://gov.evil.example.com/x", "web"),
        ]
    }
    assert q["https://www.bis.doc.gov/rules"] == q["https://service.gov.uk/page"] == 0.95
    assert q["https://docs.python.org/3/"] == 0.95
    assert q["https://en.wikipedia.org/wiki/X"] == 0.75
    assert q["doc:report.pdf#page=2"] == 0.8
    assert q["https://blog.example.com/post"] == q["https://gov.evil.example.com/x"] == 0.5
    assert q["https://www.chegg.com/answers"] == 0.1


def test_extractability_of_pages_media_binaries_and_snippet_only() -> None:
    c = cfg()
    e = c.extractability
    assert sc.extractability(hit("https://x.org/report.pdf"), c) == e.readable
    assert sc.extractability(hit("https://www.youtube.com/watch?v=1"), c) == e.media
    assert sc.extractability(hit("https://www.wsj.com/articles/x"), c) == e.walled
    assert sc.extractability(hit("https://x.org/setup.exe"), c) == e.unreadable
    assert sc.extractability(hit("https://x.org/a", snippet="s"), c, fetchable=False) == 0.4
    assert sc.extractability(hit("https://x.org/a"), c, fetchable=False) == e.unreadable


def test_composite_is_the_normalized_weighted_sum_times_the_provider_multiplier() -> None:
    c = cfg(**{"scoring.provider_multipliers": {"arxiv": 1.2}})
    key = sc.key_terms(QUESTION, c)
    h = hit("https://blog.example.com/p", "x", "semiconductor export controls China", "web")
    rel, qual, ext, comp = sc.score_hit(key, h, c)
    assert (rel, qual, ext) == (1.0, 0.5, 1.0)
    assert comp == pytest.approx(0.5 * 1.0 + 0.3 * 0.5 + 0.2 * 1.0)
    boosted = sc.score_hit(key, h.model_copy(update={"provider": "arxiv"}), c)[3]
    assert boosted == pytest.approx(min(1.0, comp * 1.2))


def test_thresholds_tighten_with_more_hits_but_relevance_never_reaches_zero() -> None:
    c = cfg()
    few, mid, many = (sc.relevance_threshold(n, c) for n in (1, 14, 100))
    assert few == c.relevance_lenient < mid < many == c.relevance_strict
    assert sc.adaptive(14, 0.3, 0.4, c) == pytest.approx(0.35)
    lax = cfg(**{"scoring.relevance_lenient": 0.0, "scoring.min_relevance": 0.05})
    assert sc.relevance_threshold(1, lax) == 0.05


def test_select_hits_skips_irrelevant_and_unreadable_hits_in_order() -> None:
    c = cfg()
    hits = [
        hit("https://a.gov/x", "Export controls", "semiconductor export controls on China"),
        hit("https://b.org/x", "Roses", "Prune roses in early spring"),
        hit("https://www.youtube.com/x", "Video", "semiconductor export controls China explained"),
        hit("https://c.org/x", "Chips", "China semiconductor export rules"),
    ]
    sel = sc.select_hits(QUESTION, hits, c)
    assert [h.url for h in sel.kept] == ["https://a.gov/x", "https://c.org/x"]
    assert sel.dropped == 2 and [s.kept for s in sel.scores] == [True, False, False, True]
    video = sel.scores[2]  # on topic, but a player page yields no text worth reading
    assert video.relevance == 1.0 and video.extractability < c.min_extractability


def test_a_local_corpus_hit_is_held_to_the_lenient_bar_however_many_hits() -> None:
    """A table row of a filing names neither the filer nor most of the question's words; among
    many web hits such a snippet is skipped, among a local corpus's it is read. A hit naming
    none of the question's words is read from neither."""
    c = cfg()
    question = "How does Initech's revenue distribution among product lines compare to costs?"
    row = "Net revenue and operating income (in millions): Total net revenue: Q3 2023 = 14,158"
    weeds = "Prune roses in early spring"
    filler = [hit(f"https://x{i}.org/p", "Initech", "Initech news") for i in range(30)]
    web = sc.select_hits(question, [hit("https://a.org/r", "10-Q", row), *filler], c)
    local = [hit(f"doc:q3.pdf#page={i}", "q3.pdf", row, "local") for i in range(30)]
    read = sc.select_hits(question, [*local, hit("doc:q3.pdf#page=99", "q3.pdf", weeds)], c)
    assert read.relevance_threshold > c.relevance_lenient  # many hits: the strict bar
    assert not web.scores[0].kept
    assert [s.kept for s in read.scores] == [True] * 30 + [False]


def test_config_overrides_and_disabling() -> None:
    hits = [hit("https://b.org/x", "Roses", "Prune roses in early spring")]
    assert not sc.select_hits(QUESTION, hits, cfg()).kept
    assert sc.select_hits(QUESTION, hits, cfg(**{"scoring.enabled": False})).kept
    strict = cfg(**{"scoring.weights": {"relevance": 1, "quality": 0, "extractability": 0}})
    assert strict.weights.quality == 0
    with pytest.raises(ConfigError):
        cfg(**{"scoring.weights": {"relevance": -1}})
    with pytest.raises(ConfigError):
        cfg(**{"scoring.bogus": 1})
