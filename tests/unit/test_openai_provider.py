"""OpenAICompatLLM through the real ``openai`` client against the loopback scripted server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from deepresearch.errors import ProviderError, RateLimited
from deepresearch.llm_messages import QueriesTask, QueryList
from deepresearch.providers.llm.openai_compat import OpenAICompatLLM, scrub
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.providers.testing.openai_server import (
    ScriptedOpenAIServer,
    Step,
    rate_limited,
    reject_json_schema,
    reply,
    server_error,
)

KEY = "sk-test-VERYSECRET-0123456789abcdef"
GOOD = '{"queries": ["apple gross margin 2023", "apple 10-Q"]}'


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _request() -> Any:
    return build_request("researcher", QueriesTask(question="Apple gross margin 2023"), QueryList)


def _provider(server: ScriptedOpenAIServer, http: httpx.AsyncClient, **kw: Any) -> OpenAICompatLLM:
    return OpenAICompatLLM(SecretStr(KEY), server.base_url, "gpt-4.1-mini", http, **kw)


async def test_structured_reply_uses_json_schema_and_server_usage(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD, input_tokens=321, output_tokens=17)]) as server:
        llm = _provider(server, http)
        result, replies = await call_structured(llm, _request(), QueryList)
        server.assert_all_used()
    assert result.queries == ("apple gross margin 2023", "apple 10-Q")
    (r,) = replies
    assert (r.provider, r.model, r.input_tokens, r.output_tokens) == (
        "openai",
        "gpt-4.1-mini",
        321,
        17,
    )
    assert not r.estimated_tokens
    body = server.requests[0].body
    assert body["model"] == "gpt-4.1-mini"
    assert body["messages"][0]["role"] == "system"
    assert "Apple gross margin 2023" in body["messages"][1]["content"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "QueryList"
    assert fmt["json_schema"]["schema"] == QueryList.model_json_schema()
    assert fmt["json_schema"]["strict"] is False
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"


async def test_falls_back_to_json_object_then_text_and_remembers(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD), reply(GOOD)], accept_formats=()) as server:
        llm = _provider(server, http)
        await call_structured(llm, _request(), QueryList)
        await call_structured(llm, _request(), QueryList)
        server.assert_all_used()
    kinds = [r.response_format_type for r in server.requests]
    # schema rejected, JSON mode rejected, text works; the second call goes straight to text
    assert kinds == ["json_schema", "json_object", None, None]
    assert llm.mode == "text"


async def test_explicit_400_about_response_format_downgrades_once(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reject_json_schema(), reply(GOOD)]) as server:
        llm = _provider(server, http)
        result, _ = await call_structured(llm, _request(), QueryList)
        server.assert_all_used()
    assert result.queries[0] == "apple gross margin 2023"
    assert [r.response_format_type for r in server.requests] == ["json_schema", "json_object"]


async def test_unrelated_400_is_not_retried(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([Step(status=400, error="model not found")]) as server:
        with pytest.raises(ProviderError) as info:
            await _provider(server, http).complete(_request())
        server.assert_all_used()
    assert not info.value.retryable
    assert "HTTP 400" in str(info.value)


async def test_switches_to_max_completion_tokens_when_asked(http: httpx.AsyncClient) -> None:
    def respond(body: dict[str, Any]) -> Step:
        if "max_tokens" in body:
            return Step(
                status=400,
                error="Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'.",
            )
        return reply(GOOD)

    async with ScriptedOpenAIServer(respond) as server:
        llm = _provider(server, http)
        await llm.complete(_request())
        await llm.complete(_request())
    assert ["max_tokens" in b for b in server.bodies()] == [True, False, False]
    assert server.bodies()[1]["max_completion_tokens"] == 256  # the queries cap


async def test_think_preamble_is_stripped(http: httpx.AsyncClient) -> None:
    step = Step(text=GOOD, think="The user wants {not json} queries...")
    async with ScriptedOpenAIServer([step]) as server:
        result, replies = await call_structured(_provider(server, http), _request(), QueryList)
    assert replies[0].text.startswith("<think>")
    assert result.queries == ("apple gross margin 2023", "apple 10-Q")


async def test_missing_usage_is_estimated_and_flagged(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([Step(text=GOOD, include_usage=False)]) as server:
        r = await _provider(server, http).complete(_request())
    assert r.estimated_tokens
    prompt_chars = sum(len(m.content) for m in _request().messages)
    assert r.input_tokens == -(-prompt_chars // 4)
    assert r.output_tokens == -(-len(GOOD) // 4)


async def test_429_maps_to_rate_limited_with_retry_after(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([rate_limited("7")]) as server:
        with pytest.raises(RateLimited) as info:
            await _provider(server, http).complete(_request())
    assert info.value.retry_after_s == 7.0
    assert info.value.retryable


@pytest.mark.parametrize(
    ("step", "words"),
    [
        (server_error(), "HTTP 500"),
        (Step(malformed=True), "malformed response body"),
        (Step(status=503, error="overloaded"), "HTTP 503"),
    ],
)
async def test_server_failures_are_retryable(
    http: httpx.AsyncClient, step: Step, words: str
) -> None:
    async with ScriptedOpenAIServer([step]) as server:
        with pytest.raises(ProviderError) as info:
            await _provider(server, http).complete(_request())
    assert info.value.retryable
    assert words in str(info.value)


async def test_timeout_is_retryable(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([Step(text=GOOD, delay_s=0.5)]) as server:
        with pytest.raises(ProviderError) as info:
            await _provider(server, http, timeout_s=0.1).complete(_request())
    assert info.value.retryable
    assert "timed out" in str(info.value)


async def test_auth_failure_never_shows_the_key(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f"Incorrect API key provided: {KEY[:3]}...{KEY[-12:]} and {KEY}"
    steps = [Step(status=401, error=echo), Step(status=404, error=echo)]
    async with ScriptedOpenAIServer(steps) as server:
        llm = _provider(server, http)
        with pytest.raises(ProviderError) as auth:
            await llm.complete(_request())
        with pytest.raises(ProviderError) as other:
            await llm.complete(_request())
    assert not auth.value.retryable
    assert "authentication failed" in str(auth.value)
    for err in (auth.value, other.value):
        text = f"{err} {err!r} {err.reason} {err.__cause__!r} {err.__context__!r}"
        assert KEY not in text
        assert KEY[-12:] not in text
    assert KEY not in repr(llm)
    assert caplog.records, "the openai/httpx loggers should have logged the requests"
    assert all(KEY not in r.getMessage() and KEY not in str(r.args) for r in caplog.records)


def test_scrub_removes_partial_keys() -> None:
    assert scrub(f"bad key {KEY[-10:]}!", KEY) == "bad key [redacted]!"
    assert scrub("nothing here", KEY) == "nothing here"


async def test_unexpected_extra_call_fails_loudly(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD)]) as server:
        llm = _provider(server, http)
        await llm.complete(_request())
        with pytest.raises(ProviderError) as info:
            await llm.complete(_request())
    assert "unexpected call #2" in str(info.value)
    with pytest.raises(AssertionError, match="unexpected call #2"):
        server.assert_no_unexpected()


async def test_unused_steps_fail_assert_all_used(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD), reply(GOOD)]) as server:
        await _provider(server, http).complete(_request())
    server.assert_no_unexpected()
    with pytest.raises(AssertionError, match="1 scripted step"):
        server.assert_all_used()


async def test_server_also_answers_without_v1_prefix(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD)]) as server:
        base = server.base_url.removesuffix("/v1")
        llm = OpenAICompatLLM(None, base, "local-model", http)
        r = await llm.complete(_request())
    assert r.text == GOOD
    assert server.requests[0].path == "/chat/completions"
    assert server.requests[0].headers["Authorization"] == "Bearer no-key"
