"""A researcher whose search finds nothing tries broader variants, as events, within its budget."""

from __future__ import annotations

from collections.abc import Iterable

from list_sink import ListSink

from deepresearch.actors.researcher import Researcher
from deepresearch.config.settings import Settings, load_settings, overrides_from_flags
from deepresearch.llm_messages import DraftFinding, FindingsDraft, QueryList
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.search.merge import reformulate
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.schemas import FetchedDoc, ResearcherReport, SearchHit, SearchResult, SubTask

URL = "https://example.org/widgets"
TEXT = "Widget sales reached 120 million units in 2024."
ORIGINAL = '"widget sales" site:example.org 2024 -rumours'


class PickyGateway:
    """Answers only the queries in ``answering``; everything else finds nothing."""

    def __init__(self, answering: Iterable[str] = ()) -> None:
        self.answering = set(answering)
        self.queries: list[str] = []

    async def search(self, query: str, limit: int) -> SearchResult:
        self.queries.append(query)
        hits = (SearchHit(url=URL, title="w", provider="fake", rank=1),)
        return SearchResult(query=query, hits=hits if query in self.answering else ())


class OneFetcher:
    def handles(self, url: str) -> bool:
        return url == URL

    async def fetch(self, url: str) -> FetchedDoc:
        return FetchedDoc(url=url, title="w", location=url, text=TEXT, provider="fake")


def settings(**flags: object) -> Settings:
    return load_settings(None, overrides_from_flags(dict(flags)), env={})


async def run(
    gateway: PickyGateway, queries: tuple[str, ...], s: Settings, cite: bool
) -> tuple[ResearcherReport, ListSink]:
    draft = FindingsDraft(
        summary="s", findings=(DraftFinding(text=TEXT, sources=(1,)),) if cite else ()
    )
    llm = ScriptedLLM(
        {"researcher": [QueryList(queries=queries).model_dump_json(), draft.model_dump_json()]}
    )
    sink = ListSink()
    r = Researcher(s, gateway, UrlPool(), sink, llm, [OneFetcher()])  # type: ignore[arg-type]
    report = await r.run(SubTask(id="t1", question="How many widgets were sold in 2024?"))
    llm.assert_all_used()
    return report, sink


def reformulations(sink: ListSink) -> list[dict[str, object]]:
    return [p for t, p in sink.events if t == "query_reformulated"]


async def test_empty_result_tries_variants_until_one_finds_hits() -> None:
    variants = reformulate(ORIGINAL)
    assert len(variants) >= 2
    gateway = PickyGateway(answering=[variants[1]])
    report, sink = await run(gateway, (ORIGINAL,), settings(), cite=True)
    assert gateway.queries == [ORIGINAL, variants[0], variants[1]]  # stops at the first with hits
    assert reformulations(sink) == [
        {"subtask": "t1", "original": ORIGINAL, "variant": variants[0]},
        {"subtask": "t1", "original": ORIGINAL, "variant": variants[1]},
    ]
    assert [s.url for s in report.sources] == [URL]
    assert report.usage.search_calls == 3


async def test_variants_are_bounded_by_the_budget_left_for_planned_queries() -> None:
    gateway = PickyGateway()  # nothing ever answers
    s = settings(**{"researcher.tool_budget": 3})
    report, sink = await run(gateway, (ORIGINAL, "widget output 2024"), s, cite=False)
    # 3 calls: the first query, one variant of it (one call stays reserved), the second query.
    assert gateway.queries[0] == ORIGINAL and gateway.queries[2] == "widget output 2024"
    assert len(gateway.queries) == 3 and len(reformulations(sink)) == 1
    assert report.usage.search_calls == 3 and not report.sources


async def test_no_reformulation_when_the_query_finds_hits() -> None:
    gateway = PickyGateway(answering=[ORIGINAL])
    report, sink = await run(gateway, (ORIGINAL,), settings(), cite=True)
    assert gateway.queries == [ORIGINAL]
    assert reformulations(sink) == [] and report.sources
