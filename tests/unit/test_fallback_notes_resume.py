"""The report's note of each role that fell back survives an interruption: the planner's is in
the checkpoint, each researcher's in its finished report. Built on ``test_resume``'s
interrupt-after-event-k machinery, with a router whose first tier is down."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from list_sink import ListSink
from test_resume import StopAfter, coordinator, make_llm

from deepresearch.errors import ProviderError
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.lifecycle.prior_work import resume_work
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.router import Router

BREAKER = BreakerConfig(failure_threshold=100, reset_timeout_s=30.0, half_open_max_calls=1)
RETRY = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0, retry_after_cap_s=0.0)
ROLES = ("planner", "researcher", "evaluator", "writer")


class Down:
    """A model server that cannot be reached."""

    name = "openai"
    model = "down-1"

    async def complete(self, request: LLMRequest) -> LLMReply:
        raise ProviderError(self.name, "connection failed (ConnectError)", False)

    def count_tokens(self, text: str) -> int:
        return len(text) // 4


async def _no_sleep(_: float) -> None:
    return None


def router() -> Router:
    return Router([Down(), make_llm()], BREAKER, RETRY, sleep=_no_sleep)


def fallback_notes(notes: tuple[str, ...]) -> list[str]:
    return [n for n in notes if " fell back from openai:down-1 to " in n]


async def resumed_notes(k: int) -> tuple[list[str], bool]:
    """The fallback notes of the report a run interrupted after event ``k`` ends with, and
    whether it was interrupted (not finished first)."""
    llm = router()
    sink, kept = StopAfter(k), ListSink()
    task = asyncio.create_task(coordinator(sink, None, llm, UrlPool(docs=kept)).run())
    waiter = asyncio.create_task(sink.tripped.wait())
    done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        waiter.cancel()
        return fallback_notes(task.result().report.notes), False
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    checkpoint: dict[str, Any] | None = sink.checkpoints[-1] if sink.checkpoints else None
    completed = {r["subtask_id"] for r in (checkpoint or {}).get("completed", [])}
    work = resume_work(kept.docs, kept.searches, completed, 200_000)
    again = coordinator(StopAfter(None), checkpoint, router(), UrlPool(work.docs), dict(work.prior))
    result = await again.run()
    return fallback_notes(result.report.notes), True


async def test_every_role_that_fell_back_has_one_note() -> None:
    result = await coordinator(StopAfter(None), None, router()).run()
    notes = fallback_notes(result.report.notes)
    assert [n.split(" fell back", 1)[0] for n in notes] == [f"The {r}" for r in ROLES]
    assert all(n.endswith("connection failed (ConnectError).") for n in notes), notes


@pytest.mark.parametrize("k", [4, 8, 12, 16])
async def test_fallback_notes_survive_a_resume(k: int) -> None:
    """Interrupted after the plan (and after some researchers finished): the resumed session
    never calls the planner again, yet its report says the planner fell back."""
    expected = fallback_notes(
        (await coordinator(StopAfter(None), None, router()).run()).report.notes
    )
    notes, interrupted = await resumed_notes(k)
    assert interrupted and len(expected) == len(ROLES)
    assert notes == expected
