"""A model call still in flight says so (``llm_waiting``), and the progress line shows it.

A small local model took up to two minutes per reply (issue 38): the line stood at "tokens 0"
meanwhile, as if the run had hung. The router now tells the run every ``heartbeat_s`` which role
waits on which tier, and for how long; the line shows it until the run moves on."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import JsonValue

from deepresearch.commands.console import details
from deepresearch.llm_messages import LLMReply, LLMRequest, QueriesTask, QueryList
from deepresearch.policies.lifecycle.progress import ProgressState, advance
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.llm.router import Router
from deepresearch.providers.llm.structured import build_request
from deepresearch.schemas import Event

BREAKER = BreakerConfig(failure_threshold=2, reset_timeout_s=30.0, half_open_max_calls=1)
RETRY = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0, retry_after_cap_s=0.0)


class SlowModel:
    """Answers only when the test lets it, like a model that takes minutes to reply."""

    name = "openai"
    model = "slow"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.cancelled = False
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.calls += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return LLMReply(
            text='{"queries": ["widget sales 2024"]}',
            provider=self.name,
            model=self.model,
            input_tokens=10,
            output_tokens=5,
        )

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


class Heard:
    """The router's notify: records events, and wakes a waiter on the first ``llm_waiting``."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, JsonValue]]] = []
        self.waiting = asyncio.Event()

    async def __call__(self, kind: str, payload: dict[str, JsonValue]) -> None:
        self.seen.append((kind, payload))
        if kind == "llm_waiting":
            self.waiting.set()


def _router(tiers: list[Any], heard: Heard) -> Router:
    return Router(tiers, BREAKER, RETRY, notify=heard, heartbeat_s=0.01)


def _request() -> LLMRequest:
    return build_request("researcher", QueriesTask(question="widget sales 2024"), QueryList)


async def test_a_call_in_flight_says_who_waits_on_what() -> None:
    slow, heard = SlowModel(), Heard()
    call = asyncio.ensure_future(_router([slow], heard).complete(_request()))
    await heard.waiting.wait()
    slow.release.set()
    reply = await call
    assert reply.text.startswith('{"queries"')
    waits = [p for k, p in heard.seen if k == "llm_waiting"]
    assert waits and waits[0]["role"] == "researcher" and waits[0]["tier"] == "openai:slow"
    assert all(isinstance(p["elapsed_s"], int) for p in waits)


async def test_a_quick_answer_says_nothing_and_a_cancelled_call_stops_the_model() -> None:
    heard = Heard()
    await _router([ExtractiveLLM()], heard).complete(_request())
    assert not [k for k, _ in heard.seen if k == "llm_waiting"]

    slow = SlowModel()
    call = asyncio.ensure_future(_router([slow], heard).complete(_request()))
    await heard.waiting.wait()
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert slow.cancelled  # the model's call does not outlive the run that gave up on it


def _event(kind: str, **payload: Any) -> Event:
    return Event(seq=1, run_id="r", ts=0.0, type=kind, payload=payload)


def test_the_progress_line_shows_the_wait_until_the_run_moves_on() -> None:
    state = advance(ProgressState(), _event("run_started"))
    state = advance(state, _event("llm_waiting", role="researcher", tier="openai:m", elapsed_s=40))
    assert details(state).endswith("· researcher on openai:m 40 s")
    state = advance(state, _event("researcher_progress", subtask="t1", phase="reading"))
    assert "waiting" not in details(state) and " on openai:m" not in details(state)
