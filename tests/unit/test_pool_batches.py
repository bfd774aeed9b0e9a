"""A scraping batch's texts reach the shared pool with the researcher's next claim (one round trip,
and a claim never queues behind separate stores), and siblings still get every text they wait for."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from list_sink import ListSink
from test_actors_inprocess import PAGES, FakeFetcher, FakeGateway, researcher, settings

from deepresearch.actors.researcher import Researcher
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.schemas import Claim, FetchedDoc, SearchResult, SubTask

URLS = list(PAGES)


def page(url: str) -> FetchedDoc:
    return FetchedDoc(url=url, title="t", location=url, text=PAGES[url], provider="fake")


class RecordingPool(UrlPool):
    """The real pool, noting each call a researcher makes (name, urls claimed, urls stored)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, list[str], list[str]]] = []
        self._inside = False

    async def claim_many(
        self, urls: list[str], owner: str, stored: Sequence[FetchedDoc] = ()
    ) -> list[Claim]:
        self.calls.append(("claim_many", list(urls), [d.url for d in stored]))
        self._inside = True  # the pool's own store of the texts that rode along
        try:
            return await super().claim_many(urls, owner, stored)
        finally:
            self._inside = False

    async def store_many(self, docs: Sequence[FetchedDoc]) -> None:
        if not self._inside:
            self.calls.append(("store_many", [], [d.url for d in docs]))
        await super().store_many(docs)


async def test_stored_texts_are_kept_before_the_claims_and_saved_once() -> None:
    sink = ListSink()
    pool = UrlPool(docs=sink)
    claims = await pool.claim_many([URLS[1]], "t1", stored=[page(URLS[0])])
    assert [c.status for c in claims] == ["claimed"]
    again = await pool.claim_many([URLS[0]], "t2")
    assert again[0].status == "cached" and again[0].doc == page(URLS[0])
    await pool.store_many([page(URLS[0]), page(URLS[1])])
    assert [d.url for d in sink.docs] == [URLS[0], URLS[1]]  # each text kept for follow-ups once


async def test_a_batch_rides_with_the_next_claim_and_the_last_is_stored_at_the_end() -> None:
    pool, fetcher, sink = RecordingPool(), FakeFetcher(), ListSink()
    report = await researcher(settings(), ExtractiveLLM(), FakeGateway(), pool, fetcher, sink)()
    assert report.status == "ok"
    calls = [c for c in pool.calls if c[0] in ("claim_many", "store_many")]
    assert [c[0] for c in calls] == ["claim_many"] * 3 + ["store_many"]  # batches 3, 2, 3
    claimed = [c[1] for c in calls[:3]]
    assert [c[2] for c in calls] == [[], claimed[0], claimed[1], claimed[2]]
    assert (await pool.stats())["cached"] == len(fetcher.fetched) == 8


class TwoOrders(FakeGateway):
    """Hits in a different order per query, so siblings' batches overlap and wait on each other."""

    async def search(self, query: str, limit: int) -> SearchResult:
        result = await super().search(query, limit)
        hits = result.hits[::-1] if "gadget" in query.lower() else result.hits
        return result.model_copy(update={"hits": hits})


class SlowFetcher(FakeFetcher):
    async def fetch(self, url: str) -> FetchedDoc:
        await asyncio.sleep(0.01 * (int(url.rsplit("p", 1)[1]) % 3))  # reads finish out of order
        return await super().fetch(url)


async def test_siblings_waiting_on_each_others_batches_all_finish_without_fetching_twice() -> None:
    pool, fetcher, sink = UrlPool(), SlowFetcher(), ListSink()
    s = settings(**{"search.hits_per_query": 8})
    gateway = TwoOrders()
    first = Researcher(s, gateway, pool, sink, ExtractiveLLM(), [fetcher])
    second = Researcher(s, gateway, pool, sink, ExtractiveLLM(), [fetcher])
    reports = await asyncio.wait_for(
        asyncio.gather(
            first.run(SubTask(id="t1", question="How many widget units were sold in 2024?")),
            second.run(SubTask(id="t2", question="How many gadgets does each plant make?")),
        ),
        timeout=10,
    )
    assert all(r.status == "ok" for r in reports)
    assert len(fetcher.fetched) == len(set(fetcher.fetched))  # never fetched twice
    assert "source_reused" in sink.types()  # someone waited on (or reused) a sibling's text
    assert (await pool.stats())["cached"] == len(fetcher.fetched)
