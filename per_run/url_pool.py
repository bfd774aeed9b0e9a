"""The UrlPool, a plain object the run host holds for each run: each normalized URL / document is
claimed once per run, its text cached.

A researcher that finds a URL already claimed by a sibling does not fetch it again: it reuses the
cached text, waiting for the claimant to store it if the fetch is still in flight. A follow-up
run's pool starts seeded with the texts its earlier runs read, so none of them is fetched again;
every newly stored text goes to a ``DocSink`` so a later follow-up can reuse it in turn. A resumed
run's pool starts seeded with the texts the run itself had read before it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Protocol

from deepresearch.policies.urls import ClaimBook, Claimed, claim, normalize_url, taken_by_others
from deepresearch.schemas import Claim, FetchedDoc, SearchRecord


class DocSink(Protocol):
    """Where stored texts are kept for follow-ups and resumes (the EventLog's ``docs.jsonl``),
    and researchers' search records for resumes (``searches.jsonl``). Non-blocking: the pool
    sits on every researcher's read path."""

    def save_docs(self, docs: Sequence[FetchedDoc]) -> None: ...

    def save_searches(self, records: Sequence[SearchRecord]) -> None: ...


class UrlPool:
    def __init__(self, seed: Sequence[FetchedDoc] = (), docs: DocSink | None = None) -> None:
        self._book = ClaimBook()
        self._docs: dict[str, FetchedDoc] = {normalize_url(d.url): d for d in seed}
        self._seeded = len(self._docs)
        self._sink = docs
        self._failed: dict[str, str] = {}
        self._stored: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._stored is None:
            self._stored = asyncio.Condition()
        return self._stored

    async def claim(self, url: str, owner: str) -> Claim:
        key = normalize_url(url)
        if key in self._docs:
            return Claim(url=key, status="cached", owner=owner, doc=self._docs[key])
        self._book, outcome = claim(self._book, key, owner)
        if isinstance(outcome, Claimed):
            return Claim(url=key, status="claimed", owner=owner)
        return Claim(url=key, status="taken", owner=outcome.owner)

    async def claim_many(
        self, urls: list[str], owner: str, stored: Sequence[FetchedDoc] = ()
    ) -> list[Claim]:
        """``claim`` for each of ``urls`` in one call: a scraping batch costs one round trip.

        ``stored`` are the texts the caller read in its previous batch. They travel with the
        next claim, so a researcher's store never queues ahead of its claim (which is on its
        critical path), and are stored first (a sibling waiting for one of them gets it)."""
        if stored:
            await self.store_many(stored)
        return [await self.claim(url, owner) for url in urls]

    async def handshake(
        self, candidates: list[str], owner: str, batch: list[str]
    ) -> tuple[tuple[str, ...], list[Claim]]:
        """A researcher's first scraping call: which of its ``candidates`` siblings hold already,
        and the claims for its first ``batch``, in one round trip."""
        taken = await self.taken_by_others(candidates, owner)
        return taken, await self.claim_many(batch, owner)

    async def store_many(self, docs: Sequence[FetchedDoc]) -> None:
        new = [d for d in docs if normalize_url(d.url) not in self._docs]
        if self._sink is not None and new:
            with contextlib.suppress(Exception):  # keeping it for later must not fail this run
                self._sink.save_docs(new)
        self._docs.update((normalize_url(d.url), d) for d in docs)
        cond = self._condition()
        async with cond:
            cond.notify_all()

    async def keep_searches(self, records: Sequence[SearchRecord]) -> None:
        """A researcher's query plan or search result, kept so a resume does not pay for it
        again (``policies.prior_work``); the pool only passes it on to its sink."""
        if self._sink is not None and records:
            with contextlib.suppress(Exception):  # keeping it must not fail this run
                self._sink.save_searches(records)

    async def fail(self, url: str, reason: str) -> None:
        """The claimant could not fetch ``url``: waiters stop waiting and nobody retries it."""
        self._failed[normalize_url(url)] = reason
        cond = self._condition()
        async with cond:
            cond.notify_all()

    async def get(self, url: str, timeout_s: float = 30.0) -> FetchedDoc | None:
        """The cached text of ``url``, waiting for an in-flight fetch; None if it failed or timed out."""
        key = normalize_url(url)
        cond = self._condition()
        async with cond:
            try:
                await asyncio.wait_for(
                    cond.wait_for(lambda: key in self._docs or key in self._failed), timeout_s
                )
            except TimeoutError:
                return None
        return self._docs.get(key)

    async def taken_by_others(self, urls: list[str], owner: str) -> tuple[str, ...]:
        return taken_by_others(self._book, [normalize_url(u) for u in urls], owner)

    async def stats(self) -> dict[str, int]:
        return {"claimed": len(self._book), "cached": len(self._docs), "seeded": self._seeded}
