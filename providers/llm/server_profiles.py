"""What each family of OpenAI-compatible server accepts and reports, as data, and how to tell them
apart from what the server itself says.

The same client talks to llama-cpp-python, llama.cpp's server, Ollama, vLLM, LM Studio and hosted
OpenAI, and they differ where it matters: which ``response_format`` forms they take (llama-cpp-python
refuses ``json_schema`` with an HTTP 500, LM Studio refuses ``json_object``), where they say how
long their context window is, whether their streams carry usage, and which status codes they use
to refuse a request form. ``detect`` is pure over a ``Probe`` (``/v1/models`` headers and body and
``/api/version``); the provider does the fetching, once per (base URL, model) per process.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Form = Literal["json_schema", "json_object", "text"]
Family = Literal[
    "llama-cpp-python", "llama.cpp", "ollama", "vllm", "lm-studio", "openai", "generic"
]
# Where a family says how many tokens its context holds (beyond a context-length error).
WindowSource = Literal["models", "props", "api_show", "lm_studio_models", "none"]
FAMILIES: tuple[str, ...] = get_args(Family)
ALL_FORMS: tuple[Form, ...] = ("json_schema", "json_object", "text")


@dataclass(frozen=True)
class Profile:
    """One server family. ``forms``: the ``response_format`` forms to try, best first (``text``
    always last: the schema then travels in the prompt). ``stream_usage``: its streams end with a
    usage chunk when asked (``stream_options.include_usage``), so streaming keeps counts exact.
    ``refusal_statuses``: the statuses with which it refuses a request form (a message naming the
    form must come with them; a bare 500 stays a retryable server error)."""

    family: Family
    forms: tuple[Form, ...]
    window_source: WindowSource
    stream_usage: bool
    refusal_statuses: frozenset[int] = frozenset({400, 415, 422, 500, 501})
    ollama_default_ctx: int = 0  # Ollama: what it runs with when the model sets no num_ctx


PROFILES: dict[str, Profile] = {
    p.family: p
    for p in (
        # 0.3.x validates response_format.type as 'text' | 'json_object' and answers a 500
        # (pydantic's literal_error); its streams send no usage chunk.
        Profile("llama-cpp-python", ("json_object", "text"), "none", False),
        Profile("llama.cpp", ALL_FORMS, "props", True),
        Profile("ollama", ALL_FORMS, "api_show", True, ollama_default_ctx=4096),
        Profile("vllm", ALL_FORMS, "models", True),
        # LM Studio: "'response_format.type' must be 'json_schema' or 'text'" (400).
        Profile("lm-studio", ("json_schema", "text"), "lm_studio_models", True),
        Profile("openai", ALL_FORMS, "none", True, refusal_statuses=frozenset({400})),
        Profile("generic", ALL_FORMS, "none", False),
    )
}


@dataclass(frozen=True)
class Probe:
    """What the server said when asked: ``reachable`` is False when no HTTP answer came at all
    (then nothing is learnt and the server is probed again later)."""

    reachable: bool = True
    base_url: str = ""
    models_status: int | None = None
    models_headers: Mapping[str, str] = field(default_factory=dict)
    models_body: Any = None
    version_body: Any = None


def named(name: str) -> Profile:
    """The profile config names (``llm.server``); ``ValueError`` for an unknown family."""
    key = name.strip().lower().replace("_", "-")
    aliases = {"llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "lmstudio": "lm-studio"}
    key = aliases.get(key, key)
    if key not in PROFILES:
        raise ValueError(f"unknown server family {name!r} (known: auto, {', '.join(FAMILIES)})")
    return PROFILES[key]


def _models(body: Any) -> list[dict[str, Any]]:
    data = body.get("data") if isinstance(body, dict) else None
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def detect(probe: Probe) -> Profile:
    """The family a server belongs to, from its ``/v1/models`` answer and ``/api/version``."""
    headers = {k.lower(): v.lower() for k, v in probe.models_headers.items()}
    models = _models(probe.models_body)
    owners = {str(m.get("owned_by", "")).lower() for m in models}
    if "api.openai.com" in probe.base_url or "openai-organization" in headers:
        return PROFILES["openai"]
    if any("max_model_len" in m for m in models) or "vllm" in owners:
        return PROFILES["vllm"]
    if "llamacpp" in owners or "llama.cpp" in headers.get("server", ""):
        return PROFILES["llama.cpp"]
    if isinstance(probe.version_body, dict) and "version" in probe.version_body:
        return PROFILES["ollama"]  # /api/version is Ollama's own endpoint
    if "organization_owner" in owners:
        return PROFILES["lm-studio"]
    if owners == {"me"} and all("permissions" in m for m in models):
        return PROFILES["llama-cpp-python"]  # its /v1/models answers owned_by "me"
    return PROFILES["generic"]


def window_from_models(body: Any, model: str) -> int | None:
    """vLLM's ``max_model_len`` (``/v1/models``) for ``model`` (or the only model served)."""
    return _per_model(_models(body), model, ("max_model_len",))


def window_from_lm_studio(body: Any, model: str) -> int | None:
    """LM Studio's ``/api/v0/models``: the loaded context length, else the model's maximum."""
    return _per_model(_models(body), model, ("loaded_context_length", "max_context_length"))


def _per_model(models: list[dict[str, Any]], model: str, keys: tuple[str, ...]) -> int | None:
    chosen = [m for m in models if m.get("id") == model] or (models if len(models) == 1 else [])
    for m in chosen:
        for key in keys:
            value = m.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None


def window_from_props(body: Any) -> int | None:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (or a top-level ``n_ctx``)."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    for source in (settings if isinstance(settings, dict) else {}, body):
        value = source.get("n_ctx")
        if isinstance(value, int) and value > 0:
            return value
    return None


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.MULTILINE)


def window_from_ollama_show(body: Any, default_ctx: int) -> int | None:
    """Ollama's ``/api/show``: the model's ``num_ctx`` parameter when set; otherwise Ollama runs
    with its default (and silently drops what does not fit), capped by the trained length."""
    if not isinstance(body, dict):
        return None
    match = _NUM_CTX.search(str(body.get("parameters") or ""))
    if match:
        return int(match.group(1))
    info = body.get("model_info")
    trained = [
        v
        for k, v in (info.items() if isinstance(info, dict) else ())
        if str(k).endswith(".context_length") and isinstance(v, int) and v > 0
    ]
    if trained:
        return min(trained[0], default_ctx) if default_ctx else trained[0]
    return default_ctx or None


_CONTEXT_ERROR = re.compile(
    r"context length|context window|context size|n_ctx|exceeds? the available context"
    r"|maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)
_WINDOW_NUMBER = re.compile(
    r"(?:context (?:length|window|size)(?: is| of)?|n_ctx[\"' :=]*|window of)\s*(\d{3,7})",
    re.IGNORECASE,
)


def context_error(message: str) -> tuple[bool, int | None]:
    """Whether an error message says the prompt did not fit, and the window it names if any
    (vLLM/OpenAI: "maximum context length is 4096 tokens"; llama-cpp-python: "exceed context
    window of 8192"; llama.cpp: "exceeds the available context size", with ``n_ctx`` in the body)."""
    if not _CONTEXT_ERROR.search(message):
        return False, None
    match = _WINDOW_NUMBER.search(message)
    return True, int(match.group(1)) if match else None


_FORM_WORDS = re.compile(r"response_format|json_schema|json_object|'text'", re.IGNORECASE)


def refuses_form(profile: Profile, status: int, message: str) -> bool:
    """Whether an error is the server refusing the request's ``response_format`` form (then the
    next form may succeed), as opposed to a failure worth retrying as it is."""
    return status in profile.refusal_statuses and bool(_FORM_WORDS.search(message))


__all__ = [
    "ALL_FORMS",
    "FAMILIES",
    "PROFILES",
    "Family",
    "Form",
    "Probe",
    "Profile",
    "context_error",
    "detect",
    "named",
    "refuses_form",
    "window_from_lm_studio",
    "window_from_models",
    "window_from_ollama_show",
    "window_from_props",
]
