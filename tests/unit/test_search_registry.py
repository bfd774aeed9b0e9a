"""Building search providers by name: keys from the given env, config errors, lazy imports."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.errors import ConfigError
from deepresearch.providers.search.base import SearchProvider
from deepresearch.providers.search.registry import (
    KNOWN_SEARCH_PROVIDERS,
    build_search_provider,
    check_search_provider,
    search_env,
)

FULL_ENV = {
    "SEARXNG_URL": "http://127.0.0.1:8888",
    "TAVILY_API_KEY": "tvly-secret-1",
    "GOOGLE_API_KEY": "g-secret-2",
    "GOOGLE_CSE_ID": "cx-3",
    "BRAVE_API_KEY": "b-secret-4",
    "STACKEXCHANGE_KEY": "se-secret-5",
    "GITHUB_TOKEN": "ghp-secret-6",
}


def settings(**flags: Any) -> Settings:
    return load_settings(None, overrides_from_flags(flags), env={})


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as c:
        yield c


@pytest.mark.parametrize(
    "name",
    ["duckduckgo", "searxng", "tavily", "google", "brave", "stackexchange", "arxiv", "security"],
)
async def test_builds_every_web_provider(name: str, client: httpx.AsyncClient) -> None:
    provider = build_search_provider(name, settings(), client, FULL_ENV)
    assert isinstance(provider, SearchProvider)
    assert provider.name == name
    for secret in (v for k, v in FULL_ENV.items() if "secret" in v):
        assert secret not in repr(vars(provider))  # keys are held as SecretStr


async def test_keys_and_settings_reach_the_provider(client: httpx.AsyncClient) -> None:
    google: Any = build_search_provider("google", settings(), client, FULL_ENV)
    assert google._key.get_secret_value() == "g-secret-2" and google._cx == "cx-3"
    searx: Any = build_search_provider("searxng", settings(), client, FULL_ENV)
    assert searx.base_url == "http://127.0.0.1:8888"
    se: Any = build_search_provider(
        "stackexchange", settings(**{"search.stackexchange_site": "serverfault"}), client, {}
    )
    assert se.site == "serverfault" and se._key is None  # the key is optional


@pytest.mark.parametrize(
    ("name", "env", "message"),
    [
        ("tavily", {}, "tavily needs TAVILY_API_KEY"),
        ("tavily", {"TAVILY_API_KEY": "  "}, "tavily needs TAVILY_API_KEY"),
        ("google", {"GOOGLE_API_KEY": "k"}, "google needs GOOGLE_CSE_ID"),
        ("google", {}, "google needs GOOGLE_API_KEY and GOOGLE_CSE_ID"),
        ("brave", {}, "brave needs BRAVE_API_KEY"),
        ("searxng", {}, "searxng needs SEARXNG_URL"),
        ("searxng", {"SEARXNG_URL": "localhost:8888"}, "http(s) URL"),
        ("bing", {}, "unknown provider 'bing'"),
    ],
)
async def test_config_errors(
    name: str, env: dict[str, str], message: str, client: httpx.AsyncClient
) -> None:
    with pytest.raises(ConfigError, match=r"search\.providers") as info:
        build_search_provider(name, settings(), client, env)
    assert message in str(info.value)


def test_grep_needs_a_code_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--code DIR"):
        check_search_provider("grep", settings(), {})
    with pytest.raises(ConfigError, match="not a directory"):
        check_search_provider("grep", settings(**{"search.code_dir": tmp_path / "x"}), {})
    check_search_provider("grep", settings(**{"search.code_dir": tmp_path}), {})


def test_grep_is_built_on_the_folder(tmp_path: Path) -> None:
    client = httpx.AsyncClient()  # never used by grep; no connection to close
    provider: Any = build_search_provider(
        "grep", settings(**{"search.code_dir": tmp_path}), client, {}
    )
    assert provider.name == "grep" and provider.root == Path(os.path.realpath(tmp_path))


def test_local_needs_a_corpus() -> None:
    with pytest.raises(ConfigError, match=r"corpus\.path"):
        check_search_provider("local", settings(), {})


def test_known_names_cover_the_issue() -> None:
    assert set(KNOWN_SEARCH_PROVIDERS) == {
        "local",
        "duckduckgo",
        "searxng",
        "tavily",
        "google",
        "brave",
        "stackexchange",
        "arxiv",
        "security",
        "grep",
    }


def test_search_env_keeps_only_what_the_chain_reads() -> None:
    environ = {**FULL_ENV, "HOME": "/root", "AWS_SECRET_ACCESS_KEY": "x", "NVD_API_KEY": " "}
    assert search_env(["local", "google", "security"], environ) == {
        "GITHUB_TOKEN": "ghp-secret-6",
        "GOOGLE_API_KEY": "g-secret-2",
        "GOOGLE_CSE_ID": "cx-3",
    }
    assert search_env(["duckduckgo"], environ) == {}
