"""Build a search provider by its config name, importing only the one that is used.

Keys come from their usual environment variables, passed in as a mapping (the driver's
environment, or a test's) and wrapped in ``SecretStr`` at once; nothing here reads ``os.environ``
itself. ``check_search_provider`` runs the same checks without building anything, so the driver
can refuse a missing key before starting Ray. ``local`` is delegated to ``assembly`` (it owns the
per-process corpus index).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from deepresearch.config.settings import Settings
from deepresearch.errors import ConfigError
from deepresearch.providers.search.base import SearchProvider

if TYPE_CHECKING:  # the client is the caller's; httpx also loads rich through its own CLI
    import httpx

KNOWN_SEARCH_PROVIDERS: tuple[str, ...] = (
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
)

# name -> environment variables it cannot work without
REQUIRED_ENV: dict[str, tuple[str, ...]] = {
    "searxng": ("SEARXNG_URL",),
    "tavily": ("TAVILY_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GOOGLE_CSE_ID"),
    "brave": ("BRAVE_API_KEY",),
}
# Optional keys: used when set (higher quotas), never required.
OPTIONAL_ENV: dict[str, tuple[str, ...]] = {
    "stackexchange": ("STACKEXCHANGE_KEY",),
    "security": ("GITHUB_TOKEN", "NVD_API_KEY"),
}
KEY = "search.providers"


def _env(env: Mapping[str, str], var: str) -> str | None:
    value = env.get(var, "").strip()
    return value or None


def _secret(env: Mapping[str, str], var: str) -> SecretStr | None:
    value = _env(env, var)
    return SecretStr(value) if value is not None else None


def search_env(names: Iterable[str], environ: Mapping[str, str]) -> dict[str, str]:
    """Only the variables the named providers read, taken from ``environ`` (the driver's), so the
    driver can hand exactly these to the gateway actor instead of its whole environment."""
    wanted = {v for n in names for v in (*REQUIRED_ENV.get(n, ()), *OPTIONAL_ENV.get(n, ()))}
    return {var: environ[var] for var in sorted(wanted) if environ.get(var, "").strip()}


def check_search_name(name: str) -> None:
    """``ConfigError`` for a provider name no builder knows (``submit`` checks before a job)."""
    if name not in KNOWN_SEARCH_PROVIDERS:
        known = ", ".join(KNOWN_SEARCH_PROVIDERS)
        raise ConfigError(KEY, f"unknown provider '{name}' (known: {known})")


def check_search_provider(name: str, settings: Settings, env: Mapping[str, str]) -> None:
    """Raise ``ConfigError`` when ``name`` is unknown or lacks what it needs (key, folder)."""
    check_search_name(name)
    missing = [var for var in REQUIRED_ENV.get(name, ()) if _env(env, var) is None]
    if missing:
        raise ConfigError(KEY, f"{name} needs {' and '.join(missing)}")
    if name == "searxng":
        url = _env(env, "SEARXNG_URL") or ""
        if not url.startswith(("http://", "https://")):
            raise ConfigError(KEY, "searxng needs SEARXNG_URL to be an http(s) URL")
    if name == "local" and settings.corpus.path is None:
        raise ConfigError("corpus.path", "the local search provider needs --corpus DIR")
    if name == "grep":
        code_dir = settings.search.code_dir
        if code_dir is None:
            raise ConfigError("search.code_dir", "the grep search provider needs --code DIR")
        if not Path(code_dir).expanduser().is_dir():
            raise ConfigError("search.code_dir", f"{code_dir} is not a directory")


def build_search_provider(
    name: str, settings: Settings, client: httpx.AsyncClient, env: Mapping[str, str]
) -> SearchProvider:
    """The provider called ``name``, sending its HTTP through ``client`` (shared per process)."""
    check_search_provider(name, settings, env)
    timeout = settings.search.timeout_s
    if name == "local":
        from deepresearch.providers.search.local import LocalSearch, opened_index

        return LocalSearch(opened_index(settings))
    if name == "duckduckgo":
        from deepresearch.providers.search.duckduckgo import DuckDuckGoSearch, ddgs_text_search

        return DuckDuckGoSearch(ddgs_text_search(timeout_s=max(1, round(timeout))))
    if name in ("searxng", "tavily", "google", "brave"):
        return _web_engine(name, client, env, timeout)
    if name == "stackexchange":
        from deepresearch.providers.search.stackexchange import StackExchangeSearch

        return StackExchangeSearch(
            client,
            _secret(env, "STACKEXCHANGE_KEY"),
            site=settings.search.stackexchange_site,
            timeout_s=timeout,
        )
    if name == "arxiv":
        from deepresearch.providers.search.arxiv import ArxivSearch

        return ArxivSearch(client, timeout_s=timeout)
    if name == "security":
        from deepresearch.providers.search.security import SecuritySearch

        return SecuritySearch(
            client,
            github_token=_secret(env, "GITHUB_TOKEN"),
            nvd_api_key=_secret(env, "NVD_API_KEY"),
            timeout_s=timeout,
        )
    from deepresearch.providers.search.grep import GrepSearch

    assert name == "grep" and settings.search.code_dir is not None
    return GrepSearch(Path(settings.search.code_dir), timeout_s=timeout)


def _web_engine(
    name: str, client: httpx.AsyncClient, env: Mapping[str, str], timeout: float
) -> SearchProvider:
    from deepresearch.providers.search import web_engines as w

    if name == "searxng":
        return w.SearxngSearch(client, _env(env, "SEARXNG_URL") or "", timeout_s=timeout)
    key = _secret(env, REQUIRED_ENV[name][0])
    assert key is not None  # checked above
    if name == "tavily":
        return w.TavilySearch(client, key, timeout_s=timeout)
    if name == "google":
        return w.GoogleSearch(client, key, _env(env, "GOOGLE_CSE_ID") or "", timeout_s=timeout)
    return w.BraveSearch(client, key, timeout_s=timeout)


__all__ = [
    "KNOWN_SEARCH_PROVIDERS",
    "OPTIONAL_ENV",
    "REQUIRED_ENV",
    "build_search_provider",
    "check_search_name",
    "check_search_provider",
    "search_env",
]
