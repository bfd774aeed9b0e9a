"""Build providers from the validated settings, by name, with lazy imports.

Runs in whichever process needs them (the driver to validate, the gateway and researchers to
work), so heavy objects such as a loaded BM25 index are opened where they are used instead of
being pickled across actor boundaries. One opened corpus index is kept per process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from deepresearch.config.settings import Settings
from deepresearch.errors import ConfigError
from deepresearch.providers.llm.base import LLMProvider

if TYPE_CHECKING:
    from deepresearch.providers.llm.registry import LLMKeys
from deepresearch.providers.search.base import Fetcher, SearchProvider

KNOWN_SEARCH_PROVIDERS = ("local",)

_indexes: dict[tuple[str, str, int], object] = {}


def check_search_names(settings: Settings) -> None:
    if not settings.search.providers:
        raise ConfigError("search.providers", "at least one search provider is required")
    for name in settings.search.providers:
        if name not in KNOWN_SEARCH_PROVIDERS:
            known = ", ".join(KNOWN_SEARCH_PROVIDERS)
            raise ConfigError("search.providers", f"unknown provider '{name}' (known: {known})")
    if "local" in settings.search.providers and settings.corpus.path is None:
        raise ConfigError("corpus.path", "the local search provider needs --corpus DIR")


def corpus_index(settings: Settings) -> object:
    """The already-built index of ``settings.corpus.path`` (the driver built it), opened once here."""
    from deepresearch.providers.search.local import CorpusIndex

    assert settings.corpus.path is not None
    key = (
        str(settings.corpus.path),
        str(settings.resolved_cache_dir()),
        settings.corpus.passage_chars,
    )
    if key not in _indexes:
        _indexes[key] = CorpusIndex.load_cached(
            Path(key[0]), Path(key[1]), settings.corpus.passage_chars
        )
    return _indexes[key]


def build_search_providers(settings: Settings) -> list[SearchProvider]:
    check_search_names(settings)
    providers: list[SearchProvider] = []
    for name in settings.search.providers:
        if name == "local":
            from deepresearch.providers.search.local import LocalSearch

            providers.append(LocalSearch(corpus_index(settings)))  # type: ignore[arg-type]
    delay = settings.simulate.latency_s
    if delay > 0:
        from deepresearch.providers.latency import SlowSearch

        providers = [SlowSearch(p, delay) for p in providers]
    return providers


def build_fetchers(settings: Settings) -> list[Fetcher]:
    fetchers: list[Fetcher] = []
    if settings.corpus.path is not None:
        from deepresearch.providers.search.local import LocalDocuments

        fetchers.append(LocalDocuments(corpus_index(settings)))  # type: ignore[arg-type]
    delay = settings.simulate.latency_s
    if delay > 0:
        from deepresearch.providers.latency import SlowFetcher

        fetchers = [SlowFetcher(f, delay) for f in fetchers]
    return fetchers


def build_llm_provider(settings: Settings, keys: LLMKeys | None = None) -> LLMProvider:
    """The run's model: extractive alone, or a router over the configured per-role chains. Keys
    arrive as an argument (the driver read them from the environment once), never from os.environ."""
    from deepresearch.providers.llm.registry import LLMKeys, build_router

    llm = build_router(settings, keys or LLMKeys())
    if settings.simulate.latency_s > 0:
        from deepresearch.providers.latency import SlowLLM

        return SlowLLM(llm, settings.simulate.latency_s)
    return llm
