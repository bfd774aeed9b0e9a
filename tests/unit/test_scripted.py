"""The scripted fake fails loudly on surprises and survives pickling."""

from __future__ import annotations

import pickle

import pytest

from deepresearch.llm_messages import LLMRequest, PlanTask, QueriesTask, QueryList
from deepresearch.providers.testing.scripted_llm import ScriptedLLM, ScriptedReply, scripted_json


def plan_req() -> LLMRequest:
    return LLMRequest(role="planner", task=PlanTask(query="q"))


def research_req() -> LLMRequest:
    return LLMRequest(role="researcher", task=QueriesTask(question="q"))


def echo(request: LLMRequest) -> str:
    return scripted_json(QueryList(queries=(request.task.kind,)))


async def test_answers_in_order_by_role_and_records_calls() -> None:
    llm = ScriptedLLM({"planner": ["p1", "p2"], "researcher": [echo]})
    assert (await llm.complete(plan_req())).text == "p1"
    assert (await llm.complete(research_req())).text == '{"queries":["queries"]}'
    reply = await llm.complete(plan_req())
    assert reply.text == "p2" and reply.output_tokens == len("p2") // 4
    assert reply.provider == "scripted" and reply.model == "scripted-1"
    assert not reply.estimated_tokens
    assert [c.role for c in llm.calls] == ["planner", "researcher", "planner"]
    assert len(llm.calls_for("planner")) == 2
    llm.assert_all_used()


async def test_unexpected_calls_fail() -> None:
    llm = ScriptedLLM({"planner": ["p1"]})
    with pytest.raises(AssertionError, match="no script for role 'writer'"):
        await llm.complete(LLMRequest(role="writer", task=PlanTask(query="q")))
    await llm.complete(plan_req())
    with pytest.raises(AssertionError, match="planner call #2"):
        await llm.complete(plan_req())


async def test_non_strict_repeats_last_entry() -> None:
    llm = ScriptedLLM({"planner": ["only"]}, strict=False)
    assert (await llm.complete(plan_req())).text == "only"
    assert (await llm.complete(plan_req())).text == "only"


async def test_unused_replies_fail() -> None:
    llm = ScriptedLLM({"planner": ["p1", "p2"], "writer": ["w"]})
    await llm.complete(plan_req())
    with pytest.raises(AssertionError, match=r"planner: 1, writer: 1"):
        llm.assert_all_used()


async def test_exception_entries_and_fixed_usage() -> None:
    llm = ScriptedLLM({"planner": [TimeoutError("slow"), ScriptedReply("ok", 7, 3)]})
    with pytest.raises(TimeoutError):
        await llm.complete(plan_req())
    reply = await llm.complete(plan_req())
    assert (reply.input_tokens, reply.output_tokens) == (7, 3)


async def test_single_callable_script() -> None:
    llm = ScriptedLLM(echo)
    assert (await llm.complete(plan_req())).text == '{"queries":["plan"]}'
    llm.assert_all_used()


async def test_pickle_round_trip_keeps_state() -> None:
    llm = ScriptedLLM({"planner": ["p1", "p2"], "researcher": [echo]}, name="fake")
    await llm.complete(plan_req())
    clone = pickle.loads(pickle.dumps(llm))
    assert clone.name == "fake" and len(clone.calls) == 1
    assert (await clone.complete(plan_req())).text == "p2"
    assert (await clone.complete(research_req())).text == '{"queries":["queries"]}'
    clone.assert_all_used()
    with pytest.raises(AssertionError):
        llm.assert_all_used()  # the original is independent of the clone
