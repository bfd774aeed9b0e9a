"""A failure mid-run loses nothing: what an unfinished sub-task had done (its query plan, its
searches' results, the pages read) is kept on disk and reused by the resumed run, which pays only
for the rest (``policies.prior_work``)."""

from __future__ import annotations

from pathlib import Path

from list_sink import ListSink
from test_actors_inprocess import FakeFetcher, FakeGateway, settings

from deepresearch.actors.researcher import Researcher
from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.lifecycle.prior_work import prior_work, resume_work
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.schemas import (
    FetchedDoc,
    PriorWork,
    SearchHit,
    SearchRecord,
    SearchResult,
    SubTask,
)
from deepresearch.storage.run_dir import RunDir

QUESTION = "Widget sales, gadget output and plant count in 2024"


def result(query: str, *urls: str) -> SearchResult:
    hits = tuple(SearchHit(url=u, title=u, provider="fake", rank=i + 1) for i, u in enumerate(urls))
    return SearchResult(query=query, hits=hits, provider="fake")


def record(
    sid: str,
    question: str = QUESTION,
    queries: tuple[str, ...] = (),
    res: SearchResult | None = None,
) -> SearchRecord:
    return SearchRecord(subtask=sid, question=question, queries=queries, result=res)


class CountingLLM(ExtractiveLLM):
    """The extractive model, counting its calls by what they ask for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.asked.append(type(request.task).__name__)
        return await super().complete(request)


def test_prior_work_takes_the_latest_plan_and_results_and_skips_completed_sub_tasks() -> None:
    records = [
        record("t1", queries=("a", "b")),
        record("t1", res=result("a", "https://x/1")),
        record("t2", queries=("c",)),
        record("t1", queries=("a", "b2")),  # a second session planned again
        record("t1", res=result("a", "https://x/2")),
        record("t3", question="Another question?", queries=("d",)),
        record("t3", question="A delegated question, planned anew?", queries=("e",)),
    ]
    prior = prior_work(records, completed={"t2"})
    assert set(prior) == {"t1", "t3"}
    assert prior["t1"].queries == ("a", "b2")
    assert [r.hits[0].url for r in prior["t1"].results] == ["https://x/2"]
    assert prior["t3"] == PriorWork(question="A delegated question, planned anew?", queries=("e",))


def test_resume_work_reads_again_pages_kept_cut_short_and_snippets() -> None:
    whole = FetchedDoc(url="https://x/1", title="1", location="", text="w" * 10)
    cut = FetchedDoc(url="https://x/2", title="2", location="", text="c" * 20)
    snippet = FetchedDoc(
        url="https://x/3", title="3", location="", text="s", content_type="text/x-search-snippet"
    )
    work = resume_work([whole, cut, snippet], [], (), doc_cap_chars=20)
    assert snippet.content_type != "text/plain"
    assert work.docs == (whole,) and work.prior == {}


def test_search_records_round_trip_through_the_run_directory(tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "r1")
    kept = [record("t1", queries=("a",)), record("t1", res=result("a", "https://x/1"))]
    with run_dir:
        for r in kept:
            run_dir.append_search(r)
    with open(run_dir.path("searches.jsonl"), "ab") as fh:
        fh.write(b'{"subtask": "t1", "quest')  # a crash cut the last line
    assert RunDir.existing(tmp_path, "r1").read_searches() == kept


async def test_the_pool_passes_search_records_to_its_sink() -> None:
    sink = ListSink()
    await UrlPool(docs=sink).keep_searches([record("t1", queries=("a",))])
    assert sink.searches == [record("t1", queries=("a",))]


async def run(
    prior: PriorWork | None, pool: UrlPool
) -> tuple[object, CountingLLM, FakeGateway, FakeFetcher, ListSink]:
    llm, gateway, fetcher, sink = CountingLLM(), FakeGateway(), FakeFetcher(), ListSink()
    s = settings(**{"researcher.queries": 3})
    r = Researcher(s, gateway, pool, sink, llm, [fetcher])  # type: ignore[arg-type]
    report = await r.run(SubTask(id="t1", question=QUESTION), (), prior)
    return report, llm, gateway, fetcher, sink


async def test_a_restarted_sub_task_pays_only_for_the_searches_and_pages_it_had_not_done() -> None:
    kept = ListSink()
    fresh, llm, gateway, fetcher, _ = await run(None, UrlPool(docs=kept))
    assert len(gateway.queries) >= 2 and "QueriesTask" in llm.asked
    # Interrupted after its query plan, its first search and the pages of its first batch:
    plan = next(r for r in kept.searches if r.queries)
    first = next(r for r in kept.searches if r.result is not None)
    prior = prior_work([plan, first])["t1"]
    work = resume_work(kept.docs[:3], [], (), doc_cap_chars=200_000)
    again, llm2, gateway2, fetcher2, sink2 = await run(prior, UrlPool(work.docs))
    assert "QueriesTask" not in llm2.asked  # the plan is not asked for again
    assert gateway2.queries == gateway.queries[1:]  # nor the first search
    assert sorted(fetcher2.fetched) == sorted(set(fetcher.fetched) - {d.url for d in work.docs})
    # and the sub-task goes on exactly as it would have, at less cost
    assert again.model_copy(update={"usage": fresh.usage}) == fresh  # type: ignore[attr-defined]
    assert ("search_reused", {"subtask": "t1", "query": first.result.query}) in sink2.events  # type: ignore[union-attr]
    assert again.usage.search_calls == fresh.usage.search_calls - 1  # type: ignore[attr-defined]
    assert again.usage.fetches == fresh.usage.fetches - len(work.docs)  # type: ignore[attr-defined]


async def test_prior_work_of_another_question_is_not_used() -> None:
    prior = PriorWork(question="Something else?", queries=("zzz",), results=(result("zzz"),))
    _, llm, gateway, _, sink = await run(prior, UrlPool())
    assert "QueriesTask" in llm.asked and "zzz" not in gateway.queries
    assert "search_reused" not in sink.types()


async def test_progress_says_how_many_steps_the_researcher_expects() -> None:
    _, _, _, _, sink = await run(None, UrlPool())
    steps = [p for t, p in sink.events if t == "researcher_progress"]
    assert [p["units"] for p in steps] == list(range(1, len(steps) + 1))
    assert all(isinstance(p["of"], int) and p["of"] >= p["units"] for p in steps)
    assert steps[-1]["of"] == steps[-1]["units"] and steps[-1]["phase"] == "reporting"
    assert steps[0]["phase"] == "gathering"  # the query plan is the first step
