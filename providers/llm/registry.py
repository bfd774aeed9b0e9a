"""Build LLM providers and the per-role fallback router by config name, importing lazily.

Lazy imports keep startup fast and let a machine without a vendor SDK still run the model-free
``extractive`` provider. ``scripted`` is deliberately absent: fakes are built by tests, not config.

Keys come only from the usual env vars and are held as ``SecretStr`` in ``LLMKeys`` (a pydantic
model that pickles to actors and never shows its values). A local OpenAI-compatible server
(Ollama, vLLM, LM Studio, llama.cpp) needs no key: with ``OPENAI_BASE_URL`` set and no
``OPENAI_API_KEY`` a placeholder is sent, which such servers ignore. Without either it is a
``ConfigError``, because api.openai.com would only answer 401.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, SecretStr

from deepresearch.config.settings import LLMSettings, LLMTier, Settings
from deepresearch.errors import ConfigError
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import Role

if TYPE_CHECKING:  # imported where a client is made: httpx also loads rich through its own CLI
    import httpx

KNOWN_LLM_PROVIDERS: tuple[str, ...] = ("extractive", "openai", "gemini")
OPENAI_DEFAULT_MODEL = "gpt-4.1-mini"
ROLES: tuple[Role, ...] = ("planner", "researcher", "evaluator", "writer")


class LLMKeys(BaseModel):
    """Provider credentials and endpoints read once from the environment by the driver."""

    model_config = ConfigDict(frozen=True)

    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    gemini_api_key: SecretStr | None = None
    gemini_base_url: str | None = None  # tests point this at a loopback fake


def keys_from_env(env: Mapping[str, str]) -> LLMKeys:
    """``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``GEMINI_API_KEY`` (else ``GOOGLE_API_KEY``)."""

    def secret(*names: str) -> SecretStr | None:
        for name in names:
            value = env.get(name, "").strip()
            if value:
                return SecretStr(value)
        return None

    return LLMKeys(
        openai_api_key=secret("OPENAI_API_KEY"),
        openai_base_url=env.get("OPENAI_BASE_URL", "").strip() or None,
        gemini_api_key=secret("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    )


def _keys(keys: LLMKeys | Mapping[str, str] | None) -> LLMKeys:
    if keys is None:
        return LLMKeys()
    return keys if isinstance(keys, LLMKeys) else keys_from_env(keys)


def check_llm(name: str, keys: LLMKeys | Mapping[str, str] | None = None) -> None:
    """What ``build_llm`` refuses (an unknown name, a missing key), without building the
    provider: a driver checks the run's models, the crew's processes build them."""
    key = name.strip().lower()
    creds = _keys(keys)
    if key == "openai" and creds.openai_api_key is None and creds.openai_base_url is None:
        raise ConfigError(
            "llm.provider", "openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    if key == "gemini" and creds.gemini_api_key is None:
        raise ConfigError("llm.provider", "gemini needs GEMINI_API_KEY or GOOGLE_API_KEY")
    check_llm_name(name)


def check_llm_name(name: str) -> None:
    """``ConfigError`` for a provider name no builder knows (``submit`` checks before a job,
    where the keys are the cluster's)."""
    if name.strip().lower() not in KNOWN_LLM_PROVIDERS:
        known = ", ".join(KNOWN_LLM_PROVIDERS)
        raise ConfigError("llm.provider", f"unknown provider {name!r} (known: {known})")


def check_router(settings: Settings, keys: LLMKeys | Mapping[str, str] | None = None) -> None:
    """``check_llm`` for every tier ``build_router`` would build."""
    for role in ROLES:
        for tier in role_chain(settings.llm, role):
            check_llm(tier.provider, keys)


def build_llm(
    name: str,
    model: str = "",
    *,
    keys: LLMKeys | Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    timeout_s: float = 120.0,
    settings: LLMSettings | None = None,
) -> LLMProvider:
    """The provider called ``name``; ``model`` overrides its default model where it has one;
    ``settings`` carry the OpenAI-compatible server's family, streaming and output caps."""
    key = name.strip().lower()
    creds = _keys(keys)
    check_llm(key, creds)
    if key == "extractive":
        from deepresearch.providers.llm.extractive import ExtractiveLLM

        return ExtractiveLLM(model=model or "extractive-v1")
    if key == "openai":
        from deepresearch.providers.llm.openai_compat import OpenAICompatLLM

        return OpenAICompatLLM(
            creds.openai_api_key,
            creds.openai_base_url,
            model or OPENAI_DEFAULT_MODEL,
            http_client or _default_client(timeout_s),
            timeout_s=timeout_s,
            **_compat_options(settings),
        )
    from deepresearch.providers.llm.gemini import GEMINI_DEFAULT_MODEL, GeminiLLM

    assert creds.gemini_api_key is not None  # check_llm refused a gemini without its key
    return GeminiLLM(
        creds.gemini_api_key,
        model or GEMINI_DEFAULT_MODEL,
        http_client,
        base_url=creds.gemini_base_url,
        timeout_s=timeout_s,
    )


def _compat_options(llm: LLMSettings | None) -> dict[str, Any]:
    if llm is None:
        return {}
    return {
        "server": llm.server,
        "stream": llm.stream,
        "output_caps": llm.max_output_tokens,
        "chars_per_token": llm.chars_per_token,
    }


def _default_client(timeout_s: float) -> httpx.AsyncClient:
    import httpx

    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=10.0))


def fallback_tiers(llm: LLMSettings) -> tuple[LLMTier, ...]:
    """``llm.fallback``; unset, ``[extractive]`` when a model is configured, so a model that is
    down or answers junk costs the run its model, not its report. An emptied list (``[]``) is the
    user's choice: no fallback, the run fails when the model does."""
    if llm.fallback is not None:
        return llm.fallback
    own = [llm.provider, *(t.provider for t in llm.roles.values())]
    models = any(name.strip().lower() != "extractive" for name in own)
    return (LLMTier(provider="extractive"),) if models else ()


def default_chain(llm: LLMSettings) -> list[LLMTier]:
    """``llm.provider``/``llm.model`` then the fallback tiers, without repeats."""
    return _dedupe([LLMTier(provider=llm.provider, model=llm.model), *fallback_tiers(llm)])


def role_chain(llm: LLMSettings, role: Role) -> list[LLMTier]:
    """The role's own tier (if configured) in front of the default chain."""
    own = llm.roles.get(role)
    return _dedupe([own, *default_chain(llm)] if own is not None else default_chain(llm))


def _dedupe(tiers: list[LLMTier]) -> list[LLMTier]:
    seen: set[tuple[str, str]] = set()
    out: list[LLMTier] = []
    for tier in tiers:
        ident = (tier.provider.strip().lower(), tier.model)
        if ident not in seen:
            seen.add(ident)
            out.append(tier)
    return out


def build_router(
    settings: Settings,
    env: LLMKeys | Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    breaker_states: dict[str, Any] | None = None,
    **router_kwargs: Any,
) -> LLMProvider:
    """The run's LLM: ``extractive`` alone is returned bare (exactly as ``build_llm``); anything
    else is a ``Router`` over per-role chains (retries, breakers, fallback). One provider instance per
    (name, model) is shared by every role, so its breaker state is shared too.
    ``router_kwargs`` go to ``Router`` (hook, notify, clock, sleep, rand); ``breaker_states`` is
    the tiers' breaker states shared with other runs' routers (a crew process passes one dict)."""
    llm = settings.llm
    creds = _keys(env)
    client = http_client
    needs_http = any(
        t.provider.strip().lower() != "extractive" for role in ROLES for t in role_chain(llm, role)
    )
    if client is None and needs_http:
        client = _default_client(llm.timeout_s)
    built: dict[tuple[str, str], LLMProvider] = {}

    def provider(tier: LLMTier) -> LLMProvider:
        ident = (tier.provider.strip().lower(), tier.model)
        if ident not in built:
            built[ident] = build_llm(
                tier.provider,
                tier.model,
                keys=creds,
                http_client=client,
                timeout_s=llm.timeout_s,
                settings=llm,
            )
        return built[ident]

    default = [provider(t) for t in default_chain(llm)]
    roles = {role: [provider(t) for t in role_chain(llm, role)] for role in llm.roles}
    if not needs_http and len(default) == 1 and not roles and not router_kwargs:
        return default[0]  # extractive alone: nothing to retry or fall back to
    from deepresearch.providers.breakers import breaker_config, retry_policy
    from deepresearch.providers.llm.router import Router, tier_key

    servers = {"openai": creds.openai_base_url, "gemini": creds.gemini_base_url}
    endpoints = {tier_key(p): servers[name] for (name, _), p in built.items() if servers.get(name)}
    return Router(
        default,
        breaker_config(llm.breaker),
        retry_policy(llm.retry),
        roles=roles,
        breaker_states=breaker_states,
        endpoints={k: v for k, v in endpoints.items() if v},
        **router_kwargs,
    )


__all__ = [
    "KNOWN_LLM_PROVIDERS",
    "OPENAI_DEFAULT_MODEL",
    "LLMKeys",
    "build_llm",
    "build_router",
    "check_llm",
    "check_llm_name",
    "check_router",
    "default_chain",
    "fallback_tiers",
    "keys_from_env",
    "role_chain",
]
