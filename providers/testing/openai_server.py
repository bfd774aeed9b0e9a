"""A loopback OpenAI-compatible chat-completions server driven by a script.

Tests (and users checking their own configs offline) point the real ``openai`` client at it, so
the whole HTTP path is exercised: request encoding, ``response_format``, usage fields, status
codes, ``Retry-After`` and malformed bodies. It is strict like ``ScriptedLLM``: a call beyond the
script gets a 500 with a clear message AND is recorded, so ``assert_no_unexpected`` fails the
test even when the code under test swallowed the 500 and fell back to another tier.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from aiohttp import web

JSON_SCHEMA_REJECTION = "response_format type 'json_schema' is not supported by this server"
JSON_OBJECT_REJECTION = "response_format type 'json_object' is not supported by this server"


@dataclass(frozen=True)
class Step:
    """One scripted reply. ``status`` other than 200 sends an OpenAI-shaped error body.

    ``input_tokens``/``output_tokens`` of ``None`` are computed as characters / 4;
    ``include_usage=False`` omits the usage object (clients must then estimate).
    """

    text: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    include_usage: bool = True
    status: int = 200
    error: str = ""
    retry_after: str | None = None
    delay_s: float = 0.0
    malformed: bool = False
    think: str | None = None


Responder: TypeAlias = Callable[[dict[str, Any]], Step]
ScriptItem: TypeAlias = Step | Responder


def reply(text: str, input_tokens: int | None = None, output_tokens: int | None = None) -> Step:
    return Step(text=text, input_tokens=input_tokens, output_tokens=output_tokens)


def rate_limited(retry_after: str | None = "1") -> Step:
    return Step(status=429, error="Rate limit reached, slow down", retry_after=retry_after)


def server_error(message: str = "upstream exploded") -> Step:
    return Step(status=500, error=message)


def reject_json_schema() -> Step:
    """A 400 that names ``response_format``, as servers without JSON-schema mode send."""
    return Step(status=400, error=JSON_SCHEMA_REJECTION)


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def response_format_type(self) -> str | None:
        fmt = self.body.get("response_format")
        return fmt.get("type") if isinstance(fmt, dict) else None


class ScriptedOpenAIServer:
    """``async with ScriptedOpenAIServer([...]) as server:`` then use ``server.base_url``.

    ``script`` is a sequence of ``Step``s (or callables ``body -> Step``) consumed in order, or one
    callable answering every call. ``accept_formats`` lists the ``response_format`` types the server
    supports; a request using another one gets a 400 without consuming a step (like a real server).
    """

    def __init__(
        self,
        script: Sequence[ScriptItem] | Responder,
        *,
        model: str = "scripted-openai",
        accept_formats: Sequence[str] = ("json_schema", "json_object"),
    ) -> None:
        self._handler: Responder | None = None
        self._steps: list[ScriptItem] = []
        if callable(script):
            self._handler = script
        else:
            self._steps = list(script)
        self._next = 0
        self.model = model
        self.accept_formats = frozenset(accept_formats)
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> ScriptedOpenAIServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]

    def unused(self) -> int:
        return 0 if self._handler is not None else len(self._steps) - self._next

    def assert_no_unexpected(self) -> None:
        if self.errors:
            raise AssertionError("ScriptedOpenAIServer: " + "; ".join(self.errors))

    def assert_all_used(self) -> None:
        self.assert_no_unexpected()
        if self.unused():
            raise AssertionError(
                f"ScriptedOpenAIServer: {self.unused()} scripted step(s) left unused "
                f"after {len(self.requests)} call(s)"
            )

    def _take(self, body: dict[str, Any]) -> Step | None:
        if self._handler is not None:
            return self._handler(body)
        if self._next >= len(self._steps):
            return None
        item = self._steps[self._next]
        self._next += 1
        return item if isinstance(item, Step) else item(body)

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        self.requests.append(RecordedRequest(request.path, body, dict(request.headers)))
        n = len(self.requests)
        fmt = self.requests[-1].response_format_type
        if fmt is not None and fmt != "text" and fmt not in self.accept_formats:
            rejection = JSON_SCHEMA_REJECTION if fmt == "json_schema" else JSON_OBJECT_REJECTION
            return _error(400, rejection, "invalid_request_error")
        step = self._take(body)
        if step is None:
            message = (
                f"unexpected call #{n}: the script has only {len(self._steps)} step(s) "
                f"(last user message: {_last_user(body)[:80]!r})"
            )
            self.errors.append(message)
            return _error(500, f"ScriptedOpenAIServer: {message}", "script_exhausted")
        if step.delay_s > 0:
            await asyncio.sleep(step.delay_s)
        if step.status != 200:
            headers = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            return _error(step.status, step.error or f"scripted HTTP {step.status}", "", headers)
        if step.malformed:
            return web.Response(
                text='{"id": "chatcmpl-broken", "choices": [',
                status=200,
                content_type="application/json",
            )
        return web.json_response(self._completion(body, step, n))

    def _completion(self, body: dict[str, Any], step: Step, n: int) -> dict[str, Any]:
        text = f"<think>{step.think}</think>\n{step.text}" if step.think is not None else step.text
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        out: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
        if step.include_usage:
            prompt = prompt_chars // 4 if step.input_tokens is None else step.input_tokens
            completion = len(text) // 4 if step.output_tokens is None else step.output_tokens
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out


def _last_user(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


def _error(
    status: int, message: str, kind: str, headers: dict[str, str] | None = None
) -> web.Response:
    payload = {"error": {"message": message, "type": kind or "api_error", "code": None}}
    return web.json_response(payload, status=status, headers=headers or {})


__all__ = [
    "JSON_SCHEMA_REJECTION",
    "RecordedRequest",
    "ScriptedOpenAIServer",
    "Step",
    "rate_limited",
    "reject_json_schema",
    "reply",
    "server_error",
]
