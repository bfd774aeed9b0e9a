"""A page that fails to fetch or extract falls back to its search snippet, marked as such."""

from __future__ import annotations

from list_sink import ListSink
from test_actors_inprocess import FakeFetcher, settings

from deepresearch.actors.researcher import Researcher
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.schemas import SearchHit, SearchResult, SubTask


class SnippetGateway:
    async def search(self, query: str, limit: int) -> SearchResult:
        hits = (
            SearchHit(
                url="https://example.org/p1",
                title="Plant one",
                provider="fake",
                rank=1,
                snippet="Widget sales reached 101 million units in 2024 at plant 1.",
            ),
            SearchHit(
                url="https://example.org/p2",
                title="Plant two",
                provider="fake",
                rank=2,
                snippet="Widget sales reached 777 million units in 2024 at plant 2.",
            ),
        )
        return SearchResult(query=query, hits=hits, provider="fake")


async def test_failed_page_is_replaced_by_its_snippet() -> None:
    sink = ListSink()
    fetcher = FakeFetcher(broken=["https://example.org/p2"])
    researcher = Researcher(
        settings(), SnippetGateway(), UrlPool(), sink, ExtractiveLLM(), [fetcher]
    )
    report = await researcher.run(
        SubTask(id="t1", question="How many widget units were sold in 2024?")
    )
    assert ("snippet_fallback", {"subtask": "t1", "url": "https://example.org/p2"}) in sink.events
    by_url = {s.url: s for s in report.sources}
    assert "https://example.org/p2" in by_url
    assert by_url["https://example.org/p2"].title.endswith("(search snippet only)")
    assert any("777 million" in f.text for f in report.findings)
