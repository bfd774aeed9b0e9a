"""Model-tier breakers across crew processes: two evaluator actors (two processes, each its own
breaker states) serve two runs through one crew ledger. The tier's 429s that one process gets
open its breaker there; the other process learns it from the ledger and skips the tier without
sending it a request."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from deepresearch.actors.ledger import CrewLedger
from deepresearch.actors.members import CrewEvaluator
from deepresearch.cluster import runtime
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.llm_messages import EvaluateTask
from deepresearch.per_run.run_context import RunContext
from deepresearch.providers.llm.registry import LLMKeys
from deepresearch.providers.testing.openai_server import ScriptedOpenAIServer, rate_limited

pytestmark = pytest.mark.usefixtures("ray_session")

TASK = EvaluateTask(
    query="solar output in 2024",
    agenda=("solar output in 2024",),
    summaries=("Solar output rose 12% in 2024.",),
    max_rounds=2,
)


async def test_a_tier_one_process_opened_is_skipped_by_another_process() -> None:
    settings = load_settings(
        None,
        overrides_from_flags(
            {
                "llm.provider": "openai",
                "llm.model": "gpt-x",
                "llm.fallback": "extractive",
                "llm.breaker.failure_threshold": 2,
            }
        ),
        env={},
    )
    ledger = runtime.spawn(CrewLedger, "ledger")
    first, second = (runtime.spawn(CrewEvaluator, "evaluator") for _ in range(2))
    try:
        async with ScriptedOpenAIServer(lambda _body: rate_limited("0")) as server:
            keys = LLMKeys(openai_api_key=SecretStr("sk-test"), openai_base_url=server.base_url)

            def context(run_id: str) -> RunContext:
                return RunContext(run_id, settings, None, None, keys=keys, ledger=ledger)

            _, replies = await first.evaluate.remote(context("a"), TASK)
            assert replies[-1].provider == "extractive"  # the tier's 429s opened its breaker
            asked = len(server.requests)
            assert asked == 2
            _, replies = await second.evaluate.remote(context("b"), TASK)
            assert replies[-1].provider == "extractive"
            assert len(server.requests) == asked  # the other process never sent it a request
    finally:
        for actor in (ledger, first, second):
            runtime.kill(actor)
