"""A loopback OpenAI-compatible chat-completions server driven by a script.

Tests (and users checking their own configs offline) point the real ``openai`` client at it, so
the whole HTTP path is exercised: request encoding, ``response_format``, usage fields, status
codes, ``Retry-After`` and malformed bodies. It is strict like ``ScriptedLLM``: a call beyond the
script gets a 500 with a clear message AND is recorded, so ``assert_no_unexpected`` fails the
test even when the code under test swallowed the 500 and fell back to another tier.

``quirks=`` makes it behave as one server family did when recorded (``QUIRKS``): which
``response_format`` forms it refuses and with what status and message, what ``/v1/models``,
``/api/version``, ``/props``, ``/api/show`` and ``/api/v0/models`` answer, whether streams carry
usage, and how a prompt longer than its window is refused. Each server serves under a base URL of
its own (a fresh path prefix), so what a provider learnt about an earlier fake on a reused port
never applies to a new one.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from aiohttp import web

JSON_SCHEMA_REJECTION = "response_format type 'json_schema' is not supported by this server"
JSON_OBJECT_REJECTION = "response_format type 'json_object' is not supported by this server"
# llama-cpp-python 0.3.x, as recorded: pydantic refuses the literal, the server answers a 500.
LLAMA_CPP_PYTHON_REJECTION = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}"
)
LM_STUDIO_REJECTION = "'response_format.type' must be 'json_schema' or 'text'"
_PREFIXES = itertools.count(1)


@dataclass(frozen=True)
class Quirks:
    """How one server family behaves. ``refuse``: form -> (status, message). ``chars_per_token``:
    how its tokenizer counts prompts (its usage, and its window check, follow it)."""

    family: str
    refuse: dict[str, tuple[int, str]] = field(default_factory=dict)
    models: Callable[[str, int], dict[str, Any]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    version: dict[str, Any] | None = None
    props: bool = False
    show: bool = False
    lm_studio_models: bool = False
    stream_usage: bool = True
    overflow: Callable[[int, int], tuple[int, dict[str, Any]]] | None = None
    chars_per_token: float = 4.0


def _listing(*extra: tuple[str, Any]) -> Callable[[str, int], dict[str, Any]]:
    def build(model: str, n_ctx: int) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": model, "object": "model"}
        for key, value in extra:
            entry[key] = n_ctx if value is _N_CTX else value
        return {"object": "list", "data": [entry]}

    return build


_N_CTX = object()


def _error_body(message: str, kind: str = "invalid_request_error", **more: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None, **more}}


QUIRKS: dict[str, Quirks] = {
    q.family: q
    for q in (
        Quirks(
            "llama-cpp-python",
            refuse={"json_schema": (500, LLAMA_CPP_PYTHON_REJECTION)},
            models=_listing(("owned_by", "me"), ("permissions", [])),
            headers={"server": "uvicorn"},
            stream_usage=False,
            overflow=lambda n, ctx: (
                400,
                _error_body(f"Requested tokens ({n}) exceed context window of {ctx}"),
            ),
            chars_per_token=2.6,
        ),
        Quirks(
            "llama.cpp",
            models=_listing(("owned_by", "llamacpp"), ("meta", {"n_ctx_train": 8192})),
            headers={"server": "llama.cpp"},
            props=True,
            overflow=lambda n, ctx: (
                400,
                _error_body(
                    "the request exceeds the available context size, try increasing it",
                    "exceed_context_size_error",
                    n_prompt_tokens=n,
                    n_ctx=ctx,
                ),
            ),
        ),
        Quirks(
            "ollama",
            models=_listing(("owned_by", "library"), ("created", 0)),
            version={"version": "0.6.5"},
            show=True,
        ),
        Quirks(
            "vllm",
            models=_listing(("owned_by", "vllm"), ("max_model_len", _N_CTX)),
            overflow=lambda n, ctx: (
                400,
                _error_body(
                    f"This model's maximum context length is {ctx} tokens. However, you "
                    f"requested {n} tokens in the messages. Please reduce the length."
                ),
            ),
        ),
        Quirks(
            "lm-studio",
            refuse={"json_object": (400, LM_STUDIO_REJECTION)},
            models=_listing(("owned_by", "organization_owner")),
            lm_studio_models=True,
        ),
        Quirks(
            "openai",
            models=_listing(("owned_by", "system"), ("created", 0)),
            headers={"openai-organization": "user-test"},
        ),
    )
}


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
    body: dict[str, Any] | None = None  # sent as it is, with ``status`` (a recorded reply)


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
        quirks: str | None = None,
        n_ctx: int = 8192,
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
        self.quirks = QUIRKS[quirks] if quirks is not None else None
        self.n_ctx = n_ctx
        self.probes: list[str] = []  # the paths of GET/POST probes beyond chat completions
        self.recorded_info: dict[str, Any] = {}  # path -> a recorded probe answer
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> ScriptedOpenAIServer:
        app = web.Application()
        self._prefix = f"/fake{os.getpid()}-{next(_PREFIXES)}"
        for prefix in ("", self._prefix):
            app.router.add_post(f"{prefix}/v1/chat/completions", self._handle)
            app.router.add_post(f"{prefix}/chat/completions", self._handle)
            app.router.add_get(f"{prefix}/v1/models", self._info)
            app.router.add_get(f"{prefix}/models", self._info)
            app.router.add_get(f"{prefix}/api/version", self._info)
            app.router.add_get(f"{prefix}/props", self._info)
            app.router.add_post(f"{prefix}/api/show", self._info)
            app.router.add_get(f"{prefix}/api/v0/models", self._info)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self.base_url = f"http://127.0.0.1:{port}{self._prefix}/v1"
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

    async def _info(self, request: web.Request) -> web.Response:
        """The family's answers to the endpoints a client probes (404 where it has none)."""
        path = request.path.removeprefix(self._prefix)
        self.probes.append(path)
        if path in self.recorded_info:
            return web.json_response(self.recorded_info[path])
        q = self.quirks
        if q is None:
            raise web.HTTPNotFound()
        answer: Any = None
        if path in ("/v1/models", "/models") and q.models is not None:
            answer = q.models(self.model, self.n_ctx)
        elif path == "/api/version":
            answer = q.version
        elif path == "/props" and q.props:
            answer = {"default_generation_settings": {"n_ctx": self.n_ctx}, "total_slots": 1}
        elif path == "/api/show" and q.show:
            answer = {
                "parameters": f"num_ctx                        {self.n_ctx}",
                "model_info": {"llama.context_length": 131072},
            }
        elif path == "/api/v0/models" and q.lm_studio_models:
            answer = {
                "object": "list",
                "data": [
                    {
                        "id": self.model,
                        "max_context_length": 131072,
                        "loaded_context_length": self.n_ctx,
                    }
                ],
            }
        if answer is None:
            raise web.HTTPNotFound()
        return web.json_response(answer, headers=q.headers)

    def _prompt_tokens(self, body: dict[str, Any]) -> int:
        chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        per_token = self.quirks.chars_per_token if self.quirks is not None else 4.0
        return math.ceil(chars / per_token) if self.quirks is not None else chars // 4

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = request.path.removeprefix(self._prefix)
        self.requests.append(RecordedRequest(path, body, dict(request.headers)))
        n = len(self.requests)
        fmt = self.requests[-1].response_format_type
        q = self.quirks
        if q is not None and fmt in q.refuse:
            status, message = q.refuse[fmt]
            return _error(status, message, "invalid_request_error")
        if fmt is not None and fmt != "text" and fmt not in self.accept_formats:
            rejection = JSON_SCHEMA_REJECTION if fmt == "json_schema" else JSON_OBJECT_REJECTION
            return _error(400, rejection, "invalid_request_error")
        if q is not None and q.overflow is not None:
            wanted = self._prompt_tokens(body) + int(body.get("max_tokens") or 0)
            if wanted > self.n_ctx:
                status, payload = q.overflow(wanted, self.n_ctx)
                return web.json_response(payload, status=status)
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
        if step.body is not None:
            return web.json_response(step.body, status=step.status)
        if step.status != 200:
            headers = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            return _error(step.status, step.error or f"scripted HTTP {step.status}", "", headers)
        if step.malformed:
            return web.Response(
                text='{"id": "chatcmpl-broken", "choices": [',
                status=200,
                content_type="application/json",
            )
        completion = self._completion(body, step, n)
        if body.get("stream"):
            return await self._stream(request, body, completion)
        return web.json_response(completion)

    async def _stream(
        self, request: web.Request, body: dict[str, Any], completion: dict[str, Any]
    ) -> web.StreamResponse:
        """The completion as server-sent events, a few characters a chunk; the usage chunk comes
        last where the family sends one and the client asked for it."""
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        text = completion["choices"][0]["message"]["content"]
        base = {k: completion[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        pieces = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
        for i, piece in enumerate(pieces):
            delta: dict[str, Any] = {"content": piece}
            if i == 0:
                delta["role"] = "assistant"
            last = i == len(pieces) - 1
            choice = {"index": 0, "delta": delta, "finish_reason": "stop" if last else None}
            await out.write(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode())
        options = body.get("stream_options") or {}
        sends_usage = self.quirks is None or self.quirks.stream_usage
        if sends_usage and options.get("include_usage") and "usage" in completion:
            chunk = {**base, "choices": [], "usage": completion["usage"]}
            await out.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await out.write(b"data: [DONE]\n\n")
        await out.write_eof()
        return out

    def _completion(self, body: dict[str, Any], step: Step, n: int) -> dict[str, Any]:
        text = f"<think>{step.think}</think>\n{step.text}" if step.think is not None else step.text
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
            counted = self._prompt_tokens(body)
            prompt = counted if step.input_tokens is None else step.input_tokens
            completion = len(text) // 4 if step.output_tokens is None else step.output_tokens
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out


def replaying(records: Sequence[Mapping[str, Any]], **kwargs: Any) -> ScriptedOpenAIServer:
    """A server answering as a recorded one did: each recorded chat-completions reply (status and
    body as received) in order, and the recorded answers to probes. A record is one line of a
    recording: ``path``, ``code``, ``req`` and ``resp`` (JSON text or already parsed)."""

    def parsed(value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    steps: list[ScriptItem] = []
    info: dict[str, Any] = {}
    for record in records:
        path, status, body = str(record["path"]), int(record["code"]), parsed(record["resp"])
        if path.endswith("/chat/completions"):
            steps.append(Step(status=status, body=body))
        else:
            info[path] = body
    server = ScriptedOpenAIServer(steps, **kwargs)
    server.recorded_info = info
    return server


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
    "LLAMA_CPP_PYTHON_REJECTION",
    "LM_STUDIO_REJECTION",
    "QUIRKS",
    "Quirks",
    "RecordedRequest",
    "ScriptedOpenAIServer",
    "Step",
    "rate_limited",
    "reject_json_schema",
    "replaying",
    "reply",
    "server_error",
]
