"""Settings of what makes a report trustworthy: source scoring, citation verification, the intent
gate and follow-ups. Kept apart from ``settings`` (the tree and its loading) because they are
many small knobs that grow with tuning."""

from __future__ import annotations

from pydantic import Field

from deepresearch.config.section import Section


class FollowUpSettings(Section):
    """``--follow-up RUN_ID``: what a run keeps for a later follow-up and how much it reuses."""

    doc_cap_chars: int = Field(200_000, ge=1000)  # per read document kept in docs.jsonl
    total_cap_chars: int = Field(20_000_000, ge=1000)  # all documents of one run (and of a seed)
    notes_cap_chars: int = Field(20_000, ge=0)  # earlier reports injected into each researcher
    match_threshold: float = Field(0.9, gt=0, le=1)  # word-set similarity for reusing a sub-task
    max_chain: int = Field(5, ge=1, le=100)  # earlier runs followed back through follow-ups


class GateSettings(Section):
    """The intent gate before a run (greetings, harmful or vague queries): ``--no-gate`` is off."""

    enabled: bool = True
    use_model: bool = True  # ask the configured model (planner role) when the rules are unsure
    timeout_s: float = Field(20.0, gt=0)


class VerifySettings(Section):
    """The citation verifier: every cited sentence is checked against its cited passages."""

    enabled: bool = True
    min_support: float = Field(0.5, ge=0, le=1)  # share of a sentence's content the passage covers
    rewrite: bool = True  # unsupported sentences go back to the writer once before being dropped
    quote_chars: int = Field(600, ge=100, le=5000)  # longest evidence passage kept per citation
    # with a model: the extractive composer's report when its Answer keeps more verified claims
    answer_floor: bool = True


class ScoringWeights(Section):
    relevance: float = Field(0.5, ge=0)
    quality: float = Field(0.3, ge=0)
    extractability: float = Field(0.2, ge=0)


class QualityPriors(Section):
    """Source quality by domain: suffixes start with a dot (``.gov``), others match subdomains."""

    high: float = Field(0.95, ge=0, le=1)
    good: float = Field(0.75, ge=0, le=1)
    local: float = Field(0.8, ge=0, le=1)
    unknown: float = Field(0.5, ge=0, le=1)
    low: float = Field(0.1, ge=0, le=1)
    local_providers: tuple[str, ...] = ("local", "grep")
    high_domains: tuple[str, ...] = (".gov", ".edu", ".mil", ".int")
    high_host_prefixes: tuple[str, ...] = ("docs.", "developer.")
    good_domains: tuple[str, ...] = ("wikipedia.org",)
    low_domains: tuple[str, ...] = ()


class ExtractabilityPriors(Section):
    readable: float = Field(1.0, ge=0, le=1)
    walled: float = Field(0.3, ge=0, le=1)
    media: float = Field(0.15, ge=0, le=1)
    snippet_only: float = Field(0.4, ge=0, le=1)
    unreadable: float = Field(0.05, ge=0, le=1)
    media_domains: tuple[str, ...] = ("youtube.com", "youtu.be", "tiktok.com")
    walled_domains: tuple[str, ...] = ()
    binary_extensions: tuple[str, ...] = (".zip", ".exe", ".mp4", ".mp3", ".jpg", ".png")


class ScoringSettings(Section):
    """Source scoring before fetching and the relevance bar for findings (policies.source_scoring)."""

    enabled: bool = True
    weights: ScoringWeights = ScoringWeights()
    provider_multipliers: dict[str, float] = Field(default_factory=dict)
    few_hits: int = Field(4, ge=0)
    many_hits: int = Field(24, ge=1)
    relevance_lenient: float = Field(0.1, ge=0, le=1)
    relevance_strict: float = Field(0.25, ge=0, le=1)
    min_relevance: float = Field(0.05, gt=0, le=1)
    composite_lenient: float = Field(0.3, ge=0, le=1)
    composite_strict: float = Field(0.4, ge=0, le=1)
    name_weight: float = Field(2.0, ge=1)
    finding_min_relevance: float = Field(0.1, ge=0, le=1)
    topic_min_coverage: float = Field(0.55, ge=0, le=1)
    unjudged_relevance: float = Field(0.5, ge=0, le=1)
    min_extractability: float = Field(0.2, ge=0, le=1)
    finding_relative: float = Field(0.2, ge=0, le=1)
    generic_terms: tuple[str, ...] = ()
    quality: QualityPriors = QualityPriors()
    extractability: ExtractabilityPriors = ExtractabilityPriors()
