"""Live smoke tests against the real providers: skipped unless their keys are in the environment.

Run by hand (they cost a few tokens): ``OPENAI_API_KEY=... pytest tests/live``. ``OPENAI_BASE_URL``
points the OpenAI test at any compatible server; ``LIVE_OPENAI_MODEL``/``LIVE_GEMINI_MODEL``
choose the model.
"""

from __future__ import annotations

import os

import httpx
import pytest

from deepresearch.llm_messages import QueriesTask, QueryList
from deepresearch.providers.llm.registry import build_llm
from deepresearch.providers.llm.structured import build_request, call_structured

QUESTION = "How did Apple's gross margin change in 2023?"


async def _smoke(name: str, model: str) -> None:
    async with httpx.AsyncClient(timeout=60.0) as http:
        llm = build_llm(name, model, keys=os.environ, http_client=http, timeout_s=60.0)
        request = build_request("researcher", QueriesTask(question=QUESTION), QueryList)
        result, replies = await call_structured(llm, request, QueryList)
    assert result.queries
    assert replies[-1].provider == name
    assert replies[-1].input_tokens > 0


@pytest.mark.skipif(
    not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")),
    reason="set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) to run",
)
async def test_live_openai_structured_call() -> None:
    await _smoke("openai", os.environ.get("LIVE_OPENAI_MODEL", "gpt-4.1-mini"))


@pytest.mark.skipif(
    not (os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")),
    reason="set GEMINI_API_KEY or GOOGLE_API_KEY to run",
)
async def test_live_gemini_structured_call() -> None:
    await _smoke("gemini", os.environ.get("LIVE_GEMINI_MODEL", "gemini-2.5-flash"))
