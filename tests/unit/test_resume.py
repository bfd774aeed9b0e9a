"""Interrupt a deterministic deep run after every event k, resume from the last checkpoint (and
from what the unfinished sub-tasks had searched and read), and compare the report body with the
uninterrupted run's, byte for byte."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest
from list_sink import ListSink
from test_actors_inprocess import PAGES, EvaluatorScript, FakeFetcher, FakeGateway, settings

from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.lifecycle.prior_work import resume_work
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.reports.markdown import render_body
from deepresearch.schemas import PriorWork, Request, SearchHit, SearchResult

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


def coordinator(
    sink: StopAfter,
    resume: dict[str, Any] | None,
    llm: Any,
    pool: UrlPool | None = None,
    prior: dict[str, PriorWork] | None = None,
) -> Coordinator:
    s = settings(**{"deep.max_parallel": 2})
    spawner = LocalSpawner(s, QueryGateway(), pool or UrlPool(), sink, llm, [FakeFetcher()])
    request = Request(run_id="r1", query=QUERY, mode="deep")
    return Coordinator(s, request, sink, llm, spawner, Evaluator(llm), resume, None, prior)


async def full_run() -> tuple[str, int]:
    sink = StopAfter(None)
    result = await coordinator(sink, None, make_llm()).run()
    return render_body(result.report), len(sink.events)


async def interrupted_then_resumed(k: int) -> tuple[str, set[str], int, dict[str, Any]]:
    """The resumed report, the completed sub-tasks it redid, the searches it reused from the
    interrupted session's records, and the ``run_resumed`` payload with the sources the
    checkpoint kept (``kept_sources``)."""
    llm = make_llm()  # one model across both sessions: the evaluator script continues
    sink, kept = StopAfter(k), ListSink()  # kept: the docs.jsonl and searches.jsonl records
    task = asyncio.create_task(coordinator(sink, None, llm, UrlPool(docs=kept)).run())
    waiter = asyncio.create_task(sink.tripped.wait())
    done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:  # finished before event k: nothing to resume
        waiter.cancel()
        return render_body(task.result().report), set(), 0, {}
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    checkpoint = sink.checkpoints[-1] if sink.checkpoints else None
    completed = {r["subtask_id"] for r in (checkpoint or {}).get("completed", [])}
    work = resume_work(kept.docs, kept.searches, completed, 200_000)
    again = StopAfter(None)
    resumed = coordinator(again, checkpoint, llm, UrlPool(work.docs), dict(work.prior))
    result = await resumed.run()
    started = {
        p["subtask"]
        for t, p in zip(again.events, again.payloads, strict=True)
        if t == "researcher_started"
    }
    reused = again.events.count("search_reused")
    said = again.payloads[again.events.index("run_resumed")] if checkpoint else {}
    kept_sources = sum(len(r["sources"]) for r in (checkpoint or {}).get("completed", []))
    return render_body(result.report), started & completed, reused, {**said, "kept": kept_sources}


async def test_resume_after_every_event_gives_the_same_report() -> None:
    expected, n_events = await full_run()
    assert n_events > 20
    reused = counted = 0
    for k in range(1, n_events + 1):
        body, redone, n, said = await interrupted_then_resumed(k)
        assert body == expected, f"report differs after interrupting at event {k}"
        assert redone == set(), f"completed sub-tasks {redone} were redone (event {k})"
        reused += n
        assert said.get("sources", 0) == said.get("kept", 0), f"sources said at event {k}"
        counted += said.get("sources", 0)
    assert counted > 0  # some interruptions kept sources, and the resumed stream said so
    assert reused > n_events  # most interruptions left several searches to reuse


@pytest.mark.parametrize("k", [1, 5])
async def test_resume_with_no_checkpoint_starts_over(k: int) -> None:
    expected, _ = await full_run()
    body, _, _, _ = await interrupted_then_resumed(k)
    assert body == expected
