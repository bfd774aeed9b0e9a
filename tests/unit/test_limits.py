"""--max-time and --max-cost end a run honestly: synthesis from what exists, a line in the report
saying which limit ended it, and ``limited_by`` in the result."""

from __future__ import annotations

import asyncio

from test_actors_inprocess import ExtractiveLLM, FakeGateway, coordinator

from deepresearch.schemas import SearchResult

QUESTION = "What were widget sales, gadget output and plant count in 2024?"


class Priced(ExtractiveLLM):
    """Every call bills a million input tokens of ``gpt-x``, so its price per Mtok is the cost
    of one call. Named apart from ``extractive``, whose steps the usage counts as model-free."""

    def __init__(self) -> None:
        super().__init__(name="priced")

    async def complete(self, request):  # type: ignore[no-untyped-def]
        reply = await super().complete(request)
        return reply.model_copy(update={"model": "gpt-x", "input_tokens": 1_000_000})


def cost_capped(per_call_usd: float) -> dict[str, object]:
    """Flags of a deep run, one researcher at a time, capped at $0.5 with calls at this price."""
    return {
        "llm.max_cost_usd": 0.5,
        "llm.prices": {"gpt-x": {"input_per_mtok": per_call_usd, "output_per_mtok": 0.0}},
        "deep.max_parallel": 1,
    }


class SlowGateway(FakeGateway):
    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def search(self, query: str, limit: int) -> SearchResult:
        await asyncio.sleep(self.delay)
        return await super().search(query, limit)


async def test_max_time_synthesizes_what_exists() -> None:
    coord, sink, _, spawner = coordinator(
        "deep",
        ExtractiveLLM(),
        QUESTION,
        **{"run.max_time_s": 1.5, "deep.max_parallel": 1},  # mid second researcher
    )
    slow = SlowGateway(0.3)
    spawner._args = (spawner._args[0], slow, *spawner._args[2:])  # type: ignore[attr-defined]
    result = await coord.run()
    assert result.limited_by == "time"
    assert "researchers_cancelled" in sink.types()
    assert any("time limit" in line for line in result.report.limits)


async def test_max_cost_stops_after_the_cap() -> None:
    # $0.2 a call: the planner stays under the cap, the first researcher reaches it
    coord, sink, _, _ = coordinator("deep", Priced(), QUESTION, **cost_capped(0.2))
    result = await coord.run()
    assert result.limited_by == "cost" and result.status == "completed"
    assert len([t for t in sink.types() if t == "researcher_started"]) < 3
    assert any("cost limit" in line for line in result.report.limits)


async def test_a_cap_the_planner_alone_reaches_stops_before_any_research() -> None:
    """The spend is checked whenever it grows, not only when a researcher finishes: research
    that the cap no longer allows does not start its paid calls."""

    coord, sink, _, _ = coordinator("deep", Priced(), QUESTION, **cost_capped(1.0))
    result = await coord.run()
    assert result.status == "no_answer" and result.limited_by == "cost"
    assert "researcher_finished" not in sink.types()
    assert "cost limit was reached before any researcher finished" in result.report.answer


async def test_researchers_cancelled_is_said_once_per_researcher() -> None:
    """The cap is reached in the step that starts the next researcher, so it is cancelled
    before it ever runs; it stayed listed as running and the run's end cancelled it again."""

    coord, sink, _, _ = coordinator("deep", Priced(), QUESTION, **cost_capped(0.2))
    result = await coord.run()
    assert result.limited_by == "cost"
    cancelled = [p for t, p in sink.events if t == "researchers_cancelled"]
    assert cancelled == [{"count": 1, "reason": "cost limit reached"}]
