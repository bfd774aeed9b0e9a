"""GeminiLLM through the real google-genai client against a loopback Gemini-shaped server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from aiohttp import web
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.llm_messages import ChatMessage, QueriesTask, QueryList
from deepresearch.providers.llm.gemini import GeminiLLM, retry_delay_from_details
from deepresearch.providers.llm.structured import build_request, call_structured

KEY = "AIzaSy-GEMINI-SECRET-0123456789"
GOOD = '{"queries": ["apple gross margin"]}'

Reply = tuple[int, dict[str, Any]]


def ok(text: str = GOOD, usage: bool = True, thought: str | None = None) -> Reply:
    parts: list[dict[str, Any]] = [{"text": text}]
    if thought is not None:
        parts.insert(0, {"text": thought, "thought": True})
    body: dict[str, Any] = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]
    }
    if usage:
        body["usageMetadata"] = {
            "promptTokenCount": 120,
            "candidatesTokenCount": 9,
            "thoughtsTokenCount": 30,
            "totalTokenCount": 159,
        }
    return 200, body


def fail(code: int, message: str, status: str, details: list[Any] | None = None) -> Reply:
    return code, {
        "error": {"code": code, "message": message, "status": status, "details": details or []}
    }


class FakeGemini:
    """Answers ``:generateContent`` from a list of replies and records request bodies."""

    def __init__(self, replies: list[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        self.replies = replies
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append((request.path, dict(request.headers), body))
        if callable(self.replies):
            status, payload = self.replies(body)
        else:
            status, payload = self.replies.pop(0)
        return web.json_response(payload, status=status)


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[FakeGemini], Any]]:
    runners: list[web.AppRunner] = []
    client = httpx.AsyncClient()

    async def start(fake: FakeGemini) -> GeminiLLM:
        app = web.Application()
        app.router.add_post("/{tail:.*}", fake.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return GeminiLLM(
            SecretStr(KEY), "gemini-2.5-flash", client, base_url=f"http://127.0.0.1:{port}"
        )

    yield start
    await client.aclose()
    for runner in runners:
        await runner.cleanup()


def _request() -> Any:
    return build_request("researcher", QueriesTask(question="Apple gross margin"), QueryList)


async def test_request_and_response_mapping(serve: Any) -> None:
    fake = FakeGemini([ok(thought="thinking about it")])
    llm = await serve(fake)
    request = _request()
    request = request.model_copy(
        update={"messages": (*request.messages, ChatMessage(role="assistant", content="prev"))}
    )
    result, replies = await call_structured(llm, request, QueryList)
    assert result.queries == ("apple gross margin",)
    (r,) = replies
    assert (r.provider, r.model, r.input_tokens, r.output_tokens) == (
        "gemini",
        "gemini-2.5-flash",
        120,
        39,
    )
    assert not r.estimated_tokens
    path, headers, body = fake.requests[0]
    assert path.endswith("/models/gemini-2.5-flash:generateContent")
    assert headers["x-goog-api-key"] == KEY
    assert body["systemInstruction"]["parts"][0]["text"] == request.messages[0].content
    assert [c["role"] for c in body["contents"]] == ["user", "model"]
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == QueryList.model_json_schema()
    assert config["maxOutputTokens"] == 256  # the queries cap (OUTPUT_CAPS)


async def test_missing_usage_is_estimated(serve: Any) -> None:
    llm = await serve(FakeGemini([ok(usage=False)]))
    r = await llm.complete(_request())
    assert r.estimated_tokens and r.output_tokens == -(-len(GOOD) // 4)


async def test_schema_rejection_downgrades_and_is_remembered(serve: Any) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if "responseJsonSchema" in body.get("generationConfig", {}):
            return fail(
                400, "Invalid JSON payload: unknown field response_json_schema", "INVALID_ARGUMENT"
            )
        return ok()

    fake = FakeGemini(respond)
    llm = await serve(fake)
    await llm.complete(_request())
    await llm.complete(_request())
    configs = [b["generationConfig"] for _, _, b in fake.requests]
    assert ["responseJsonSchema" in c for c in configs] == [True, False, False]
    assert all(c["responseMimeType"] == "application/json" for c in configs[1:])
    assert llm.mode == "json_mime"


async def test_429_reads_retry_info(serve: Any) -> None:
    info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]
    llm = await serve(FakeGemini([fail(429, "quota exceeded", "RESOURCE_EXHAUSTED", info)]))
    with pytest.raises(RateLimited) as err:
        await llm.complete(_request())
    assert err.value.retry_after_s == 17.0


@pytest.mark.parametrize(("code", "retryable"), [(500, True), (503, True), (404, False)])
async def test_status_mapping(serve: Any, code: int, retryable: bool) -> None:
    llm = await serve(FakeGemini([fail(code, "trouble", "X")]))
    with pytest.raises(ProviderError) as err:
        await llm.complete(_request())
    assert err.value.retryable is retryable
    assert f"HTTP {code}" in str(err.value)


async def test_auth_error_and_logs_never_show_the_key(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm = await serve(FakeGemini([fail(400 + 3, f"API key {KEY} not valid", "PERMISSION_DENIED")]))
    with pytest.raises(ProviderError) as err:
        await llm.complete(_request())
    assert "authentication failed" in str(err.value)
    assert KEY not in f"{err.value!r} {err.value.__context__!r} {err.value.__cause__!r} {llm!r}"
    assert all(KEY not in r.getMessage() for r in caplog.records)


def test_retry_delay_parser_ignores_junk() -> None:
    assert (
        retry_delay_from_details(
            {"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "2.5s"}]}}
        )
        == 2.5
    )
    assert retry_delay_from_details({"error": {"details": "nope"}}) is None
    assert retry_delay_from_details(None) is None
