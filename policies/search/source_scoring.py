"""Score search hits before anything is fetched: relevance, source quality and extractability.

Reading is the expensive step (a page fetch, an extraction, context tokens), and a hit that shares a
word or two with the question by accident is how an off-topic corpus ends up quoted as a confident
answer. Each hit gets three scores in [0, 1]:

* relevance — weighted coverage of the question's key terms in the hit's title, snippet and
  location (names count more; question boilerplate like "compare" or "latest" counts not at all);
* quality — a domain prior: official, academic and standards sites high, known content farms low,
  documents of the local corpus and code files neutral-high;
* extractability — whether its text can be read: HTML, PDF and documents fine; video, social,
  paywalled sites and binaries low; a URL no fetcher handles can only be read as its snippet.

The composite is the configured weighted sum times a per-provider multiplier. A hit is fetched when
its relevance and its composite both pass thresholds that tighten as the result list grows (many
hits: be picky; few hits: be lenient, but relevance never drops to zero; a local corpus's hits:
lenient, as its snippets are single rows that seldom name the filer) and its text can be read
at all (extractability above a floor: a relevant video is still not worth a fetch). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from deepresearch.config.trust import ScoringSettings
from deepresearch.schemas import SearchHit
from deepresearch.text.names import names_in
from deepresearch.text.question_words import equivalents, expand_abbreviations
from deepresearch.text.terms import FORM_NUMBER, terms

# A form number ("10-Q", "10-Qs", "8-K") names a kind of document, not what a question is about.
PREFIX = 5  # terms sharing this many leading characters match ("operational" ~ "operating")
# Irregular forms the light stemmer cannot join: a question about what was "sold" is answered by
# a sentence about "sales".
_IRREGULAR = {
    "sold": "sale", "sell": "sale", "grew": "grow", "spent": "spend", "made": "make",
    "paid": "pay", "bought": "buy", "built": "build", "rose": "rise", "fell": "fall",
    "held": "hold", "won": "win", "began": "begin", "led": "lead", "wrote": "write",
}  # fmt: skip


def normalized_terms(text: str) -> list[str]:
    """Stemmed content terms of ``text`` with irregular forms mapped to one spelling."""
    return [_IRREGULAR.get(t, t) for t in terms(text)]


@dataclass(frozen=True)
class KeyTerm:
    term: str
    weight: float
    # the words a filing may state it by: a row "Total net sales" answers "revenue"
    alike: frozenset[str] = frozenset()


@dataclass(frozen=True)
class HitScore:
    url: str
    relevance: float
    quality: float
    extractability: float
    composite: float
    kept: bool


@dataclass(frozen=True)
class HitSelection:
    """The hits worth fetching, in their original order, and why the others were left out."""

    kept: tuple[SearchHit, ...]
    scores: tuple[HitScore, ...]
    relevance_threshold: float
    composite_threshold: float

    @property
    def dropped(self) -> int:
        return len(self.scores) - len(self.kept)


# --------------------------------------------------------------------------- relevance


def key_terms(question: str, cfg: ScoringSettings) -> tuple[KeyTerm, ...]:
    """The question's content terms that say what it is about, each with its weight.

    Numbers (years, quarters) and single letters are left out: they match everywhere. Question
    boilerplate (``cfg.generic_terms``) is left out too. Capitalized words are names (the company,
    place or product asked about) and weigh ``cfg.name_weight``.
    """
    generic = set(terms(" ".join(cfg.generic_terms)))
    # "10-Qs" is not the name "Qs"; "capex" is what filings call capital expenditures
    question = expand_abbreviations(FORM_NUMBER.sub(" ", question))
    names = {t for w in names_in(question) for t in normalized_terms(w)}
    alike = equivalents(question)
    out: list[KeyTerm] = []
    for t in dict.fromkeys(normalized_terms(question)):
        if len(t) < 2 or t.replace(".", "").replace(",", "").isdigit() or t in generic:
            continue
        out.append(KeyTerm(t, cfg.name_weight if t in names else 1.0, alike.get(t, frozenset())))
    return tuple(out)


def coverage(key: Sequence[KeyTerm], text_terms: Iterable[str]) -> float:
    """Weighted share of ``key`` found in ``text_terms`` (exact stem or a shared prefix).

    No key terms (a question made only of boilerplate) means nothing can be judged: 1.0.
    """
    if not key:
        return 1.0
    present = set(text_terms)
    prefixes = {t[:PREFIX] for t in present if len(t) >= PREFIX}
    total = sum(k.weight for k in key)
    found = sum(
        k.weight
        for k in key
        if k.term in present
        or (len(k.term) >= PREFIX and k.term[:PREFIX] in prefixes)
        or not k.alike.isdisjoint(present)
    )
    return found / total


def hit_relevance(key: Sequence[KeyTerm], hit: SearchHit, cfg: ScoringSettings) -> float:
    """Coverage of the key terms in what the hit shows; a hit with no snippet cannot be judged
    before reading, so it gets at least ``cfg.unjudged_relevance`` (reading it decides)."""
    found = coverage(key, normalized_terms(f"{hit.title} {hit.snippet} {hit.location}"))
    return found if hit.snippet.strip() else max(found, cfg.unjudged_relevance)


# --------------------------------------------------------------------------- quality, extractability


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower().removeprefix("www.")


def _matches(host: str, domains: Iterable[str]) -> bool:
    """``host`` is one of ``domains`` or a subdomain of one; ``.gov``-style entries are suffixes."""
    for d in domains:
        d = d.lower()
        if d.startswith("."):  # a suffix, also before a country code: ".gov" ~ "x.gov.uk"
            head, _, cc = host.rpartition(".")
            if host.endswith(d) or (len(cc) == 2 and head.endswith(d)):
                return True
        elif host == d or host.endswith(f".{d}"):
            return True
    return False


def _local(url: str) -> bool:
    return url.startswith("doc:")


def source_quality(hit: SearchHit, cfg: ScoringSettings) -> float:
    """A prior on how trustworthy the source is, from its domain (or its provider)."""
    q = cfg.quality
    if _local(hit.url) or hit.provider in q.local_providers:
        return q.local
    host = _host(hit.url)
    if not host:
        return q.unknown
    if _matches(host, q.low_domains):
        return q.low
    if _matches(host, q.high_domains) or host.startswith(tuple(q.high_host_prefixes)):
        return q.high
    if _matches(host, q.good_domains):
        return q.good
    return q.unknown


def extractability(hit: SearchHit, cfg: ScoringSettings, fetchable: bool = True) -> float:
    """How likely reading the hit yields its text (not a player, a login wall or a binary)."""
    e = cfg.extractability
    if not fetchable:
        return e.snippet_only if hit.snippet.strip() else e.unreadable
    if _local(hit.url):
        return e.readable
    path = urlsplit(hit.url).path.lower() if "://" in hit.url else ""
    if path.endswith(tuple(e.binary_extensions)):
        return e.unreadable
    host = _host(hit.url)
    if _matches(host, e.media_domains):
        return e.media
    if _matches(host, e.walled_domains):
        return e.walled
    return e.readable


# --------------------------------------------------------------------------- composite, threshold


def composite(relevance: float, quality: float, extract: float, multiplier: float = 1.0) -> float:
    """The sum of the already weighted dimensions times a multiplier, clamped to [0, 1]."""
    return max(0.0, min(1.0, multiplier * (relevance + quality + extract)))


def adaptive(n_hits: int, lenient: float, strict: float, cfg: ScoringSettings) -> float:
    """``lenient`` at or below ``few_hits`` results, ``strict`` at or above ``many_hits``, linear
    in between: a long list can afford to skip weak hits, a short one cannot."""
    few, many = cfg.few_hits, max(cfg.many_hits, cfg.few_hits + 1)
    if n_hits <= few:
        return lenient
    if n_hits >= many:
        return strict
    return lenient + (strict - lenient) * (n_hits - few) / (many - few)


def relevance_threshold(n_hits: int, cfg: ScoringSettings) -> float:
    """Never below ``cfg.min_relevance``: even a single hit must be about the question."""
    t = adaptive(n_hits, cfg.relevance_lenient, cfg.relevance_strict, cfg)
    return max(t, cfg.min_relevance)


def score_hit(
    key: Sequence[KeyTerm], hit: SearchHit, cfg: ScoringSettings, fetchable: bool = True
) -> tuple[float, float, float, float]:
    """(relevance, quality, extractability, composite) of one hit."""
    w = cfg.weights
    total = (w.relevance + w.quality + w.extractability) or 1.0
    rel = hit_relevance(key, hit, cfg)
    qual = source_quality(hit, cfg)
    ext = extractability(hit, cfg, fetchable)
    mult = cfg.provider_multipliers.get(hit.provider, 1.0)
    comp = composite(
        w.relevance * rel / total, w.quality * qual / total, w.extractability * ext / total, mult
    )
    return rel, qual, ext, comp


def select_hits(
    question: str,
    hits: Sequence[SearchHit],
    cfg: ScoringSettings,
    fetchable: Callable[[str], bool] = lambda _url: True,
) -> HitSelection:
    """The hits to fetch: relevance and composite both at or above the adaptive thresholds.

    With scoring disabled every hit is kept (scores are still computed, for the event log).
    """
    key = key_terms(question, cfg)
    rel_t = relevance_threshold(len(hits), cfg)
    comp_t = adaptive(len(hits), cfg.composite_lenient, cfg.composite_strict, cfg)
    kept: list[SearchHit] = []
    scores: list[HitScore] = []
    # a local corpus's hits are passages our own index ranked by the question's words; their
    # snippet is one row or fragment of a page that seldom repeats the filer's name ("Net revenue
    # ... Total net revenue: 14,158" of Intel's 10-Q), and reading them fetches nothing: they
    # are held to a short list's bar however many there are
    local_t = relevance_threshold(0, cfg)
    for hit in hits:
        rel, qual, ext, comp = score_hit(key, hit, cfg, fetchable(hit.url))
        bar = local_t if _local(hit.url) else rel_t
        ok = not cfg.enabled or (rel >= bar and comp >= comp_t and ext >= cfg.min_extractability)
        scores.append(HitScore(hit.url, rel, qual, ext, comp, ok))
        if ok:
            kept.append(hit)
    return HitSelection(tuple(kept), tuple(scores), rel_t, comp_t)
