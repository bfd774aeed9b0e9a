"""Researcher and Coordinator driven in-process with fakes: phases, dedup, context gate, isolation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import pytest
from list_sink import ListSink

from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.actors.researcher import Researcher
from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.errors import FetchError, SearchUnavailable
from deepresearch.llm_messages import DraftFinding, FindingsDraft, LLMReply, QueryList
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.run.driver import finished_event
from deepresearch.schemas import (
    Evaluation,
    FetchedDoc,
    Request,
    ResearcherReport,
    SearchHit,
    SearchResult,
    SubTask,
)

PAGES = {
    f"https://example.org/p{i}": f"Widget sales reached {100 + i} million units in 2024 at plant {i}. "
    f"Plant {i} also makes gadgets." * 3
    for i in range(1, 13)
}


class FakeGateway:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.queries: list[str] = []

    async def search(self, query: str, limit: int) -> SearchResult:
        self.queries.append(query)
        if self.fail:
            raise SearchUnavailable(("fake",), "down")
        hits = tuple(
            SearchHit(url=url, title=url[-2:], provider="fake", rank=i + 1)
            for i, url in enumerate(list(PAGES)[:limit])
        )
        return SearchResult(query=query, hits=hits, provider="fake")


class FakeFetcher:
    def __init__(self, broken: Sequence[str] = ()) -> None:
        self.fetched: list[str] = []
        self.broken = set(broken)

    def handles(self, url: str) -> bool:
        return url.startswith("https://")

    async def fetch(self, url: str) -> FetchedDoc:
        self.fetched.append(url)
        if url in self.broken:
            raise FetchError(url, "HTTP 500")
        return FetchedDoc(url=url, title=url[-2:], location=url, text=PAGES[url], provider="fake")


def settings(**flags: object) -> Settings:
    return load_settings(None, overrides_from_flags({"search.hits_per_query": 12, **flags}), env={})


def researcher(
    s: Settings,
    llm: object,
    gateway: FakeGateway,
    pool: UrlPool,
    fetcher: FakeFetcher,
    sink: ListSink,
    tid: str = "t1",
) -> Callable[[], Awaitable[ResearcherReport]]:
    r = Researcher(s, gateway, pool, sink, llm, [fetcher])  # type: ignore[arg-type]
    return lambda: r.run(SubTask(id=tid, question="How many widget units were sold in 2024?"))


async def test_researcher_phases_and_batches() -> None:
    sink, pool, fetcher = ListSink(), UrlPool(), FakeFetcher(broken=["https://example.org/p2"])
    report = await researcher(settings(), ExtractiveLLM(), FakeGateway(), pool, fetcher, sink)()
    assert report.status == "ok" and report.findings
    assert len(fetcher.fetched) == 8  # batches 3, 2, 3 = max_sources 8
    assert "fetch_failed" in sink.types()
    read = {p["url"] for t, p in sink.events if t == "source_read"}
    assert "https://example.org/p2" not in read
    assert {s.url for s in report.sources} <= read
    assert all(c in read for f in report.findings for c in f.citations)
    phases = [p["phase"] for t, p in sink.events if t == "researcher_progress"]
    assert phases[0] == "gathering" and phases[-1] == "reporting" and "scraping" in phases


async def test_context_gate_stops_scraping() -> None:
    sink, fetcher = ListSink(), FakeFetcher()
    s = settings(**{"llm.context_window": 1000, "llm.context_share": 0.5})
    report = await researcher(s, ExtractiveLLM(), FakeGateway(), UrlPool(), fetcher, sink)()
    assert "context_gate" in sink.types()
    assert len(fetcher.fetched) < 8
    assert report.status == "ok"


async def test_an_8k_window_cuts_the_first_batch_instead_of_reading_nothing() -> None:
    """0.55 x 8192 = 4,505 tokens: three page-sized sources (4,500) and the question no longer
    fit, which used to stop the researcher before it read anything."""
    sink, fetcher = ListSink(), FakeFetcher()
    s = settings(**{"llm.context_window": 8192, "llm.context_share": 0.55})
    report = await researcher(s, ExtractiveLLM(), FakeGateway(), UrlPool(), fetcher, sink)()
    gates = [p for t, p in sink.events if t == "context_gate"]
    assert gates[0]["took"] == 2 and gates[0]["limit"] == 4505
    assert len(fetcher.fetched) == 2
    assert report.status == "ok" and report.sources


class Windowed(ExtractiveLLM):
    context_window = 1000  # what a server said; smaller than llm.context_window


async def test_a_window_the_server_reported_sizes_the_batches() -> None:
    sink, fetcher = ListSink(), FakeFetcher()
    await researcher(settings(), Windowed(), FakeGateway(), UrlPool(), fetcher, sink)()
    gates = [p for t, p in sink.events if t == "context_gate"]
    assert gates and gates[0]["limit"] == 550 and gates[0]["took"] == 1
    assert len(fetcher.fetched) == 1


async def test_siblings_share_the_pool_and_never_fetch_twice() -> None:
    pool, fetcher, sink = UrlPool(), FakeFetcher(), ListSink()
    first = researcher(settings(), ExtractiveLLM(), FakeGateway(), pool, fetcher, sink, "t1")
    second = researcher(settings(), ExtractiveLLM(), FakeGateway(), pool, fetcher, sink, "t2")
    await first()
    await second()
    assert len(fetcher.fetched) == len(set(fetcher.fetched)) == 8
    assert "source_reused" in sink.types()
    handshakes = [p for t, p in sink.events if t == "handshake"]
    assert handshakes[1]["taken_by_siblings"] == 8


async def test_search_outage_degrades_instead_of_crashing() -> None:
    sink = ListSink()
    report = await researcher(
        settings(), ExtractiveLLM(), FakeGateway(fail=True), UrlPool(), FakeFetcher(), sink
    )()
    assert report.search_degraded and not report.findings
    assert "search_unavailable" in sink.types()


async def test_invented_source_numbers_are_dropped() -> None:
    draft = FindingsDraft(
        summary="s",
        findings=(
            DraftFinding(text="Widget sales reached 101 million units in 2024.", sources=(1, 99)),
            DraftFinding(text="Made up.", sources=(77,)),
        ),
    )
    llm = ScriptedLLM(
        {"researcher": [QueryList(queries=("widgets",)).model_dump_json(), draft.model_dump_json()]}
    )
    sink = ListSink()
    report = await researcher(settings(), llm, FakeGateway(), UrlPool(), FakeFetcher(), sink)()
    assert [f.text for f in report.findings] == ["Widget sales reached 101 million units in 2024."]
    assert report.findings[0].citations == ("https://example.org/p1",)
    assert ("citations_dropped", {"subtask": "t1", "count": 2}) in sink.events
    llm.assert_all_used()


class ExplodingLLM(ExtractiveLLM):
    """Fails the researcher whose question mentions 'explode'."""

    async def complete(self, request):  # type: ignore[no-untyped-def]
        if "explode" in getattr(request.task, "question", ""):
            raise RuntimeError("boom")
        return await super().complete(request)


def coordinator(
    mode: str, llm: object, query: str, **flags: object
) -> tuple[Coordinator, ListSink, FakeFetcher, LocalSpawner]:
    s = settings(**flags)
    sink, fetcher, pool, gw = ListSink(), FakeFetcher(), UrlPool(), FakeGateway()
    spawner = LocalSpawner(s, gw, pool, sink, llm, [fetcher])  # type: ignore[arg-type]
    req = Request(run_id="r1", query=query, mode=mode)  # type: ignore[arg-type]
    evaluator = Evaluator(llm) if mode == "deep" else None  # type: ignore[arg-type]
    coord = Coordinator(s, req, sink, llm, spawner, evaluator)  # type: ignore[arg-type]
    return coord, sink, fetcher, spawner


async def test_quick_mode_is_one_researcher_and_cites_only_read_sources() -> None:
    coord, sink, fetcher, spawner = coordinator(
        "quick", ExtractiveLLM(), "How many widgets in 2024?"
    )
    result = await coord.run()
    assert len(spawner.spawned) == 1
    assert result.status == "completed"
    assert {s.url for s in result.report.sources} <= set(fetcher.fetched)
    assert sink.checkpoints and sink.checkpoints[-1]["completed"][0]["subtask_id"] == "t1"
    assert result.usage.fetches == len(fetcher.fetched)


async def test_deep_mode_injects_reports_and_isolates_failures() -> None:
    coord, sink, fetcher, spawner = coordinator(
        "deep",
        ExplodingLLM(),
        "Compare widget sales and gadget output, and explode plants",
        **{"deep.max_parallel": 1},
    )
    result = await coord.run()
    assert len(spawner.spawned) >= 2
    failed = [p for t, p in sink.events if t == "researcher_failed"]
    assert failed and result.status == "completed"
    later = spawner.spawned[-1]
    assert any("Earlier finding" in n for n in later._notes)  # injected into later researchers
    assert len(fetcher.fetched) == len(set(fetcher.fetched))


async def test_all_researchers_failing_is_an_honest_no_answer() -> None:
    coord, _sink, _, _ = coordinator("quick", ExplodingLLM(), "Why did the plants explode?")
    result = await coord.run()
    assert result.status == "no_answer"
    assert "boom" in result.report.answer or "RuntimeError" in result.report.answer
    assert result.report.sources == ()


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_progress_reaches_100_only_at_the_end(mode: str) -> None:
    from deepresearch.policies.lifecycle.progress import ProgressState, advance
    from deepresearch.schemas import Event

    coord, sink, _, _ = coordinator(mode, ExtractiveLLM(), "Widget sales and plant gadgets in 2024")
    result = await coord.run()
    # ``run_finished`` is the driver's, once the report is on disk: never the coordinator's
    assert "run_finished" not in [t for t, _ in sink.events]
    state = ProgressState()
    seen = []
    for i, (t, p) in enumerate([*sink.events, ("run_finished", finished_event(result))]):
        state = advance(state, Event(seq=i + 1, ts=0.0, run_id="r1", type=t, payload=p))
        seen.append(state.percent)
    assert seen == sorted(seen)  # never goes backwards
    assert seen[-1] == 100 and max(seen[:-1]) < 100


class EvaluatorScript(ExtractiveLLM):
    """Extractive for every role but the evaluator, which answers from a script."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = replies

    async def complete(self, request):  # type: ignore[no-untyped-def]
        if request.role == "evaluator":
            text = self.replies.pop(0)
            return LLMReply(text=text, provider="script", input_tokens=10, output_tokens=5)
        return await super().complete(request)


async def test_delegate_round_then_non_json_reply_means_synthesize() -> None:
    delegate = Evaluation(
        action="delegate", reason="gap", new_subtasks=("Gadget output per plant?",)
    )
    llm = EvaluatorScript([delegate.model_dump_json(), "I think we are done!", "not json either"])
    coord, sink, fetcher, spawner = coordinator(
        "deep", llm, "Widget sales and gadget output in 2024", **{"deep.max_parallel": 2}
    )
    result = await coord.run()
    evaluated = [p for t, p in sink.events if t == "evaluated"]
    assert [e["action"] for e in evaluated] == ["delegate", "synthesize"]
    assert "not valid JSON" in str(evaluated[1]["reason"])
    assert ("round_started", {"round": 2, "count": 1}) in sink.events
    assert any(r._task.question == "Gadget output per plant?" for r in spawner.spawned)
    assert result.status == "completed"
    assert len(fetcher.fetched) == len(set(fetcher.fetched))


async def test_round_budget_is_a_hard_limit() -> None:
    delegate = [
        Evaluation(
            action="delegate", reason="more", new_subtasks=(f"Plant {i} output?",)
        ).model_dump_json()
        for i in range(10)
    ]
    llm = EvaluatorScript(delegate)
    coord, sink, _, _ = coordinator(
        "deep", llm, "Widget sales in 2024", **{"deep.target_rounds": 1}
    )
    result = await coord.run()
    rounds = [p["round"] for t, p in sink.events if t == "evaluated"]
    assert max(rounds) == 3  # target_rounds + 2
    assert [t for t, _ in sink.events].count("round_started") == 2
    assert result.limited_by == "rounds"
    assert any("round budget" in line for line in result.report.limits)


async def test_watchdog_stops_a_researcher_and_keeps_partial_findings() -> None:
    coord, sink, fetcher, _ = coordinator(
        "quick", ExtractiveLLM(), "How many widgets in 2024?", **{"researcher.max_steps": 5}
    )
    result = await coord.run()
    watchdog = [p for t, p in sink.events if t == "researcher_watchdog"]
    assert watchdog and "step" in str(watchdog[0]["reason"])
    assert len(fetcher.fetched) < 8
    report = result.report
    assert report.sections and report.sections[0].findings  # partial findings kept
    assert any("Not fully answered" in line for line in report.limits)


class CountingLLM(EvaluatorScript):
    """Counts every model call; the evaluator always delegates three new sub-questions."""

    def __init__(self) -> None:
        super().__init__([])
        self.calls = 0
        self.rounds = 0

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.calls += 1
        if request.role == "evaluator":
            self.rounds += 1
            # No figures in them: a delegated question may not state one its grounds lack.
            new = tuple(f"Follow-up {self.rounds}{'abc'[i]} on plant output?" for i in range(3))
            text = Evaluation(action="delegate", reason="more", new_subtasks=new).model_dump_json()
            return LLMReply(text=text, provider="script")
        return await ExtractiveLLM.complete(self, request)


@pytest.mark.parametrize("target_rounds", [1, 2])
async def test_every_run_is_bounded_by_its_budgets(target_rounds: int) -> None:
    from call_bounds import call_bounds

    llm = CountingLLM()
    flags = {"deep.target_rounds": target_rounds, "deep.max_parallel": 3}
    coord, _sink, fetcher, spawner = coordinator(
        "deep", llm, "Widget sales, gadget output and plant count in 2024", **flags
    )
    gateway_queries = coord._spawner._args[1].queries  # type: ignore[attr-defined]
    result = await coord.run()
    bounds = call_bounds(settings(**flags), "deep")
    assert result.limited_by == "rounds"  # the evaluator never stops asking: the budget does
    assert len(spawner.spawned) <= bounds.researchers
    assert llm.calls <= bounds.llm
    assert len(gateway_queries) <= bounds.search
    assert len(fetcher.fetched) <= bounds.fetch
    assert llm.rounds == target_rounds + 2
