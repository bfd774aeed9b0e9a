"""Server families: detection, stepping down structured output, windows, usage and streaming,
against the loopback fake playing each family's recorded quirks (and a replayed recording)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from pydantic import SecretStr

from deepresearch.config.settings import (
    LLMSettings,
    ServerFamily,
    TaskKind,
    load_settings,
    overrides_from_flags,
)
from deepresearch.errors import ProviderError
from deepresearch.llm_messages import OUTPUT_CAPS, ChatMessage, QueriesTask, QueryList, WriteTask
from deepresearch.providers.llm import server_profiles
from deepresearch.providers.llm.base import learned_window
from deepresearch.providers.llm.openai_compat import OpenAICompatLLM, server_facts
from deepresearch.providers.llm.registry import LLMKeys, build_router
from deepresearch.providers.llm.server_profiles import Probe, detect
from deepresearch.providers.llm.structured import build_request
from deepresearch.providers.testing.openai_server import (
    QUIRKS,
    ScriptedOpenAIServer,
    replaying,
    reply,
    server_error,
)

RECORDED = Path(__file__).parent / "recorded" / "llama-cpp-python-smollm2-135m.jsonl"
GOOD = '{"queries": ["apple gross margin 2023", "apple 10-Q"]}'


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _request() -> Any:
    return build_request("researcher", QueriesTask(question="Apple gross margin 2023"), QueryList)


def _llm(fake: ScriptedOpenAIServer, http: httpx.AsyncClient, **kw: Any) -> OpenAICompatLLM:
    return OpenAICompatLLM(None, fake.base_url, "smollm2-135m", http, **kw)


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text("utf-8").splitlines() if line]


def test_config_names_the_same_families_and_task_kinds() -> None:
    assert set(get_args(ServerFamily)) == {"auto", *server_profiles.FAMILIES}
    assert set(get_args(TaskKind)) == set(OUTPUT_CAPS)


def test_config_reads_stream_and_caps() -> None:
    llm = LLMSettings.model_validate({"stream": False, "max_output_tokens": {"write": 4096}})
    assert (llm.stream, llm.max_output_tokens) == ("off", {"write": 4096})
    assert load_settings().llm.server == "auto"
    with pytest.raises(ValueError, match="server"):
        LLMSettings.model_validate({"server": "nonesuch"})


@pytest.mark.parametrize(
    ("probe", "family"),
    [
        (Probe(models_body=json.loads(_records()[0]["resp"])), "llama-cpp-python"),
        (Probe(models_body={"data": [{"id": "m", "max_model_len": 4096}]}), "vllm"),
        (Probe(models_body={"data": [{"id": "m", "owned_by": "llamacpp"}]}), "llama.cpp"),
        (Probe(models_headers={"Server": "llama.cpp"}), "llama.cpp"),
        (Probe(version_body={"version": "0.6.5"}), "ollama"),
        (Probe(models_body={"data": [{"id": "m", "owned_by": "organization_owner"}]}), "lm-studio"),
        (Probe(base_url="https://api.openai.com/v1"), "openai"),
        (Probe(models_body={"data": [{"id": "m", "owned_by": "someone"}]}), "generic"),
    ],
)
def test_detect(probe: Probe, family: str) -> None:
    assert detect(probe).family == family


@pytest.mark.parametrize("family", sorted(QUIRKS))
async def test_each_family_is_detected_and_its_window_learnt(
    http: httpx.AsyncClient, family: str
) -> None:
    async with ScriptedOpenAIServer([reply(GOOD)], quirks=family, n_ctx=6000) as server:
        llm = _llm(server, http)
        await llm.complete(_request())
        server.assert_all_used()
    assert llm.profile.family == family
    reports_window = server_profiles.PROFILES[family].window_source != "none"
    assert llm.context_window == (6000 if reports_window else None)


async def test_recorded_500_steps_down_once_and_is_remembered(http: httpx.AsyncClient) -> None:
    """The recorded llama-cpp-python exchanges: json_schema refused with a 500, then json_object."""
    records = _records()
    refusal, first, second = records[1], records[2], records[3]
    assert refusal["code"] == 500 and "Input should be 'text' or 'json_object'" in refusal["resp"]
    async with replaying([records[0], refusal, first, second]) as server:
        llm = _llm(server, http, server="generic")  # as if detection had told us nothing
        one = await llm.complete(_request())
        two = await llm.complete(_request())
        server.assert_all_used()
    assert [r.response_format_type for r in server.requests] == [
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert llm.mode == "json_object"
    usage = json.loads(first["resp"])["usage"]
    assert (one.input_tokens, one.output_tokens, one.estimated_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
        False,
    )
    assert two.text == json.loads(second["resp"])["choices"][0]["message"]["content"]


async def test_recorded_models_answer_is_detected(http: httpx.AsyncClient) -> None:
    records = _records()
    async with replaying([records[0], records[2]]) as server:
        llm = _llm(server, http)
        await llm.complete(_request())
        server.assert_all_used()
    assert llm.profile.family == "llama-cpp-python"
    assert [r.response_format_type for r in server.requests] == ["json_object"]  # no 500 first


async def test_a_plain_500_stays_retryable(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([server_error()], quirks="llama-cpp-python") as server:
        llm = _llm(server, http, server="generic")
        with pytest.raises(ProviderError) as info:
            await llm.complete(_request())
    assert info.value.retryable
    # the quirk's refusal stepped json_schema down; the bare 500 that followed did not step again
    assert [r.response_format_type for r in server.requests] == ["json_schema", "json_object"]
    assert llm.mode == "json_object"


async def test_lm_studio_refusing_json_object_steps_to_text(http: httpx.AsyncClient) -> None:
    bare = _request().model_copy(
        update={"messages": (ChatMessage(role="user", content="Apple gross margin?"),)}
    )
    async with ScriptedOpenAIServer(
        [reply(GOOD)], quirks="lm-studio", accept_formats=("json_object",)
    ) as server:
        llm = _llm(server, http, server="generic")
        await llm.complete(bare)
        server.assert_all_used()
    # json_schema refused (400), json_object refused with LM Studio's message, text answered
    assert [r.response_format_type for r in server.requests] == ["json_schema", "json_object", None]
    assert llm.mode == "text"
    system = server.requests[-1].body["messages"][0]
    assert system["role"] == "system" and '"queries"' in system["content"]  # schema in the prompt


async def test_lm_studio_detected_never_tries_json_object(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer(
        [reply(GOOD)], quirks="lm-studio", accept_formats=("json_object",)
    ) as server:
        llm = _llm(server, http)
        await llm.complete(_request())
    assert [r.response_format_type for r in server.requests] == ["json_schema", None]


async def test_context_error_is_not_retried_and_teaches_the_window(
    http: httpx.AsyncClient,
) -> None:
    async with ScriptedOpenAIServer([], quirks="llama-cpp-python", n_ctx=300) as server:
        llm = _llm(server, http)
        with pytest.raises(ProviderError) as info:
            await llm.complete(_request())
    assert not info.value.retryable
    assert "context" in str(info.value)
    assert llm.context_window == 300


async def test_chars_per_token_is_calibrated_from_reported_usage(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD)], quirks="llama-cpp-python") as server:
        llm = _llm(server, http)
        assert llm.count_tokens("x" * 2600) == 650  # 4.0 until the server reports usage
        await llm.complete(_request())
    assert abs(llm.count_tokens("x" * 2600) - 1000) <= 5  # its tokenizer: ~2.6 chars a token


async def test_streams_where_the_family_reports_usage(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD, 120, 9)], quirks="vllm") as server:
        r = await _llm(server, http).complete(_request())
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (r.text, r.input_tokens, r.output_tokens, r.estimated_tokens) == (GOOD, 120, 9, False)


async def test_llama_cpp_python_is_not_streamed_unless_asked(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([reply(GOOD), reply(GOOD)], quirks="llama-cpp-python") as s:
        plain = await _llm(s, http).complete(_request())
        forced = await _llm(s, http, stream="on").complete(_request())
    assert "stream" not in s.requests[0].body and not plain.estimated_tokens
    assert s.requests[1].body["stream"] is True
    assert forced.text == GOOD and forced.estimated_tokens  # its streams carry no usage


async def test_each_kind_has_its_cap_and_config_overrides(http: httpx.AsyncClient) -> None:
    write = build_request("writer", WriteTask(query="q", sections=(), sources=()), QueryList)
    assert (_request().max_output_tokens, write.max_output_tokens) == (256, 2048)
    async with ScriptedOpenAIServer([reply(GOOD)]) as server:
        await _llm(server, http, output_caps={"queries": 100}).complete(_request())
    assert server.requests[0].body["max_tokens"] == 100


async def test_an_unreachable_server_is_probed_again_later(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer([]) as server:
        gone = server.base_url
    llm = OpenAICompatLLM(SecretStr("k"), gone, "m", http)
    with pytest.raises(ProviderError):
        await llm.complete(_request())
    facts = server_facts(gone, "m")
    assert facts.profile is None  # nothing learnt: asked again once probe_after has passed
    assert facts.probe_after > 0


async def test_the_router_built_from_settings_passes_the_window_to_the_researcher(
    http: httpx.AsyncClient,
) -> None:
    settings = load_settings(
        None,
        overrides_from_flags(
            {
                "llm.provider": "openai",
                "llm.model": "smollm2-135m",
                "llm.fallback": "extractive",
                "llm.max_output_tokens": {"queries": 99},
            }
        ),
        env={},
    )
    async with ScriptedOpenAIServer([reply(GOOD)], quirks="vllm", n_ctx=6000) as server:
        keys = LLMKeys(openai_base_url=server.base_url)
        router = build_router(settings, keys, http)
        assert learned_window(router, "researcher") is None  # nothing asked yet
        await router.complete(_request())
    assert learned_window(router, "researcher") == 6000
    assert server.requests[0].body["max_tokens"] == 99


async def test_recorded_prompts_are_counted_within_five_percent(http: httpx.AsyncClient) -> None:
    """The recorded prompts, sent again: once the server's prompt tokens have calibrated the
    estimate, it matches what the server counted; characters / 4 did not."""
    records = _records()
    answered = [r for r in records if r["code"] == 200 and r["req"]]
    prompts = [json.loads(r["req"])["messages"] for r in answered]
    reported = sum(json.loads(r["resp"])["usage"]["prompt_tokens"] for r in answered)
    text = ["".join(m["content"] for m in messages) for messages in prompts]
    async with replaying([records[0], *answered]) as server:
        llm = _llm(server, http)
        before = sum(llm.count_tokens(t) for t in text)
        for messages in prompts:
            request = _request().model_copy(
                update={
                    "messages": tuple(ChatMessage(**m) for m in messages),
                    "output_schema": {},
                }
            )
            await llm.complete(request)
        server.assert_all_used()
    after = sum(llm.count_tokens(t) for t in text)
    assert abs(before - reported) / reported > 0.05
    assert abs(after - reported) / reported <= 0.05


@pytest.mark.parametrize(
    ("message", "window"),
    [
        ("This model's maximum context length is 4096 tokens. However, you requested 5000", 4096),
        ("Requested tokens (9000) exceed context window of 8192", 8192),
        (
            "the request exceeds the available context size, try increasing it "
            "{'type': 'exceed_context_size_error', 'n_prompt_tokens': 9000, 'n_ctx': 8192}",
            8192,
        ),
    ],
)
def test_context_errors_name_their_window(message: str, window: int) -> None:
    assert server_profiles.context_error(message) == (True, window)
    assert server_profiles.context_error("upstream exploded") == (False, None)


@pytest.mark.parametrize("family", ["llama.cpp", "vllm"])
async def test_overflow_on_other_families_is_not_retried(
    http: httpx.AsyncClient, family: str
) -> None:
    async with ScriptedOpenAIServer([], quirks=family, n_ctx=300) as server:
        llm = _llm(server, http)
        with pytest.raises(ProviderError) as info:
            await llm.complete(_request())
    assert not info.value.retryable
    assert llm.context_window == 300


async def test_concurrent_first_calls_probe_once(http: httpx.AsyncClient) -> None:
    async with ScriptedOpenAIServer(lambda _body: reply(GOOD), quirks="vllm") as server:
        llm = _llm(server, http)
        await asyncio.gather(*(llm.complete(_request()) for _ in range(4)))
        await llm.complete(_request())
    assert server.probes.count("/v1/models") == 1
