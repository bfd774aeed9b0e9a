"""The researcher's scraping phase: claim candidate URLs from the run's pool and read them in
batches, checking before each batch that the prompt would stay under the context budget.

A mixin of ``Researcher`` (``actors/researcher.py``), kept apart because the claims, the batches
and the reads that wait on a sibling's fetch are a subject of their own; the per-task state it
uses is set by ``Researcher._start``.
"""

from __future__ import annotations

import asyncio

from deepresearch.config.settings import Settings
from deepresearch.errors import BudgetExceeded, DeepResearchError
from deepresearch.per_run.latency_hiding import Background
from deepresearch.per_run.ports import PoolPort
from deepresearch.policies.search.batches import batches
from deepresearch.policies.synthesis import findings
from deepresearch.policies.synthesis.context import estimate_tokens, gate
from deepresearch.providers.llm.base import LLMProvider, learned_window
from deepresearch.providers.search.base import Fetcher
from deepresearch.schemas import Claim, FetchedDoc, SearchHit, SubTask, Usage


class Scraping:
    """Claims, batches and reads; what it needs of the researcher is declared here."""

    _s: Settings
    _pool: PoolPort
    _out: Background
    _llm: LLMProvider
    _fetchers: list[Fetcher]
    _task: SubTask
    _notes: list[str]
    _docs: list[FetchedDoc]
    _hits: dict[str, SearchHit]
    _unstored: list[FetchedDoc]
    _usage: Usage
    _units: int
    _of: int

    def _emit(self, type: str, **payload: str | int | float | bool | None) -> None:
        raise NotImplementedError

    def _progress(self, phase: str, units: int = 1) -> None:
        raise NotImplementedError

    def _step(self) -> None:
        raise NotImplementedError

    async def _scrape(self, hits: list[SearchHit]) -> list[FetchedDoc]:
        urls = [h.url for h in hits]
        self._hits = {h.url: h for h in hits}
        try:
            return await self._scrape_batches(urls)
        finally:
            if self._unstored:  # the last batch's texts (or what a stop left unsent)
                self._out.submit(self._pool.store_many(self._unstored))
                self._unstored = []

    async def _claim(self, urls: list[str], batch: list[str], first: bool) -> list[Claim]:
        """The batch's claims, with the previous batch's texts riding along (one round trip,
        and a claim never queues behind separate stores). The first also carries the handshake:
        which candidates siblings hold already, emitted before any other scraping event."""
        if first:  # nothing has been read yet, so nothing rides along
            taken, claims = await self._pool.handshake(urls, self._task.id, batch)
            self._emit("handshake", candidates=len(urls), taken_by_siblings=len(taken))
            return claims
        stored, self._unstored = self._unstored, []
        return await self._pool.claim_many(batch, self._task.id, stored) if batch or stored else []

    async def _scrape_batches(self, urls: list[str]) -> list[FetchedDoc]:
        rs = self._s.researcher
        docs = self._docs
        doc_tokens: list[int] = []
        first = True
        base = estimate_tokens(self._task.question + "".join(self._notes), self._chars_per_token)
        for batch in batches(urls, rs.batch_sizes, rs.max_sources):
            prompt = base + sum(doc_tokens)
            decision = gate(
                prompt, doc_tokens, len(batch), self._window(), self._s.llm.context_share
            )
            cut = decision.admit and decision.take < len(batch)
            if cut:  # read what fits of this batch, then no more
                batch = batch[: decision.take]
                self._emit(
                    "context_gate",
                    prompt_tokens=decision.prompt_tokens,
                    expected=decision.expected_batch_tokens,
                    limit=decision.limit_tokens,
                    took=decision.take,
                )
            if not decision.admit:
                self._of = self._units + 1  # only the report is left
                if first:
                    await self._claim(urls, [], first)
                    first = False
                self._emit(
                    "context_gate",
                    prompt_tokens=decision.prompt_tokens,
                    expected=decision.expected_batch_tokens,
                    limit=decision.limit_tokens,
                )
                break
            admitted: list[str] = []
            stop: BudgetExceeded | None = None
            for url in batch:  # the watchdog counts each fetch before anything is claimed
                try:
                    self._step()
                except BudgetExceeded as exc:
                    stop = exc
                    break
                admitted.append(url)
            claims = await self._claim(urls, admitted, first)
            first = False
            # A batch that waits for a sibling's text stores its own as each arrives, so whoever
            # waits on this researcher is not held up by its own wait as well.
            defer = not any(c.status == "taken" for c in claims)
            fetched = await asyncio.gather(
                *(self._read(url, c, defer) for url, c in zip(admitted, claims, strict=True)),
                return_exceptions=True,
            )
            for doc in fetched:
                if isinstance(doc, FetchedDoc):
                    docs.append(doc)
                    doc_tokens.append(self._llm.count_tokens(doc.text))
            self._progress("scraping")
            for outcome in fetched:  # the batch's reads are kept; then the watchdog may stop us
                if isinstance(outcome, BaseException):
                    raise outcome
            if stop is not None:
                raise stop
            if cut:
                self._of = self._units + 1  # only the report is left
                break
        if first:  # no batch at all: the handshake still says what siblings hold
            await self._claim(urls, [], first)
        return docs

    @property
    def _chars_per_token(self) -> float:
        return self._s.llm.chars_per_token

    def _window(self) -> int:
        """``llm.context_window``, or less where the model's server said its window is smaller."""
        learned = learned_window(self._llm, "researcher")
        configured = self._s.llm.context_window
        return min(configured, learned) if learned else configured

    async def _read(self, url: str, claim: Claim, defer: bool = False) -> FetchedDoc | None:
        if claim.status == "cached" and claim.doc is not None:
            self._emit("source_reused", url=url)
            return claim.doc
        if claim.status == "taken":
            doc = await self._pool.get(url)
            if doc is not None:
                self._emit("source_reused", url=url)
            return doc
        fetcher = next((f for f in self._fetchers if f.handles(url)), None)
        if fetcher is None:
            self._out.submit(self._pool.fail(url, "no fetcher for this URL"))
            return None
        try:
            doc = await fetcher.fetch(url)
        except DeepResearchError as exc:
            self._emit("fetch_failed", url=url, error=str(exc))
            snippet = findings.snippet_doc(self._hits.get(url))
            if snippet is None:
                self._out.submit(self._pool.fail(url, str(exc)))
                return None
            self._emit("snippet_fallback", url=url)
            doc = snippet
        self._usage = self._usage + Usage(fetches=1)
        if defer:
            self._unstored.append(doc)
        else:
            self._out.submit(self._pool.store_many([doc]))
        self._emit("source_read", url=doc.url, title=doc.title, location=doc.location)
        return doc
