"""A reply still schema-invalid after one repair falls to the next tier, as a transport error
does; every reply is counted; the fallback is told (events) and noted on the answering reply.
Also: a tier's breaker is keyed by its server too, and an open circuit is named once."""

from __future__ import annotations

from typing import Any

import pytest
from fake_clock import FakeClock
from pydantic import JsonValue

from deepresearch.errors import LLMUnavailable, ProviderError, StructuredOutputError
from deepresearch.llm_messages import EvaluateTask, QueriesTask, QueryList
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.llm.pricing import usage_of
from deepresearch.providers.llm.router import Router
from deepresearch.providers.llm.structured import (
    build_request,
    call_structured,
    evaluation_or_synthesize,
)
from deepresearch.providers.testing.scripted_llm import ScriptedLLM, ScriptedReply
from deepresearch.schemas import Evaluation

BREAKER = BreakerConfig(failure_threshold=2, reset_timeout_s=30.0, half_open_max_calls=1)
RETRY = RetryPolicy(attempts=1, base_delay_s=1.0, max_delay_s=4.0, retry_after_cap_s=10.0)
JUNK = ScriptedReply('{"title": "Queries", "type": {"kind": "array"}}', 300, 40)


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, JsonValue]]] = []

    async def __call__(self, kind: str, payload: dict[str, JsonValue]) -> None:
        self.seen.append((kind, payload))

    def of(self, kind: str) -> list[dict[str, JsonValue]]:
        return [p for k, p in self.seen if k == kind]


def _router(tiers: list[Any], events: Events, **kw: Any) -> Router:
    t = FakeClock(1000.0)
    return Router(
        tiers, BREAKER, RETRY, clock=t, sleep=t.sleep, rand=lambda: 0.5, notify=events, **kw
    )


def _request() -> Any:
    return build_request("researcher", QueriesTask(question="widget sales 2024"), QueryList)


async def test_an_invalid_reply_after_repair_falls_to_the_next_tier() -> None:
    weak = ScriptedLLM({"researcher": [JUNK, JUNK]}, name="openai", model="small")
    events = Events()
    router = _router([weak, ExtractiveLLM()], events)
    plan, replies = await call_structured(router, _request(), QueryList)
    weak.assert_all_used()  # the reply, and the one repair call
    assert plan.queries
    assert [r.provider for r in replies] == ["openai", "openai", "extractive"]
    usage = usage_of(replies, {})
    assert usage.input_tokens >= 600 and usage.output_tokens >= 80  # the invalid ones counted
    assert replies[-1].fell_back.startswith("The researcher fell back from openai:small to")
    assert "invalid reply after one repair" in replies[-1].fell_back
    (invalid,) = events.of("llm_invalid_reply")
    assert invalid["role"] == "researcher" and invalid["tier"] == "openai:small"
    (fell,) = events.of("llm_fallback")
    assert (fell["role"], fell["from"], fell["to"]) == (
        "researcher",
        "openai:small",
        "extractive:extractive-v1",
    )
    assert "invalid reply after one repair" in str(fell["why"])
    assert router.answered == {"researcher": ["extractive"]}


async def test_a_repaired_reply_stays_on_its_tier() -> None:
    weak = ScriptedLLM({"researcher": [JUNK, '{"queries": ["widget sales"]}']}, name="openai")
    events = Events()
    plan, replies = await call_structured(
        _router([weak, ExtractiveLLM()], events), _request(), QueryList
    )
    assert list(plan.queries) == ["widget sales"]
    assert [r.fell_back for r in replies] == ["", ""]
    assert events.seen == []


async def test_invalid_on_every_tier_is_a_structured_error_not_unavailable() -> None:
    one = ScriptedLLM({"researcher": [JUNK, JUNK]}, name="openai", model="a")
    two = ScriptedLLM({"researcher": [JUNK, JUNK]}, name="gemini", model="b")
    with pytest.raises(StructuredOutputError):
        await call_structured(_router([one, two], Events()), _request(), QueryList)


async def test_the_evaluator_falls_back_before_it_defaults_to_synthesize() -> None:
    weak = ScriptedLLM({"evaluator": ["not json", "still not json"]}, name="openai")
    delegate = '{"action": "delegate", "reason": "gap", "new_subtasks": ["widget plants"]}'
    strong = ScriptedLLM({"evaluator": [delegate]}, name="gemini")
    task = EvaluateTask(query="widget sales", agenda=("widget sales",), summaries=(), max_rounds=2)
    request = build_request("evaluator", task, Evaluation)
    decision, replies = await evaluation_or_synthesize(_router([weak, strong], Events()), request)
    assert decision.action == "delegate" and len(replies) == 3


async def test_a_transport_error_then_junk_is_unavailable_with_each_tier_named_once() -> None:
    down = ScriptedLLM(
        {"researcher": [ProviderError("openai", "connection failed (ConnectError)", True)] * 4},
        name="openai",
        model="a",
    )
    events = Events()
    router = _router([down, ScriptedLLM({"researcher": [JUNK, JUNK]}, name="gemini")], events)
    with pytest.raises(LLMUnavailable) as info:
        await call_structured(router, _request(), QueryList)
    message = str(info.value)
    assert "openai:a: connection failed" in message and "openai: connection" not in message
    # the breaker opens on the second failure: the next call names the open circuit once
    router2 = _router([down, ExtractiveLLM()], events, breaker_states=router._breakers.states)
    await call_structured(router2, _request(), QueryList)
    await call_structured(router2, _request(), QueryList)
    whys = [str(p["why"]) for p in events.of("llm_fallback")]
    assert any(w.startswith("circuit open after connection failed") for w in whys), whys
    assert not any("openai" in w for w in whys), whys
    assert events.of("llm_breaker_open")


async def test_breakers_are_keyed_by_server_so_a_down_one_does_not_close_a_working_one() -> None:
    states: dict[str, Any] = {}
    down = ScriptedLLM(
        {"researcher": [ProviderError("openai", "connection failed", True)] * 2},
        name="openai",
        model="m",
    )
    first = _router(
        [down, ExtractiveLLM()],
        Events(),
        breaker_states=states,
        endpoints={"openai:m": "http://127.0.0.1:1/v1"},
    )
    await call_structured(first, _request(), QueryList)
    await call_structured(first, _request(), QueryList)
    assert states["openai:m@http://127.0.0.1:1/v1"].status == "open"
    working = ScriptedLLM(
        {"researcher": ['{"queries": ["widget sales"]}']}, name="openai", model="m"
    )
    second = _router(
        [working, ExtractiveLLM()],
        Events(),
        breaker_states=states,
        endpoints={"openai:m": "http://127.0.0.1:2/v1"},
    )
    _, replies = await call_structured(second, _request(), QueryList)
    assert replies[-1].provider == "openai"
