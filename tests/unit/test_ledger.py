"""The run-wide ledger: token buckets, request/token rate limits and the cost cap, on a fake clock."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock

from deepresearch.actors.ledger import Ledger
from deepresearch.config.settings import LLMRateLimit, ModelPrice
from deepresearch.errors import BudgetExceeded
from deepresearch.llm_messages import LLMReply
from deepresearch.policies.resilience.ratelimit import Bucket, reserve


def test_bucket_refills_and_queues() -> None:
    b = Bucket.full(60, 0.0)  # one per second
    for _ in range(60):
        b, wait = reserve(b, 1, 0.0)
        assert wait == 0
    b, wait = reserve(b, 1, 0.0)
    assert wait == pytest.approx(1.0)
    b, wait = reserve(b, 1, 0.0)
    assert wait == pytest.approx(2.0)  # the next caller queues behind the first
    b, wait = reserve(b, 1, 10.0)
    assert wait == 0


async def test_request_limit_is_shared_by_every_caller() -> None:
    clock = FakeClock()
    ledger = Ledger({"openai": LLMRateLimit(requests_per_minute=2)}, None, {}, clock, clock.sleep)
    for _ in range(4):
        await ledger.before_call("researcher", "openai", "m", 10)
    assert clock.slept == [pytest.approx(30.0), pytest.approx(30.0)]
    await ledger.before_call("researcher", "gemini", "m", 10)  # other providers are not limited
    assert len(clock.slept) == 2


async def test_token_limit() -> None:
    clock = FakeClock()
    ledger = Ledger({"openai": LLMRateLimit(tokens_per_minute=1000)}, None, {}, clock, clock.sleep)
    await ledger.before_call("writer", "openai", "m", 900)
    await ledger.before_call("writer", "openai", "m", 400)
    assert clock.slept == [pytest.approx(18.0)]  # 300 tokens short at 1000/min


async def test_cost_cap_refuses_priced_models_only() -> None:
    prices = {"gpt-x": ModelPrice(input_per_mtok=1000.0, output_per_mtok=1000.0)}
    ledger = Ledger({}, 1.0, prices)
    await ledger.before_call("planner", "openai", "gpt-x", 10)
    await ledger.after_call(
        "planner",
        LLMReply(text="{}", provider="openai", model="gpt-x", input_tokens=800, output_tokens=300),
    )
    assert (await ledger.totals())["spent_usd"] == pytest.approx(1.1)
    with pytest.raises(BudgetExceeded):
        await ledger.before_call("writer", "openai", "gpt-x", 10)
    await ledger.before_call("writer", "extractive", "extractive-v1", 10)  # free tier still runs


async def test_router_falls_to_the_free_tier_when_the_cap_is_spent() -> None:
    from deepresearch.llm_messages import QueriesTask, QueryList
    from deepresearch.policies.resilience.breaker import BreakerConfig
    from deepresearch.policies.resilience.retry import RetryPolicy
    from deepresearch.providers.llm.extractive import ExtractiveLLM
    from deepresearch.providers.llm.router import Router
    from deepresearch.providers.llm.structured import build_request

    class Paid:
        name, model = "openai", "gpt-x"
        calls = 0

        async def complete(self, request):  # type: ignore[no-untyped-def]
            Paid.calls += 1
            return LLMReply(
                text='{"queries": ["q"]}',
                provider="openai",
                model="gpt-x",
                input_tokens=2000,
                output_tokens=0,
            )

        def count_tokens(self, text: str) -> int:
            return len(text) // 4

    prices = {"gpt-x": ModelPrice(input_per_mtok=1000.0, output_per_mtok=0.0)}
    ledger = Ledger({}, 1.0, prices)
    router = Router(
        [Paid(), ExtractiveLLM()], BreakerConfig(3, 10, 1), RetryPolicy(1, 0, 0, 0), hook=ledger
    )
    request = build_request("researcher", QueriesTask(question="ACME sales?"), QueryList)
    assert (await router.complete(request)).provider == "openai"  # spends 2 USD: over the cap
    assert (await router.complete(request)).provider == "extractive"
    assert Paid.calls == 1
