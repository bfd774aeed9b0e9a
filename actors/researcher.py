"""The Researcher (a plain class; the crew's ``CrewResearcher`` actor runs one per sub-task):
one sub-question, three phases, one ``ResearcherReport``.

gathering — plan search queries and spend a fixed budget of search calls through the gateway;
scraping  — claim candidate URLs/documents from the shared pool and read them in batches, checking
            before each batch that the prompt would stay under the context budget
            (``actors/researcher_scraping.py``);
reporting — ask the model (or the extractive provider) for findings that cite the sources read.
A finding may cite only a source this researcher actually read: anything else is dropped.

Its query plan and each search result are kept (``PoolPort.keep_searches``); a sub-task restarted
by a resume gets them back as ``PriorWork`` and pays only for the searches it had not run.
Each step is reported with how many the researcher expects in all (``of``), for progress.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from deepresearch.actors.researcher_scraping import Scraping
from deepresearch.cluster import runtime
from deepresearch.config.settings import Settings
from deepresearch.errors import (
    BudgetExceeded,
    DeepResearchError,
    LLMUnavailable,
    SearchUnavailable,
)
from deepresearch.llm_messages import (
    FindingsDraft,
    FindingsTask,
    LLMReply,
    QueriesTask,
    QueryList,
    SourceText,
)
from deepresearch.per_run.event_log import EventSink
from deepresearch.per_run.latency_hiding import Background
from deepresearch.per_run.ports import GatewayPort, PoolPort
from deepresearch.policies import unsourced
from deepresearch.policies.lifecycle.progress import expected_steps
from deepresearch.policies.search.batches import batch_count
from deepresearch.policies.search.merge import reformulate
from deepresearch.policies.search.query_check import checked_queries
from deepresearch.policies.search.ranking import fuse
from deepresearch.policies.search.source_scoring import select_hits
from deepresearch.policies.synthesis import findings
from deepresearch.policies.synthesis.sufficiency import check_findings
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.pricing import usage_of
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.providers.search.base import Fetcher
from deepresearch.schemas import (
    FetchedDoc,
    PriorWork,
    ResearcherReport,
    SearchHit,
    SearchRecord,
    SearchResult,
    SubTask,
    Usage,
)


class Researcher(Scraping):
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
        self._out = Background(sink)  # nothing waits for a round trip
        self._llm = llm
        self._fetchers = list(fetchers)
        self._clock = clock
        self._start(SubTask(id="", question=""), ())

    def _start(
        self, subtask: SubTask, notes: Sequence[str], prior: PriorWork | None = None
    ) -> None:
        """Per-task state: one actor may serve several sub-tasks in turn (warm process)."""
        self._task = subtask
        if prior is not None and prior.question != subtask.question:
            prior = None  # another question under the same id: nothing of it applies
        self._prior_queries = prior.queries if prior is not None else ()
        self._prior_hits = {r.query: r.hits for r in prior.results} if prior is not None else {}
        self._notes = list(notes)
        self._steering: list[str] = []
        self._answered: set[str] = set()  # which provider tiers answered this sub-task's calls
        self._fell_back: list[str] = []  # the router's notes of its calls that fell back
        self._usage = Usage()
        self._degraded = False
        self._units = 0
        self._of = expected_steps(self._s.researcher)
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

    async def run(
        self, subtask: SubTask, notes: Sequence[str] = (), prior: PriorWork | None = None
    ) -> ResearcherReport:
        """The sub-task's report; every event it emitted is in the log by the time it returns.
        ``prior``: what this sub-task had done before its run was interrupted (a resume)."""
        self._start(subtask, notes, prior)
        try:
            report = await self._run(subtask)
        except BaseException:
            with contextlib.suppress(Exception):  # the original error is the one to report
                await self._out.flush()
            raise
        await self._out.flush()
        return report

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
            unavailable = isinstance(exc, LLMUnavailable)
            return self._report_of(status="failed", error=str(exc), model_unavailable=unavailable)
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
        self._of = max(self._of, self._units)
        self._emit("researcher_progress", phase=phase, units=self._units, of=self._of)

    def _keep(self, queries: Sequence[str] = (), result: SearchResult | None = None) -> None:
        """Keep a query plan or a search result for a resume (in the background)."""
        record = SearchRecord(
            subtask=self._task.id,
            question=self._task.question,
            queries=tuple(queries),
            result=result,
        )
        self._out.submit(self._pool.keep_searches([record]))

    def _add_llm_usage(self, replies: list[LLMReply]) -> None:
        self._usage = self._usage + usage_of(replies, self._s.llm.prices)
        self._answered.update(r.provider for r in replies)
        if not self._fell_back:  # one line per role: the first fallback says from, to and why
            self._fell_back = [r.fell_back for r in replies if r.fell_back][:1]

    async def _plan_queries(self) -> list[str]:
        """The sub-task's queries: planned by the model, or the plan it had made before a resume."""
        rs = self._s.researcher
        if self._prior_queries:
            queries = list(self._prior_queries)
            self._emit("queries_planned", queries=len(queries), reused=True)
            return queries
        task = QueriesTask(
            question=self._task.question, notes=tuple(self._notes), max_queries=rs.queries
        )
        self._step()
        plan, replies = await call_structured(
            self._llm, build_request("researcher", task, QueryList), QueryList
        )
        self._add_llm_usage(replies)
        # Queries are shown (events, the could-not-research report): only those about the
        # question that assert nothing beyond it are run (``policies.query_check``).
        queries = checked_queries(plan.queries, self._task.question, self._s.scoring)
        queries = queries[: rs.tool_budget] or [self._task.question]
        self._emit("queries_planned", queries=len(queries))
        self._keep(queries=queries)
        return queries

    async def _gather(self) -> list[SearchHit]:
        rs = self._s.researcher
        queries = await self._plan_queries()
        self._of = expected_steps(rs, len(queries))
        self._progress("gathering")
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
                    self._of += 1
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
        rs = self._s.researcher
        kept = batch_count(len(selection.kept), rs.batch_sizes, rs.max_sources)
        self._of = self._units + kept + 1
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
        reused = self._prior_hits.get(query)
        if reused is not None:  # run before the resume: the same hits, at no cost
            self._queries.append(query)
            self._emit("search_reused", query=query)
            self._progress("gathering")
            return reused
        self._step()
        self._queries.append(query)
        result = await self._gateway.search(query, self._s.search.hits_per_query)
        self._usage = self._usage + Usage(search_calls=1)
        self._keep(result=result)
        self._progress("gathering")
        return result.hits

    async def _report(self, docs: list[FetchedDoc]) -> ResearcherReport:
        rs = self._s.researcher
        texts = tuple(
            SourceText(
                n=i + 1,
                url=d.url,
                title=d.title,
                location=d.location,
                text=d.text,
                domain=d.domain,
            )
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
        authors = {d.url: d.by for d in docs}  # who each is by, as its cover says
        check = check_findings(
            self._task.question, drafted, read, self._s.scoring, quoted, titles, authors
        )
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
            summary=summary,
            findings=tuple(kept),
            sources=sources,
            findings_filtered=check.dropped,
            claims_dropped=len(draft.findings) - len(kept),
        )

    def _report_of(self, **fields: Any) -> ResearcherReport:
        """The report with what every outcome carries (usage, tiers, the search record)."""
        return ResearcherReport(
            subtask_id=self._task.id,
            question=self._task.question,
            usage=self._usage,
            answered_by=tuple(sorted(self._answered)),
            fell_back=tuple(self._fell_back),
            search_degraded=self._degraded,
            queries=tuple(self._queries),
            hits_found=self._found,
            hits_filtered=self._filtered,
            authors_read=tuple(dict.fromkeys(d.by for d in self._docs if d.by)),
            sources_read=len(self._docs),
            **fields,
        )
