"""Google Gemini through the ``google-genai`` async API, with native JSON-schema output.

The pydantic schema goes in ``response_json_schema`` (plain JSON Schema, ``$defs`` included),
which the older ``response_schema`` (an OpenAPI subset) cannot express. A server that rejects it
degrades once to JSON mime type only, then plain text, and the provider remembers. The SDK's own
retries stay off (no ``retry_options``): the router owns retries and fallback. The injected
``httpx.AsyncClient`` carries the requests, and ``base_url`` lets tests use a loopback fake.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any, Literal

import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.policies.resilience.retry import parse_retry_after
from deepresearch.providers.llm.openai_compat import counted_reply, estimate_tokens, scrub

GEMINI_DEFAULT_MODEL = "gemini-2.5-flash"
Mode = Literal["json_schema", "json_mime", "text"]
_DOWNGRADE: dict[Mode, Mode] = {"json_schema": "json_mime", "json_mime": "text"}
_EXCERPT = 200
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_delay_from_details(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "17s"``), if present."""
    error = details.get("error", details) if isinstance(details, dict) else None
    items = error.get("details", []) if isinstance(error, dict) else []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            match = _DELAY.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


class GeminiLLM:
    """``LLMProvider`` over ``genai.Client(...).aio.models.generate_content``."""

    def __init__(
        self,
        api_key: SecretStr,
        model: str = GEMINI_DEFAULT_MODEL,
        http_client: httpx.AsyncClient | None = None,
        *,
        name: str = "gemini",
        base_url: str | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        self.name = name
        self.model = model or GEMINI_DEFAULT_MODEL
        self._secret = api_key.get_secret_value()
        options = types.HttpOptions(
            base_url=base_url,
            timeout=math.ceil(timeout_s * 1000),
            httpx_async_client=http_client,
        )
        self._client = genai.Client(api_key=self._secret, vertexai=False, http_options=options)
        self.mode: Mode = "json_schema"

    def __repr__(self) -> str:
        return f"GeminiLLM(name={self.name!r}, model={self.model!r}, mode={self.mode!r})"

    def count_tokens(self, text: str) -> int:
        """Estimated (chars / 4); the exact count would cost a network round trip per call."""
        return estimate_tokens(text)

    def _config(self, request: LLMRequest) -> types.GenerateContentConfig:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        config = types.GenerateContentConfig(
            system_instruction=system or None, max_output_tokens=request.max_output_tokens
        )
        if request.output_schema and self.mode != "text":
            config.response_mime_type = "application/json"
            if self.mode == "json_schema":
                config.response_json_schema = request.output_schema
        return config

    @staticmethod
    def _contents(request: LLMRequest) -> list[types.Content]:
        return [
            types.Content(
                role="model" if m.role == "assistant" else "user",
                parts=[types.Part(text=m.content)],
            )
            for m in request.messages
            if m.role != "system"
        ]

    async def complete(self, request: LLMRequest) -> LLMReply:
        while True:
            failure: ProviderError | None = None
            try:
                response = await self._client.aio.models.generate_content(
                    model=self.model, contents=self._contents(request), config=self._config(request)
                )
                return self._reply(request, response)
            except genai_errors.APIError as exc:
                if not (exc.code == 400 and self._adapt(exc)):
                    failure = self._map(exc)
            except httpx.TimeoutException:
                failure = ProviderError(self.name, "request timed out", True)
            except httpx.HTTPError as exc:
                failure = ProviderError(
                    self.name, f"connection failed ({type(exc).__name__})", True
                )
            except ValueError:  # a 200 whose body is not JSON
                failure = ProviderError(self.name, "malformed response body", True)
            if failure is not None:
                raise failure  # outside the handler: no vendor exception chained (may echo the key)

    def _adapt(self, exc: genai_errors.APIError) -> bool:
        message = str(exc.message or "").lower()
        if ("schema" in message or "mime" in message) and self.mode in _DOWNGRADE:
            self.mode = _DOWNGRADE[self.mode]
            return True
        return False

    def _reply(self, request: LLMRequest, response: types.GenerateContentResponse) -> LLMReply:
        text = _text_of(response)
        usage = response.usage_metadata
        counted = None
        if usage is not None and usage.prompt_token_count is not None:
            out = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
            counted = (usage.prompt_token_count, out)
        return counted_reply(self.name, self.model, request, text, counted)

    def _map(self, exc: genai_errors.APIError) -> ProviderError:
        code = int(exc.code or 0)
        if code == 429:
            header = _header(exc, "retry-after")
            delay = parse_retry_after(header, time.time()) if header else None
            return RateLimited(
                self.name, delay if delay is not None else retry_delay_from_details(exc.details)
            )
        if code in (401, 403):
            return ProviderError(
                self.name, f"HTTP {code}: authentication failed (check the API key)", False
            )
        detail = scrub(str(exc.message or exc.status or ""), self._secret)[:_EXCERPT]
        return ProviderError(self.name, f"HTTP {code}: {detail}", code >= 500 or code == 408)


def _text_of(response: types.GenerateContentResponse) -> str:
    """The concatenated text parts of the first candidate, skipping thought parts."""
    for candidate in response.candidates or []:
        parts = candidate.content.parts if candidate.content is not None else None
        if parts:
            return "".join(p.text for p in parts if p.text and not p.thought)
    return ""


def _header(exc: genai_errors.APIError, name: str) -> str | None:
    headers = getattr(exc.response, "headers", None)
    value = headers.get(name) if headers is not None else None
    return str(value) if value is not None else None


__all__ = ["GEMINI_DEFAULT_MODEL", "GeminiLLM", "retry_delay_from_details"]
