"""The UrlPool actor: each normalized URL / document is claimed once per run, its text cached.

A researcher that finds a URL already claimed by a sibling does not fetch it again: it reuses the
cached text, waiting for the claimant to store it if the fetch is still in flight.
"""

from __future__ import annotations

import asyncio

from deepresearch.policies.urls import ClaimBook, Claimed, claim, normalize_url, taken_by_others
from deepresearch.schemas import Claim, FetchedDoc


class UrlPool:
    def __init__(self) -> None:
        self._book = ClaimBook()
        self._docs: dict[str, FetchedDoc] = {}
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

    async def claim_many(self, urls: list[str], owner: str) -> list[Claim]:
        """``claim`` for each of ``urls`` in one call: a scraping batch costs one round trip."""
        return [await self.claim(url, owner) for url in urls]

    async def store(self, doc: FetchedDoc) -> None:
        key = normalize_url(doc.url)
        self._docs[key] = doc
        cond = self._condition()
        async with cond:
            cond.notify_all()

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
        return {"claimed": len(self._book), "cached": len(self._docs)}
