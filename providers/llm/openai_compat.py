"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, OpenRouter).

Servers differ in what structured output they accept, so the provider degrades per server and
remembers it: JSON-schema mode, then JSON mode, then plain text (the structured helper parses
all three). The ``openai`` client's own retries are off: the router owns retries and fallback.
Errors become our ``ProviderError`` family with messages built from status codes, never from
request data, and every vendor message is scrubbed of the key (OpenAI echoes part of a bad key).
"""

from __future__ import annotations

import math
import time
from typing import Any, Literal, cast

import httpx
import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies.resilience.retry import parse_retry_after

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY_PLACEHOLDER = "no-key"  # local servers (Ollama, vLLM) ignore the Authorization header
Mode = Literal["json_schema", "json_object", "text"]
_DOWNGRADE: dict[Mode, Mode] = {"json_schema": "json_object", "json_object": "text"}
_EXCERPT = 200


def estimate_tokens(text: str) -> int:
    """About four characters per token for English under BPE tokenizers; an estimate, flagged."""
    return math.ceil(len(text) / 4)


def counted_reply(
    provider: str, model: str, request: LLMRequest, text: str, counted: tuple[int, int] | None
) -> LLMReply:
    """The reply with the (input, output) tokens the API counted or, when it sent none, estimates
    flagged as such (so cost figures say they are estimates)."""
    if counted is not None:
        inp, out, estimated = counted[0], counted[1], False
    else:
        prompt = "".join(m.content for m in request.messages)
        inp, out, estimated = estimate_tokens(prompt), estimate_tokens(text), True
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


class OpenAICompatLLM:
    """``LLMProvider`` over ``openai.AsyncOpenAI`` with one injected ``httpx.AsyncClient``."""

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
        start_mode: Mode = "json_schema",
    ) -> None:
        self.name = name
        self.model = model
        self._secret = api_key.get_secret_value() if api_key is not None else ""
        self._client = openai.AsyncOpenAI(
            api_key=self._secret or NO_KEY_PLACEHOLDER,
            base_url=base_url or OPENAI_DEFAULT_BASE_URL,
            http_client=http_client,  # type: ignore[arg-type]  # openai accepts legacy httpx
            max_retries=0,
            timeout=timeout_s,
        )
        self._temperature = temperature
        self.mode: Mode = start_mode
        self._max_tokens_param = "max_tokens"

    def __repr__(self) -> str:
        return f"OpenAICompatLLM(name={self.name!r}, model={self.model!r}, mode={self.mode!r})"

    def count_tokens(self, text: str) -> int:
        """Estimated (chars / 4): no tokenizer is shipped for arbitrary compatible servers."""
        return estimate_tokens(text)

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
        while True:
            failure: ProviderError | None = None
            try:
                return await self._once(request)
            except openai.BadRequestError as exc:
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

    def _adapt(self, exc: openai.BadRequestError) -> bool:
        """Learn from a 400 about a request feature; True when a changed request may succeed."""
        message = str(exc.message).lower()
        if "max_completion_tokens" in message and self._max_tokens_param == "max_tokens":
            self._max_tokens_param = "max_completion_tokens"
            return True
        if ("response_format" in message or "json_schema" in message) and self.mode in _DOWNGRADE:
            self.mode = _DOWNGRADE[self.mode]
            return True
        return False

    async def _once(self, request: LLMRequest) -> LLMReply:
        kwargs: dict[str, Any] = {self._max_tokens_param: request.max_output_tokens}
        fmt = self._response_format(request)
        if fmt is not None:
            kwargs["response_format"] = fmt
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        messages = cast(
            "list[ChatCompletionMessageParam]",
            [{"role": m.role, "content": m.content} for m in request.messages],
        )
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
        return counted_reply(self.name, self.model, request, text, counted)

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
            retryable = status >= 500 or status in (408, 409)
            return ProviderError(self.name, f"HTTP {status}: {detail}", retryable)
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(self.name, "malformed response body", True)
        detail = scrub(str(exc), self._secret)[:_EXCERPT]
        return ProviderError(self.name, f"{type(exc).__name__}: {detail}", True)


__all__ = ["NO_KEY_PLACEHOLDER", "OPENAI_DEFAULT_BASE_URL", "OpenAICompatLLM", "estimate_tokens"]
