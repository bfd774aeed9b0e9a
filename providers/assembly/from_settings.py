"""Build providers from the validated settings, by name, with lazy imports.

Runs in whichever process needs them (the driver to validate, the gateway and researchers to
work), so heavy objects such as a loaded BM25 index are opened where they are used instead of
being pickled across actor boundaries. One opened corpus index is kept per process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepresearch.config.settings import Settings, WebSettings
from deepresearch.errors import ConfigError
from deepresearch.providers.llm.base import LLMProvider

if TYPE_CHECKING:
    import httpx

    from deepresearch.providers.documents.extract import ExtractionPool
    from deepresearch.providers.llm.registry import LLMKeys
    from deepresearch.providers.llm.router import Notify
from deepresearch.providers.search.base import Fetcher, SearchProvider
from deepresearch.providers.search.registry import (
    KNOWN_SEARCH_PROVIDERS as KNOWN_SEARCH_PROVIDERS,
)
from deepresearch.schemas import FetchedDoc

OFFLINE_PROVIDERS = frozenset({"local", "grep"})  # search providers that never leave the machine
SEARCH_USER_AGENT = "ray-deep-research/0.1 (+https://github.com/ray-deep-research)"

_clients: dict[str, tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]] = {}
_web_pools: dict[tuple[int, float, int], ExtractionPool] = {}


def default_search_chain(settings: Settings) -> tuple[str, ...]:
    """The chain a run uses: issue 7's default when none was chosen, else the configured one.

    Pure, for the driver to apply before validating (``with_default_search_chain``). An empty
    chain (the default) means "choose for me": ``local`` when a corpus is given, ``duckduckgo``
    otherwise. An explicit ``--search local`` without a corpus stays an error: a user who asked
    to stay offline is never sent to the web silently.
    """
    chain = settings.search.providers
    if chain:
        return chain
    return ("local",) if settings.corpus.path is not None else ("duckduckgo",)


def with_default_search_chain(settings: Settings) -> Settings:
    """``settings`` with ``search.providers`` set to ``default_search_chain(settings)``."""
    chain = default_search_chain(settings)
    if chain == settings.search.providers:
        return settings
    search = settings.search.model_copy(update={"providers": chain})
    return settings.model_copy(update={"search": search})


def search_env(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """Only the key variables the configured chain reads, for the driver to hand to the gateway."""
    from deepresearch.providers.search.registry import search_env as wanted

    return wanted(settings.search.providers, environ)


def check_search_names(settings: Settings, env: Mapping[str, str] | None = None) -> None:
    """Refuse an unknown, repeated or unusable provider (missing key, folder) as one ConfigError.

    ``env`` defaults to this process's environment: this runs in the driver, before Ray.
    """
    from deepresearch.providers.search.registry import check_search_provider

    chain = settings.search.providers
    if not chain:
        raise ConfigError("search.providers", "at least one search provider is required")
    for i, name in enumerate(chain):
        if name in chain[:i]:
            raise ConfigError("search.providers", f"'{name}' is listed twice")
        check_search_provider(name, settings, os.environ if env is None else env)


def run_settings(settings: Settings) -> Settings:
    """The settings a run is carried out with (the default search chain, the corpus path
    resolved): crew processes key what they keep open by them."""
    settings = with_default_search_chain(settings)
    if settings.corpus.path is None:
        return settings
    path = Path(settings.corpus.path).expanduser().resolve()
    return settings.model_copy(update={"corpus": settings.corpus.model_copy(update={"path": path})})


def http_client() -> httpx.AsyncClient:
    """The process's one client for search APIs, made on first use inside the running loop.

    An httpx client belongs to the loop that first used it, so another loop (a test's) gets its
    own. Page fetches do not use it: the safe fetcher needs its own pinned-address client.
    """
    import httpx

    loop = asyncio.get_running_loop()
    held = _clients.get("search")
    if held is None or held[0] is not loop or held[1].is_closed:
        client = httpx.AsyncClient(headers={"User-Agent": SEARCH_USER_AGENT})
        _clients["search"] = held = (loop, client)
    return held[1]


def build_search_providers(
    settings: Settings,
    env: Mapping[str, str] | None = None,
    client: httpx.AsyncClient | None = None,
) -> list[SearchProvider]:
    """The chain's providers. Keys come only from ``env`` (never os.environ); without ``client``
    this must run inside the event loop (it takes ``http_client()``)."""
    from deepresearch.providers.search.registry import build_search_provider

    keys: Mapping[str, str] = {} if env is None else env
    check_search_names(settings, keys)
    http = client if client is not None else http_client()
    providers = [build_search_provider(n, settings, http, keys) for n in settings.search.providers]
    delay = settings.simulate.latency_s
    if delay > 0:
        from deepresearch.providers.assembly.simulated_latency import SlowSearch

        providers = [SlowSearch(p, delay, settings.simulate.latency_mode) for p in providers]
    return providers


async def open_search_providers(
    settings: Settings, env: Mapping[str, str] | None = None
) -> list[SearchProvider]:
    """``build_search_providers`` from inside the loop, with the blocking part (opening an index,
    importing provider libraries) in a thread."""
    client = http_client()
    return await asyncio.to_thread(build_search_providers, settings, env, client)


class WebPages:
    """``Fetcher`` for http(s) hits: the safe fetcher, built on the first fetch inside the running
    loop (its client belongs to that loop), with one extraction pool per process."""

    def __init__(self, web: WebSettings) -> None:
        self._web = web
        self._built: tuple[asyncio.AbstractEventLoop, Fetcher] | None = None

    def handles(self, url: str) -> bool:
        return url.split(":", 1)[0].lower() in ("http", "https")

    async def fetch(self, url: str) -> FetchedDoc:
        loop = asyncio.get_running_loop()
        if self._built is None or self._built[0] is not loop:
            self._built = (loop, self._build())
        return await self._built[1].fetch(url)

    def _build(self) -> Fetcher:
        from deepresearch.providers.documents.extract import ExtractionPool
        from deepresearch.providers.web.safe_fetcher import FetchPolicy, SafeFetcher, make_client

        w = self._web
        policy = FetchPolicy(
            allow_private=w.allow_private_urls,
            timeout_s=w.timeout_s,
            max_redirects=w.max_redirects,
            max_raw_bytes=w.max_raw_bytes,
            max_decoded_bytes=w.max_decoded_bytes,
            respect_robots=w.respect_robots,
            per_host_concurrency=w.per_host_concurrency,
            per_host_delay_s=w.per_host_delay_s,
            user_agent=w.user_agent,
        )
        key = (w.extract_workers, w.extract_timeout_s, w.extract_memory_mb)
        if key not in _web_pools:
            _web_pools[key] = ExtractionPool(*key)
        return SafeFetcher(make_client(policy), _web_pools[key], policy)


def build_fetchers(settings: Settings) -> list[Fetcher]:
    """Corpus ids, code ids (``grep``) and, when the chain has a web provider, http(s) pages."""
    fetchers: list[Fetcher] = []
    chain = settings.search.providers
    if settings.corpus.path is not None:
        from deepresearch.providers.search.local import LocalDocuments, opened_index

        fetchers.append(LocalDocuments(opened_index(settings)))
    if "grep" in chain and settings.search.code_dir is not None:
        from deepresearch.providers.search.code_files import CodeFiles

        fetchers.append(CodeFiles(Path(settings.search.code_dir)))
    if any(name not in OFFLINE_PROVIDERS for name in chain):
        fetchers.append(WebPages(settings.web))
    delay = settings.simulate.latency_s
    if delay > 0:
        from deepresearch.providers.assembly.simulated_latency import SlowFetcher

        fetchers = [SlowFetcher(f, delay, settings.simulate.latency_mode) for f in fetchers]
    return fetchers


def needs_ledger(settings: Settings) -> bool:
    """A run-wide ledger only matters when some tier is a real (metered) model."""
    from deepresearch.providers.llm.registry import ROLES, role_chain

    return any(
        t.provider.strip().lower() != "extractive"
        for role in ROLES
        for t in role_chain(settings.llm, role)
    )


def build_llm_provider(
    settings: Settings,
    keys: LLMKeys | None = None,
    hook: Any = None,
    breaker_states: dict[str, Any] | None = None,
    notify: Notify | None = None,
) -> LLMProvider:
    """The run's model: extractive alone, or a router over the configured per-role chains. Keys
    arrive as an argument (the driver read them from the environment once), never from os.environ.
    ``notify`` hears the router's fallbacks, invalid replies, retries and opened breakers (the
    run's event log), so a model that stops being used never does so silently."""
    from deepresearch.providers.llm.registry import LLMKeys, build_router

    extra: dict[str, Any] = {"hook": hook} if hook is not None else {}
    if notify is not None:
        extra["notify"] = notify
    llm = build_router(settings, keys or LLMKeys(), breaker_states=breaker_states, **extra)
    if settings.simulate.latency_s > 0:
        from deepresearch.providers.assembly.simulated_latency import SlowLLM

        return SlowLLM(llm, settings.simulate.latency_s, settings.simulate.latency_mode)
    return llm
