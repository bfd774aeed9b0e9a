"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp,
llama-cpp-python, OpenRouter).

Servers differ in what structured output they accept, how they say their context window and
whether their streams carry usage: the server's family (``server_profiles``) is detected once per
(base URL, model) per process, or named by ``llm.server``. Structured output steps down JSON-schema
mode, then JSON mode, then plain text (the schema always in the prompt; the structured helper parses
all three) on whatever error the server refuses a form with, and the step is remembered. The
window is learnt from the server or from a context-length error, and characters per token are
calibrated from the prompt tokens it reports. The ``openai`` client's own retries are off: the router owns retries and fallback.
Errors become our ``ProviderError`` family with messages built from status codes, never from
request data, and every vendor message is scrubbed of the key (OpenAI echoes part of a bad key).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

import httpx
import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies.resilience.retry import parse_retry_after
from deepresearch.providers.llm import server_profiles
from deepresearch.providers.llm.server_profiles import Form, Probe, Profile

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY_PLACEHOLDER = "no-key"  # local servers (Ollama, vLLM) ignore the Authorization header
Mode: TypeAlias = Form
Stream = Literal["auto", "on", "off"]
_EXCERPT = 200
_PROBE_TIMEOUT_S = 5.0
_REPROBE_AFTER_S = 30.0  # a server unreachable at first is asked again after this long
_CALIBRATE_MIN_TOKENS = 200  # reported prompt tokens before the measured ratio is trusted
_log = logging.getLogger(__name__)


def estimate_tokens(text: str) -> int:
    """About four characters per token for English under BPE tokenizers; an estimate, flagged."""
    return math.ceil(len(text) / 4)


def counted_reply(
    provider: str,
    model: str,
    request: LLMRequest,
    text: str,
    counted: tuple[int, int] | None,
    *,
    chars_per_token: float = 4.0,
) -> LLMReply:
    """The reply with the (input, output) tokens the API counted or, when it sent none, estimates
    flagged as such (so cost figures say they are estimates)."""
    if counted is not None:
        inp, out, estimated = counted[0], counted[1], False
    else:
        prompt = "".join(m.content for m in request.messages)
        inp = math.ceil(len(prompt) / chars_per_token)
        out, estimated = math.ceil(len(text) / chars_per_token), True
    return LLMReply(
        text=text,
        provider=provider,
        model=model,
        input_tokens=inp,
        output_tokens=out,
        estimated_tokens=estimated,
    )


def scrub(text: str, secret: str, min_run: int = 8) -> str:
    """``text`` with the secret and every visible run of ``min_run``+ of its characters redacted."""
    if not secret or secret == NO_KEY_PLACEHOLDER:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        best = 0
        for j in range(len(secret)):
            k = 0
            while i + k < len(text) and j + k < len(secret) and text[i + k] == secret[j + k]:
                k += 1
            best = max(best, k)
        if best >= min_run:
            out.append("[redacted]")
            i += best
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


@dataclass
class ServerFacts:
    """What one (base URL, model) taught this process: its family, the structured-output form it
    takes, its context window and the characters per token its prompts measured."""

    profile: Profile | None = None
    mode: Mode | None = None
    window: int | None = None
    prompt_chars: int = 0
    prompt_tokens: int = 0
    probe_after: float = 0.0  # monotonic time before which an unreachable server is not re-asked
    probing: bool = False  # a call is asking it now (concurrent first calls ask once)

    def chars_per_token(self, default: float) -> float:
        if self.prompt_tokens >= _CALIBRATE_MIN_TOKENS and self.prompt_chars > 0:
            return self.prompt_chars / self.prompt_tokens
        return default


_FACTS: dict[tuple[str, str], ServerFacts] = {}


def server_facts(base_url: str, model: str) -> ServerFacts:
    """The process's facts about one server and model (made empty on first use)."""
    return _FACTS.setdefault((base_url.rstrip("/"), model), ServerFacts())


def forget_server(base_url: str) -> None:
    """Drop what was learnt about a base URL (a loopback fake reusing a port is a new server)."""
    for key in [k for k in _FACTS if k[0] == base_url.rstrip("/")]:
        del _FACTS[key]


def _schema_text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


class OpenAICompatLLM:
    """``LLMProvider`` over ``openai.AsyncOpenAI`` with one injected ``httpx.AsyncClient``.

    ``server``: a family name from ``server_profiles`` or ``"auto"`` (detected from the server).
    ``stream``: ``"auto"`` streams where the family's streams carry usage. ``output_caps``: tokens
    per task kind, overriding the request's own cap (``llm.max_output_tokens``)."""

    def __init__(
        self,
        api_key: SecretStr | None,
        base_url: str | None,
        model: str,
        http_client: httpx.AsyncClient,
        *,
        name: str = "openai",
        timeout_s: float = 120.0,
        temperature: float | None = None,
        start_mode: Mode | None = None,
        server: str = "auto",
        stream: Stream = "auto",
        output_caps: Mapping[str, int] | None = None,
        chars_per_token: float = 4.0,
    ) -> None:
        self.name = name
        self.model = model
        self._secret = api_key.get_secret_value() if api_key is not None else ""
        self._base_url = (base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")
        self._http = http_client
        self._client = openai.AsyncOpenAI(
            api_key=self._secret or NO_KEY_PLACEHOLDER,
            base_url=self._base_url,
            http_client=http_client,  # type: ignore[arg-type]  # openai accepts legacy httpx
            max_retries=0,
            timeout=timeout_s,
        )
        self._temperature = temperature
        self._facts = server_facts(self._base_url, model)
        if server.strip().lower() != "auto":
            self._facts.profile = server_profiles.named(server)
        elif base_url is None:  # api.openai.com: nothing to probe
            self._facts.profile = server_profiles.PROFILES["openai"]
        if start_mode is not None and self._facts.mode is None:
            self._facts.mode = start_mode
        self._stream = stream
        self._caps = dict(output_caps or {})
        self._chars_per_token = chars_per_token
        self._max_tokens_param = "max_tokens"

    def __repr__(self) -> str:
        return f"OpenAICompatLLM(name={self.name!r}, model={self.model!r}, mode={self.mode!r})"

    @property
    def profile(self) -> Profile:
        return self._facts.profile or server_profiles.PROFILES["generic"]

    @property
    def mode(self) -> Mode:
        """The structured-output form requests use now (the family's best until refused)."""
        return self._facts.mode or self.profile.forms[0]

    @property
    def context_window(self) -> int | None:
        """Tokens the server's context holds, once it said so (or a context error named it)."""
        return self._facts.window

    def count_tokens(self, text: str) -> int:
        """Estimated: characters over the ratio this server's reported prompt tokens measured
        (``llm.chars_per_token`` until enough were reported); no tokenizer ships for them."""
        return math.ceil(len(text) / self._facts.chars_per_token(self._chars_per_token))

    def _response_format(self, request: LLMRequest) -> dict[str, Any] | None:
        if not request.output_schema or self.mode == "text":
            return None
        if self.mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": request.output_name or "reply",
                "schema": request.output_schema,
                "strict": False,
            },
        }

    async def complete(self, request: LLMRequest) -> LLMReply:
        await self._learn()
        while True:
            failure: ProviderError | None = None
            try:
                return await self._once(request)
            except openai.APIStatusError as exc:
                if not self._adapt(exc):
                    failure = self._map(exc)
            except openai.OpenAIError as exc:
                failure = self._map(exc)
            except ValueError:  # a 200 whose body is not JSON (json.JSONDecodeError)
                failure = ProviderError(self.name, "malformed response body", True)
            if failure is not None:
                # Raised outside the handler so neither __cause__ nor __context__ keeps the
                # vendor exception (its message may echo the key).
                raise failure

    def _adapt(self, exc: openai.APIStatusError) -> bool:
        """Learn from a refused request feature; True when a changed request may succeed."""
        message = str(exc.message)
        status = exc.status_code
        if (
            status == 400
            and "max_completion_tokens" in message.lower()
            and self._max_tokens_param == "max_tokens"
        ):
            self._max_tokens_param = "max_completion_tokens"
            return True
        if server_profiles.refuses_form(self.profile, status, message):
            forms = self.profile.forms
            index = forms.index(self.mode) if self.mode in forms else -1
            if index + 1 < len(forms):
                self._facts.mode = forms[index + 1]
                _log.info("%s refused %s; stepping down to %s", self.name, forms[index], self.mode)
                return True
        return False

    def _messages(self, request: LLMRequest) -> list[ChatCompletionMessageParam]:
        """The prompt, with the schema spelled out in it whenever the request form does not carry
        it (JSON mode and plain text), unless the prompt already does."""
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        if request.output_schema and self.mode != "json_schema":
            schema = _schema_text(request.output_schema)
            if not any(schema in m.content for m in request.messages):
                line = f"Reply with JSON only, matching this JSON schema: {schema}"
                if messages and messages[0]["role"] == "system":
                    messages[0] = {
                        "role": "system",
                        "content": f"{messages[0]['content']}\n\n{line}",
                    }
                else:
                    messages.insert(0, {"role": "system", "content": line})
        return cast("list[ChatCompletionMessageParam]", messages)

    def _streams(self) -> bool:
        if self._stream == "off":
            return False
        return self._stream == "on" or self.profile.stream_usage

    async def _once(self, request: LLMRequest) -> LLMReply:
        cap = self._caps.get(request.task.kind, request.max_output_tokens)
        kwargs: dict[str, Any] = {self._max_tokens_param: cap}
        fmt = self._response_format(request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        messages = self._messages(request)
        if self._streams():
            text, counted = await self._streamed(messages, kwargs)
        else:
            response = await self._client.chat.completions.create(
                model=self.model, messages=messages, **kwargs
            )
            if not isinstance(response, openai.types.chat.ChatCompletion) or not response.choices:
                raise ProviderError(self.name, "malformed response (no choices)", True)
            text = response.choices[0].message.content or ""
            usage = response.usage
            counted = None
            if usage is not None and usage.prompt_tokens is not None:
                counted = (usage.prompt_tokens, usage.completion_tokens or 0)
        if counted is not None and counted[0] > 0:
            self._facts.prompt_chars += sum(len(str(m.get("content", ""))) for m in messages)
            self._facts.prompt_tokens += counted[0]
        ratio = self._facts.chars_per_token(self._chars_per_token)
        return counted_reply(self.name, self.model, request, text, counted, chars_per_token=ratio)

    async def _streamed(
        self, messages: list[ChatCompletionMessageParam], kwargs: dict[str, Any]
    ) -> tuple[str, tuple[int, int] | None]:
        """Stream the reply (so a slow model shows progress in the log and no proxy idles out)
        and take the usage chunk the family sends at its end."""
        options = {"include_usage": True} if self.profile.stream_usage else None
        extra: dict[str, Any] = {"stream_options": options} if options else {}
        stream = await self._client.chat.completions.create(
            model=self.model, messages=messages, stream=True, **extra, **kwargs
        )
        parts: list[str] = []
        counted: tuple[int, int] | None = None
        chars, logged = 0, time.monotonic()
        async for chunk in stream:
            if chunk.usage is not None and chunk.usage.prompt_tokens is not None:
                counted = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens or 0)
            for choice in chunk.choices:
                piece = choice.delta.content if choice.delta is not None else None
                if piece:
                    parts.append(piece)
                    chars += len(piece)
            if time.monotonic() - logged > 5.0:
                logged = time.monotonic()
                _log.info("%s:%s streaming, %d characters so far", self.name, self.model, chars)
        return "".join(parts), counted

    async def _learn(self) -> None:
        """Detect the server's family and window once (again later if it did not answer)."""
        facts = self._facts
        if facts.probe_after < 0 or time.monotonic() < facts.probe_after:
            return  # asked and answered, or unreachable a moment ago
        if facts.profile is not None and self.profile.window_source == "none":
            return  # named by config (or hosted OpenAI) and no window to ask for
        if facts.probing:
            return  # another call is asking; this one goes ahead with what is known
        facts.probing = True
        try:
            await self._ask(facts)
        finally:
            facts.probing = False

    async def _ask(self, facts: ServerFacts) -> None:
        headers = {"Authorization": f"Bearer {self._secret or NO_KEY_PLACEHOLDER}"}
        root = self._base_url.removesuffix("/v1")
        probe = await self._probe(root, headers)
        if not probe.reachable:
            facts.probe_after = time.monotonic() + _REPROBE_AFTER_S
            return
        if facts.profile is None:
            facts.profile = server_profiles.detect(probe)
            _log.info("%s at %s looks like %s", self.name, self._base_url, facts.profile.family)
        facts.window = facts.window or await self._window(root, headers, probe)
        facts.probe_after = -1.0  # asked and answered: never again in this process

    async def _probe(self, root: str, headers: dict[str, str]) -> Probe:
        models = await self._get(f"{self._base_url}/models", headers)
        if models is None:
            return Probe(reachable=False, base_url=self._base_url)
        version_body: Any = None
        if self._facts.profile is None:
            version = await self._get(f"{root}/api/version", headers)
            version_body = _json(version) if version is not None else None
        return Probe(
            reachable=True,
            base_url=self._base_url,
            models_status=models.status_code,
            models_headers=dict(models.headers),
            models_body=_json(models),
            version_body=version_body,
        )

    async def _window(self, root: str, headers: dict[str, str], probe: Probe) -> int | None:
        profile = self.profile
        source = profile.window_source
        if source == "models":
            return server_profiles.window_from_models(probe.models_body, self.model)
        if source == "props":
            props = await self._get(f"{root}/props", headers)
            return server_profiles.window_from_props(_json(props))
        if source == "lm_studio_models":
            listing = await self._get(f"{root}/api/v0/models", headers)
            return server_profiles.window_from_lm_studio(_json(listing), self.model)
        if source == "api_show":
            show = await self._get(f"{root}/api/show", headers, body={"model": self.model})
            return server_profiles.window_from_ollama_show(_json(show), profile.ollama_default_ctx)
        return None

    async def _get(
        self, url: str, headers: dict[str, str], body: dict[str, Any] | None = None
    ) -> httpx.Response | None:
        """One probe request (a POST when ``body`` is given); None when no HTTP answer came."""
        try:
            if body is None:
                return await self._http.get(url, headers=headers, timeout=_PROBE_TIMEOUT_S)
            return await self._http.post(url, headers=headers, json=body, timeout=_PROBE_TIMEOUT_S)
        except httpx.HTTPError:
            return None

    def _map(self, exc: openai.OpenAIError) -> ProviderError:
        """Our error for an ``openai`` one; the reason never carries the key."""
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(self.name, "request timed out", True)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError(
                self.name, f"connection failed ({type(exc.__cause__).__name__})", True
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if status == 429:
                header = exc.response.headers.get("retry-after")
                return RateLimited(self.name, parse_retry_after(header, time.time()))
            if status in (401, 403):
                return ProviderError(
                    self.name, f"HTTP {status}: authentication failed (check the API key)", False
                )
            detail = scrub(str(exc.message), self._secret)[:_EXCERPT]
            overflow, window = server_profiles.context_error(f"{exc.message} {exc.body}")
            if overflow and (status < 500 or window is not None):
                # The same prompt would overflow again: not retried, and the window it names
                # sizes the next prompts.
                if window is not None:
                    self._facts.window = min(window, self._facts.window or window)
                return ProviderError(self.name, f"HTTP {status}: context exceeded: {detail}", False)
            retryable = status >= 500 or status in (408, 409)
            return ProviderError(self.name, f"HTTP {status}: {detail}", retryable)
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(self.name, "malformed response body", True)
        detail = scrub(str(exc), self._secret)[:_EXCERPT]
        return ProviderError(self.name, f"{type(exc).__name__}: {detail}", True)


def _json(response: httpx.Response | None) -> Any:
    if response is None or response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


__all__ = [
    "NO_KEY_PLACEHOLDER",
    "OPENAI_DEFAULT_BASE_URL",
    "OpenAICompatLLM",
    "ServerFacts",
    "estimate_tokens",
    "forget_server",
    "server_facts",
]
