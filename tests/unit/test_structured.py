"""Structured calls: cleaning, repair, one retry with the error, typed failure, evaluator rule."""

from __future__ import annotations

import pytest

from deepresearch.errors import StructuredOutputError
from deepresearch.llm_messages import (
    EvaluateTask,
    FindingsDraft,
    PlanDraft,
    PlanTask,
    QueriesTask,
    QueryList,
)
from deepresearch.providers.llm.structured import (
    EVALUATOR_FALLBACK_REASON,
    build_request,
    call_structured,
    clean_reply,
    evaluation_or_synthesize,
    parse_structured,
)
from deepresearch.providers.testing.scripted_llm import ScriptedLLM, ScriptedReply, scripted_json
from deepresearch.schemas import Evaluation

VALID = '{"queries": ["a", "b"]}'


def qrequest():  # type: ignore[no-untyped-def]
    return build_request("researcher", QueriesTask(question="What is X?"), QueryList)


def test_build_request_fills_schema_and_messages() -> None:
    req = qrequest()
    assert req.output_name == "QueryList"
    assert req.output_schema == QueryList.model_json_schema()
    assert [m.role for m in req.messages] == ["system", "user"]
    assert "What is X?" in req.messages[1].content
    assert '"queries"' in req.messages[0].content  # the schema is spelled out


@pytest.mark.parametrize(
    "text",
    [
        VALID,
        f"<think>let me think {{not json}}</think>\n{VALID}",
        f"<think>reasoning without an end\n{VALID}",
        f"```json\n{VALID}\n```",
        f"<think>x</think>Here you go:\n```\n{VALID}\n```\nThanks!",
        f"Sure! {VALID} Hope this helps.",
        f"reasoning only</think>{VALID}",
    ],
)
def test_clean_and_parse(text: str) -> None:
    assert parse_structured(text, QueryList) == QueryList(queries=("a", "b"))


def test_clean_reply_strips_think_block() -> None:
    assert clean_reply('<think>{}</think> {"x": 1}') == '{"x": 1}'


@pytest.mark.parametrize(
    "text", ['{"queries": ["a", "b",],}', "{'queries': ['a', 'b']}", '{"queries": ["a", "b"]']
)
def test_repair_path(text: str) -> None:
    assert parse_structured(text, QueryList).queries == ("a", "b")


async def test_valid_first_reply_makes_one_call() -> None:
    llm = ScriptedLLM({"researcher": [VALID]})
    out, replies = await call_structured(llm, qrequest(), QueryList)
    assert out.queries == ("a", "b") and len(replies) == 1 and len(llm.calls) == 1
    llm.assert_all_used()


async def test_retry_with_error_then_valid() -> None:
    llm = ScriptedLLM({"researcher": ["I cannot answer that.", ScriptedReply(VALID, 10, 5)]})
    out, replies = await call_structured(llm, qrequest(), QueryList)
    assert out.queries == ("a", "b")
    assert len(replies) == 2 and replies[1].input_tokens == 10 and replies[1].output_tokens == 5
    second = llm.calls[1]
    assert len(second.messages) == len(llm.calls[0].messages) + 2
    last = second.messages[-1]
    assert last.role == "user"
    assert last.content.startswith("Your previous reply did not match the schema: ")
    assert last.content.endswith("Reply with JSON only.")
    assert second.messages[-2].content == "I cannot answer that."
    llm.assert_all_used()


async def test_wrong_shape_error_names_the_field() -> None:
    llm = ScriptedLLM({"researcher": ['{"query": ["a"]}', VALID]})
    await call_structured(llm, qrequest(), QueryList)
    assert "queries" in llm.calls[1].messages[-1].content


async def test_final_failure_raises_typed_error() -> None:
    llm = ScriptedLLM({"planner": ["nope", "still nope " * 40]})
    req = build_request("planner", PlanTask(query="q"), PlanDraft)
    with pytest.raises(StructuredOutputError) as err:
        await call_structured(llm, req, PlanDraft)
    assert err.value.role == "planner"
    assert err.value.excerpt == ("still nope " * 40)[:200]
    assert err.value.reason


async def test_provider_errors_propagate() -> None:
    llm = ScriptedLLM({"researcher": [RuntimeError("boom")]})
    with pytest.raises(RuntimeError, match="boom"):
        await call_structured(llm, qrequest(), QueryList)


async def test_evaluator_non_json_counts_as_synthesize() -> None:
    req = build_request(
        "evaluator",
        EvaluateTask(query="q", agenda=("a",), summaries=("s",), max_rounds=3),
        Evaluation,
    )
    llm = ScriptedLLM({"evaluator": ["delegate please", "I said delegate"]})
    ev, replies = await evaluation_or_synthesize(llm, req)
    assert ev == Evaluation(action="synthesize", reason=EVALUATOR_FALLBACK_REASON)
    assert len(replies) == 2
    good = Evaluation(action="delegate", reason="gap", new_subtasks=("x",))
    llm2 = ScriptedLLM({"evaluator": [scripted_json(good)]})
    assert (await evaluation_or_synthesize(llm2, req))[0] == good


FINDINGS = '{"summary": "s", "findings": [{"text": "t", "sources": [1]}]}'


@pytest.mark.parametrize(
    "text",
    [
        # prose, a quoted code block, then the JSON
        f"The document shows:\n```\nprint('x')\n```\n{VALID}",
        # a first object that is not the answer (the schema echoed), then the answer
        '{"title": "QueryList", "type": "object"} ' + VALID,
        # two fences: the first holds code, the second the reply
        f"```\nx = 1\n```\nand\n```json\n{VALID}\n```",
    ],
)
def test_fence_or_object_that_is_not_the_reply_is_skipped(text: str) -> None:
    assert parse_structured(text, QueryList) == QueryList(queries=("a", "b"))


def test_braces_inside_strings_do_not_split_the_object() -> None:
    text = 'Here: {"queries": ["a } b", "c { d"]} done'
    assert clean_reply(text) == '{"queries": ["a } b", "c { d"]}'
    assert parse_structured(FINDINGS, FindingsDraft).findings[0].sources == (1,)


def test_code_quoted_inside_a_string_is_not_taken_as_the_reply() -> None:
    text = '{"summary": "it runs ```python\\nx = {1: 2}\\n``` daily", "findings": []}'
    assert parse_structured(text, FindingsDraft).summary.startswith("it runs ```python")
