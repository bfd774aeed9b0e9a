"""Search and fetch wiring in ``assembly``: the default chain, name checks, keys only from the
explicit env, one HTTP client per loop, and which fetchers a chain gets."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.errors import ConfigError
from deepresearch.providers.assembly import from_settings as assembly
from deepresearch.providers.assembly.simulated_latency import SlowSearch
from deepresearch.providers.search.code_files import CodeFiles
from deepresearch.providers.search.web_engines import SearxngSearch

SEARX = {"SEARXNG_URL": "http://127.0.0.1:9"}


def settings(**flags: object) -> Settings:
    return load_settings(None, overrides_from_flags(dict(flags)), env={})


def test_default_chain_is_local_with_a_corpus_and_duckduckgo_without(tmp_path: Path) -> None:
    assert assembly.default_search_chain(settings()) == ("duckduckgo",)
    assert assembly.default_search_chain(settings(**{"corpus.path": tmp_path})) == ("local",)
    chosen = settings(**{"search.providers": "local,searxng", "corpus.path": tmp_path})
    assert assembly.default_search_chain(chosen) == ("local", "searxng")
    assert assembly.default_search_chain(settings(**{"search.providers": "arxiv"})) == ("arxiv",)
    # An explicit offline choice is kept (and fails without a corpus): never silently the web.
    assert assembly.default_search_chain(settings(**{"search.providers": "local"})) == ("local",)
    resolved = assembly.with_default_search_chain(settings())
    assert resolved.search.providers == ("duckduckgo",)
    assert assembly.with_default_search_chain(resolved) is resolved


def test_check_names_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="searxng needs SEARXNG_URL"):
        assembly.check_search_names(settings(**{"search.providers": "searxng"}), {})
    with pytest.raises(ConfigError, match="unknown provider 'bing'"):
        assembly.check_search_names(settings(**{"search.providers": "bing"}), {})
    with pytest.raises(ConfigError, match="listed twice"):
        assembly.check_search_names(settings(**{"search.providers": "arxiv,arxiv"}), {})
    with pytest.raises(ConfigError, match="--corpus"):
        assembly.check_search_names(settings(**{"search.providers": "local"}), {})
    assembly.check_search_names(settings(**{"search.providers": "searxng,arxiv"}), SEARX)


def test_search_env_keeps_only_the_chains_variables() -> None:
    environ = {**SEARX, "TAVILY_API_KEY": "tvly-secret", "HOME": "/root"}
    chain = settings(**{"search.providers": "searxng,duckduckgo"})
    assert assembly.search_env(chain, environ) == SEARX


async def test_keys_come_only_from_the_env_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://127.0.0.1:9")
    s = settings(**{"search.providers": "searxng", "simulate.latency_s": 0.01})
    with pytest.raises(ConfigError, match="SEARXNG_URL"):
        assembly.build_search_providers(s)  # the process env is not read
    providers = await assembly.open_search_providers(s, SEARX)
    assert len(providers) == 1 and isinstance(providers[0], SlowSearch)
    inner = providers[0].inner
    assert isinstance(inner, SearxngSearch) and inner.name == "searxng"


def test_one_http_client_per_running_loop() -> None:
    async def twice() -> tuple[object, object]:
        return assembly.http_client(), assembly.http_client()

    first, again = asyncio.run(twice())
    assert first is again
    other, _ = asyncio.run(twice())
    assert other is not first  # a client never crosses event loops
    with pytest.raises(RuntimeError):
        assembly.http_client()  # outside a running loop


def test_fetchers_follow_the_chain(tmp_path: Path) -> None:
    assert assembly.build_fetchers(settings(**{"search.providers": "grep"})) == []
    code = settings(**{"search.providers": "grep", "search.code_dir": tmp_path})
    assert [type(f) for f in assembly.build_fetchers(code)] == [CodeFiles]
    web = assembly.build_fetchers(settings(**{"search.providers": "grep,duckduckgo"}))
    assert [type(f).__name__ for f in web] == ["WebPages"]
    assert web[0].handles("https://example.org/a") and not web[0].handles("doc:a.md")
    assert not web[0].handles("file:///etc/passwd")
