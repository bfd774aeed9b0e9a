"""The Researcher actor: one sub-question, three phases, one ``ResearcherReport``.

gathering — plan search queries and spend a fixed budget of search calls through the gateway;
scraping  — claim candidate URLs/documents from the shared pool and read them in batches, checking
            before each batch that the prompt would stay under the context budget;
reporting — ask the model (or the extractive provider) for findings that cite the sources read.
A finding may cite only a source this researcher actually read: anything else is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from deepresearch import runtime
from deepresearch.actors.background import Background, Pending
from deepresearch.actors.event_log import EventSink
from deepresearch.actors.ports import GatewayPort, PoolPort
from deepresearch.config.settings import Settings
from deepresearch.errors import BudgetExceeded, DeepResearchError, SearchUnavailable
from deepresearch.llm_messages import (
    FindingsDraft,
    FindingsTask,
    LLMReply,
    QueriesTask,
    QueryList,
    SourceText,
)
from deepresearch.policies import findings, unsourced
from deepresearch.policies.context import estimate_tokens, gate
from deepresearch.policies.merge import reformulate
from deepresearch.policies.ranking import batches, fuse
from deepresearch.policies.source_scoring import select_hits
from deepresearch.policies.sufficiency import check_findings
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.pricing import usage_of
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.providers.search.base import Fetcher
from deepresearch.schemas import Claim, FetchedDoc, ResearcherReport, SearchHit, SubTask, Usage

Held = tuple[ResearcherReport, list[Pending]]  # a report and the events it came ahead of
EVENT_GATHER_S = 0.1  # events go out in bursts this far apart, not a round trip per step


class Researcher:
    def __init__(
        self,
        settings: Settings,
        gateway: GatewayPort,
        pool: PoolPort,
        sink: EventSink,
        llm: LLMProvider,
        fetchers: Sequence[Fetcher],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._s = settings
        self._gateway = gateway
        self._pool = pool
        self._sink = sink
        self._out = Background(sink, EVENT_GATHER_S)  # nothing waits for a round trip
        self._llm = llm
        self._fetchers = list(fetchers)
        self._clock = clock
        self._start(SubTask(id="", question=""), ())

    def _start(self, subtask: SubTask, notes: Sequence[str]) -> None:
        """Per-task state: one actor may serve several sub-tasks in turn (warm process)."""
        self._task = subtask
        self._notes = list(notes)
        self._steering: list[str] = []
        self._answered: set[str] = set()  # which provider tiers answered this sub-task's calls
        self._usage = Usage()
        self._degraded = False
        self._units = 0
        self._steps = 0
        self._deadline = self._clock() + self._s.researcher.max_time_s
        self._docs: list[FetchedDoc] = []
        self._hits: dict[str, SearchHit] = {}
        self._unstored: list[FetchedDoc] = []  # read, not yet in the pool (sent with a claim)
        self._queries: list[str] = []  # every query run, for the honest "could not research" report
        self._found = 0
        self._filtered = 0

    def _step(self) -> None:
        """Watchdog: every LLM, search and fetch call counts against the step and time limits."""
        rs = self._s.researcher
        self._steps += 1
        if self._steps > rs.max_steps:
            raise BudgetExceeded("researcher step", rs.max_steps)
        if self._clock() > self._deadline:
            raise BudgetExceeded("researcher time", rs.max_time_s)

    # ------------------------------------------------------------------ messages from outside

    async def steer(self, note: str) -> None:
        """A short note from the coordinator, read between phases (it shapes the report, not the
        queries, so a run's searches do not depend on which sibling happened to finish first)."""
        self._steering.append(note)

    # ------------------------------------------------------------------ the run

    async def run(self, subtask: SubTask, notes: Sequence[str] = ()) -> ResearcherReport:
        """The sub-task's report; every event it emitted is in the log by the time it returns."""
        report, tail = await self.run_holding_tail(subtask, notes)
        for type, payload in tail:
            await self._sink.emit(type, payload)
        return report

    async def run_holding_tail(self, subtask: SubTask, notes: Sequence[str] = ()) -> Held:
        """``run``, but the events not sent when the report is ready come back with it: the
        caller appends them before anyone sees the report (a round trip fewer)."""
        self._start(subtask, notes)
        try:
            report = await self._run(subtask)
        except BaseException:
            with contextlib.suppress(Exception):  # the original error is the one to report
                await self._out.flush()
            raise
        return report, await self._out.flush_holding_tail()

    async def _run(self, subtask: SubTask) -> ResearcherReport:
        self._emit(
            "researcher_started",
            question=subtask.question,
            injected=len(self._notes),
            pid=os.getpid(),
            node=runtime.node_id(),
        )
        stopped = ""
        try:
            try:
                hits = await self._gather()
                await self._scrape(hits)
            except BudgetExceeded as exc:  # keep what was read; report it as partial
                stopped = str(exc)
                self._emit("researcher_watchdog", reason=stopped, steps=self._steps)
            report = await self._report(self._docs)
        except DeepResearchError as exc:
            self._emit("researcher_failed", error=str(exc))
            return self._report_of(status="failed", error=str(exc))
        if stopped:
            self._emit("researcher_failed", error=stopped, partial=len(report.findings))
            return report.model_copy(update={"status": "failed", "error": stopped})
        self._emit(
            "researcher_finished",
            findings=len(report.findings),
            sources=len(report.sources),
            tokens=self._usage.input_tokens + self._usage.output_tokens,
            cost_usd=self._usage.cost_usd,
        )
        return report

    def _emit(self, type: str, **payload: str | int | float | bool | None) -> None:
        self._out.post(type, {"subtask": self._task.id, **payload})

    def _progress(self, phase: str, units: int = 1) -> None:
        self._units += units
        self._emit("researcher_progress", phase=phase, units=self._units)

    def _add_llm_usage(self, replies: list[LLMReply]) -> None:
        self._usage = self._usage + usage_of(replies, self._s.llm.prices)
        self._answered.update(r.provider for r in replies)

    async def _gather(self) -> list[SearchHit]:
        rs = self._s.researcher
        task = QueriesTask(
            question=self._task.question, notes=tuple(self._notes), max_queries=rs.queries
        )
        self._step()
        plan, replies = await call_structured(
            self._llm, build_request("researcher", task, QueryList), QueryList
        )
        self._add_llm_usage(replies)
        # Queries are shown (events, the could-not-research report): none may assert beyond the
        # question (``policies.unsourced``); an invented figure or citation drops the query.
        queries = list(dict.fromkeys(unsourced.vet_all(plan.queries, self._task.question)))
        queries = queries[: rs.tool_budget] or [self._task.question]
        self._emit("queries_planned", queries=len(queries))
        results: list[tuple[SearchHit, ...]] = []
        budget = rs.tool_budget
        for i, query in enumerate(queries):
            try:
                hits = await self._search(query)
                budget -= 1
                # Nothing relevant came back: broader variants, keeping a call per query left.
                spare = budget - (len(queries) - i - 1)
                empty = not self._relevant(hits)
                variants = reformulate(query, max_variants=spare) if empty and spare > 0 else []
                for variant in variants:
                    self._emit("query_reformulated", original=query, variant=variant)
                    hits = await self._search(variant)
                    budget -= 1
                    if self._relevant(hits):
                        break
            except SearchUnavailable as exc:
                self._degraded = True
                self._emit("search_unavailable", error=exc.reason)
                break
            results.append(hits)
        return await self._select(fuse(results))

    def _fetchable(self, url: str) -> bool:
        return any(f.handles(url) for f in self._fetchers)

    def _relevant(self, hits: Sequence[SearchHit]) -> bool:
        """Whether any hit would pass source scoring on its own (else: reformulate)."""
        cfg = self._s.scoring
        return bool(select_hits(self._task.question, hits, cfg, self._fetchable).kept)

    async def _select(self, hits: list[SearchHit]) -> list[SearchHit]:
        """Score the fused hits; the ones below the thresholds are never fetched."""
        selection = select_hits(self._task.question, hits, self._s.scoring, self._fetchable)
        self._found, self._filtered = len(hits), selection.dropped
        self._emit(
            "hits_scored",
            found=len(hits),
            kept=len(selection.kept),
            filtered=selection.dropped,
            relevance_threshold=round(selection.relevance_threshold, 3),
            composite_threshold=round(selection.composite_threshold, 3),
        )
        return list(selection.kept)

    async def _search(self, query: str) -> tuple[SearchHit, ...]:
        self._step()
        self._queries.append(query)
        result = await self._gateway.search(query, self._s.search.hits_per_query)
        self._usage = self._usage + Usage(search_calls=1)
        self._progress("gathering")
        return result.hits

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
        per_token = self._s.llm.chars_per_token
        base = estimate_tokens(self._task.question + "".join(self._notes), per_token)
        for batch in batches(urls, rs.batch_sizes, rs.max_sources):
            prompt = base + sum(doc_tokens)
            decision = gate(
                prompt,
                doc_tokens,
                len(batch),
                self._s.llm.context_window,
                self._s.llm.context_share,
            )
            if not decision.admit:
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
        if first:  # no batch at all: the handshake still says what siblings hold
            await self._claim(urls, [], first)
        return docs

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

    async def _report(self, docs: list[FetchedDoc]) -> ResearcherReport:
        rs = self._s.researcher
        texts = tuple(
            SourceText(n=i + 1, url=d.url, title=d.title, location=d.location, text=d.text)
            for i, d in enumerate(docs)
        )
        task = FindingsTask(
            question=self._task.question,
            sources=texts,
            notes=tuple(self._notes + self._steering),
            max_findings=rs.max_findings,
        )
        draft, replies = await call_structured(
            self._llm, build_request("researcher", task, FindingsDraft), FindingsDraft
        )
        self._add_llm_usage(replies)
        self._progress("reporting")
        drafted, dropped = findings.from_draft(draft, docs, self._s.verify.quote_chars)
        if dropped:
            self._emit("citations_dropped", count=dropped)
        quoted = all(r.provider == "extractive" for r in replies)
        read = [f"{d.title}\n{d.text}" for d in docs]
        titles = {d.url: d.title for d in docs}  # a table row is read with its filing's title
        check = check_findings(self._task.question, drafted, read, self._s.scoring, quoted, titles)
        if check.dropped:
            self._emit(
                "findings_filtered",
                dropped=check.dropped,
                kept=len(check.kept),
                topic_coverage=round(check.topic_coverage, 3),
                off_topic=check.off_topic,
            )
        kept = list(check.kept)  # nothing kept: the evaluator sees a gap
        quotes = [ev.quote for f in kept for ev in f.evidence]
        summary = unsourced.vet_summary(draft.summary, self._task.question, quotes) if kept else ""
        cited_urls = {u for f in kept for u in f.citations}
        sources = tuple(d.source() for d in docs if d.url in cited_urls)
        return self._report_of(
            summary=summary, findings=tuple(kept), sources=sources, findings_filtered=check.dropped
        )

    def _report_of(self, **fields: Any) -> ResearcherReport:
        """The report with what every outcome carries (usage, tiers, the search record)."""
        return ResearcherReport(
            subtask_id=self._task.id,
            question=self._task.question,
            usage=self._usage,
            answered_by=tuple(sorted(self._answered)),
            search_degraded=self._degraded,
            queries=tuple(self._queries),
            hits_found=self._found,
            hits_filtered=self._filtered,
            **fields,
        )
