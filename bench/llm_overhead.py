"""Overhead per LLM call of our stack (structured helper + router + provider) vs the raw client.

Both sides talk to the same loopback OpenAI-compatible server (``providers/testing/openai_server.py``)
with the same reply, sequentially, interleaved in rounds so machine noise hits both alike. The raw
side is ``AsyncOpenAI.chat.completions.create`` + ``model_validate_json``; ours is
``call_structured(router, build_request(...))``. Prints per-call times and their ratio.

    python bench/llm_overhead.py [--calls 200] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx
from openai import AsyncOpenAI
from printout import show
from pydantic import SecretStr

from deepresearch.llm_messages import QueriesTask, QueryList
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.openai_compat import OpenAICompatLLM
from deepresearch.providers.llm.router import Router
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.providers.testing.openai_server import ScriptedOpenAIServer, Step

REPLY = json.dumps({"queries": ["apple net sales q3 2023", "apple revenue quarter july 2023"]})


def answer(body: dict[str, object]) -> Step:
    return Step(text=REPLY, input_tokens=500, output_tokens=30)


async def measure(calls: int, rounds: int) -> dict[str, float]:
    task = QueriesTask(
        question="What was Apple's total net sales for the quarter ended July 1, 2023?"
    )
    request = build_request("researcher", task, QueryList)
    messages = [{"role": m.role, "content": m.content} for m in request.messages]
    async with ScriptedOpenAIServer(answer) as server, httpx.AsyncClient() as client:
        raw = AsyncOpenAI(
            api_key="sk-bench", base_url=server.base_url, http_client=client, max_retries=0
        )
        provider = OpenAICompatLLM(SecretStr("sk-bench"), server.base_url, "bench-model", client)
        router = Router([provider], BreakerConfig(5, 30, 1), RetryPolicy(2, 0.1, 1, 5))

        async def raw_call() -> None:
            completion = await raw.chat.completions.create(
                model="bench-model",
                messages=messages,  # type: ignore[arg-type]
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": request.output_name, "schema": request.output_schema},
                },
            )
            QueryList.model_validate_json(completion.choices[0].message.content or "")

        async def our_call() -> None:
            await call_structured(router, request, QueryList)

        for fn in (raw_call, our_call):  # warm-up: connections, schema caches
            for _ in range(10):
                await fn()
        raw_times, our_times = [], []
        for _ in range(rounds):
            for fn, sink in ((raw_call, raw_times), (our_call, our_times)):
                start = time.perf_counter()
                for _ in range(calls):
                    await fn()
                sink.append((time.perf_counter() - start) / calls)
    raw_ms = statistics.median(raw_times) * 1000
    our_ms = statistics.median(our_times) * 1000
    return {
        "raw_ms_per_call": round(raw_ms, 3),
        "ours_ms_per_call": round(our_ms, 3),
        "overhead_ms_per_call": round(our_ms - raw_ms, 3),
        "ratio": round(our_ms / raw_ms, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.calls, args.rounds))
    show(result, args.json)


if __name__ == "__main__":
    main()
