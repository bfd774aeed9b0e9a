"""Interrupt a deterministic deep run after every event k, resume from the last checkpoint, and
compare the report body with the uninterrupted run's, byte for byte."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest
from test_actors_inprocess import PAGES, EvaluatorScript, FakeFetcher, FakeGateway, settings

from deepresearch.actors.coordinator import Coordinator
from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.actors.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.report import render_body
from deepresearch.schemas import Request, SearchHit, SearchResult

QUERY = "Widget sales, gadget output and plant count in 2024"


class StopAfter:
    """An EventSink that records everything and trips a flag after ``k`` events."""

    def __init__(self, k: int | None) -> None:
        self.k = k
        self.events: list[str] = []
        self.payloads: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.files: dict[str, str] = {}
        self.tripped = asyncio.Event()

    async def emit(self, type: str, payload: dict[str, Any] | None = None) -> None:
        self.events.append(type)
        self.payloads.append(dict(payload or {}))
        if self.k is not None and len(self.events) >= self.k:
            self.tripped.set()

    async def checkpoint(self, data: dict[str, Any]) -> None:
        self.checkpoints.append(json.loads(json.dumps(data)))  # what the file would hold

    async def write_text(self, name: str, text: str) -> None:
        self.files[name] = text


class QueryGateway(FakeGateway):
    """Different queries find different pages (deterministically), so a run whose queries
    depended on completion order or on what was injected would produce a different report."""

    async def search(self, query: str, limit: int) -> SearchResult:
        self.queries.append(query)
        urls = sorted(PAGES, key=lambda u: hashlib.sha256(f"{query}|{u}".encode()).hexdigest())
        hits = tuple(
            SearchHit(url=u, title=u[-3:], provider="fake", rank=i + 1)
            for i, u in enumerate(urls[:3])
        )
        return SearchResult(query=query, hits=hits, provider="fake")


def make_llm() -> ExtractiveLLM:
    from deepresearch.schemas import Evaluation

    first = Evaluation(action="delegate", reason="gap", new_subtasks=("Plant count per region?",))
    return EvaluatorScript([first.model_dump_json()] + ['{"action": "synthesize"}'] * 5)


def coordinator(sink: StopAfter, resume: dict[str, Any] | None, llm: Any) -> Coordinator:
    s = settings(**{"deep.max_parallel": 2})
    spawner = LocalSpawner(s, QueryGateway(), UrlPool(), sink, llm, [FakeFetcher()])
    request = Request(run_id="r1", query=QUERY, mode="deep")
    return Coordinator(s, request, sink, llm, spawner, Evaluator(llm), resume)


async def full_run() -> tuple[str, int]:
    sink = StopAfter(None)
    result = await coordinator(sink, None, make_llm()).run()
    return render_body(result.report), len(sink.events)


async def interrupted_then_resumed(k: int) -> tuple[str, set[str]]:
    llm = make_llm()  # one model across both sessions: the evaluator script continues
    sink = StopAfter(k)
    task = asyncio.create_task(coordinator(sink, None, llm).run())
    waiter = asyncio.create_task(sink.tripped.wait())
    done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:  # finished before event k: nothing to resume
        waiter.cancel()
        return render_body(task.result().report), set()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    checkpoint = sink.checkpoints[-1] if sink.checkpoints else None
    again = StopAfter(None)
    result = await coordinator(again, checkpoint, llm).run()
    completed = {r["subtask_id"] for r in (checkpoint or {}).get("completed", [])}
    started = {
        p["subtask"]
        for t, p in zip(again.events, again.payloads, strict=True)
        if t == "researcher_started"
    }
    return render_body(result.report), started & completed


async def test_resume_after_every_event_gives_the_same_report() -> None:
    expected, n_events = await full_run()
    assert n_events > 20
    for k in range(1, n_events + 1):
        body, redone = await interrupted_then_resumed(k)
        assert body == expected, f"report differs after interrupting at event {k}"
        assert redone == set(), f"completed sub-tasks {redone} were redone (event {k})"


@pytest.mark.parametrize("k", [1, 5])
async def test_resume_with_no_checkpoint_starts_over(k: int) -> None:
    expected, _ = await full_run()
    body, _ = await interrupted_then_resumed(k)
    assert body == expected
