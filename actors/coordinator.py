"""The Coordinator actor: plans, runs researchers (at most ``max_parallel`` at once), writes.

Quick mode is one researcher on the question itself and no evaluator round trip. Deep mode asks
the planner for sub-questions and runs one researcher per sub-question; a finished researcher's
report is injected into researchers started later and a short steering note goes to those still
running. Children are created through a ``Spawner`` so the same code runs on Ray or in-process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from deepresearch.actors.event_log import EventSink
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError
from deepresearch.policies import synthesis
from deepresearch.policies.evaluation import round_budget
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.schemas import (
    EvaluateTask,
    Evaluation,
    LLMReply,
    PlanDraft,
    PlanTask,
    Report,
    Request,
    ResearcherReport,
    RunResult,
    SubTask,
    Usage,
    WriteDraft,
)


class ResearcherPort(Protocol):
    async def run(self, subtask: SubTask, notes: Sequence[str] = ()) -> ResearcherReport: ...
    async def steer(self, note: str) -> None: ...


class Spawner(Protocol):
    """Hands out researchers; a released healthy one may serve the next sub-task (warm process)."""

    def acquire(self) -> ResearcherPort: ...
    def release(self, researcher: ResearcherPort, healthy: bool) -> None: ...
    def close(self) -> None: ...


class EvaluatorPort(Protocol):
    async def evaluate(self, task: EvaluateTask) -> tuple[Evaluation, list[LLMReply]]: ...


class Coordinator:
    def __init__(
        self,
        settings: Settings,
        request: Request,
        sink: EventSink,
        llm: LLMProvider,
        spawner: Spawner,
        evaluator: EvaluatorPort | None = None,
    ) -> None:
        self._evaluator = evaluator
        self._finished: list[ResearcherReport] = []
        self._subtasks: list[SubTask] = []
        self._s = settings
        self._request = request
        self._sink = sink
        self._llm = llm
        self._spawner = spawner
        self._usage = Usage()
        self._providers: dict[str, str] = {}

    async def run(self) -> RunResult:
        req = self._request
        await self._sink.emit("run_started", {"mode": req.mode, "query": req.query})
        subtasks = await self._plan()
        self._subtasks = subtasks  # grows when the evaluator delegates
        await self._sink.emit(
            "plan_ready", {"subtasks": [t.question for t in subtasks], "count": len(subtasks)}
        )
        try:
            reports = await self._research(subtasks)
            if self._evaluator is not None and req.mode == "deep":
                reports = await self._rounds(subtasks, reports)
        finally:
            self._spawner.close()
        result = await self._synthesize(reports)
        await self._sink.emit(
            "run_finished", {"status": result.status, "sources": len(result.report.sources)}
        )
        return result

    def _account(self, role: str, replies: Sequence[LLMReply]) -> None:
        for reply in replies:
            self._providers[role] = reply.provider
            self._usage = self._usage + Usage(
                llm_calls=1,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                estimated_tokens=reply.estimated_tokens,
            )

    async def _plan(self) -> list[SubTask]:
        query = self._request.query
        if self._request.mode == "quick":
            return [SubTask(id="t1", question=query)]
        sizes = self._s.deep.researchers_by_complexity
        task = PlanTask(query=query, max_subtasks=max(sizes))
        draft, replies = await call_structured(
            self._llm, build_request("planner", task, PlanDraft), PlanDraft
        )
        self._account("planner", replies)
        questions = [q.strip() for q in dict.fromkeys(draft.sub_questions) if q.strip()]
        questions = questions[: sizes[draft.complexity - 1]] or [query]
        return [SubTask(id=f"t{i + 1}", question=q) for i, q in enumerate(questions)]

    async def _research(self, subtasks: list[SubTask]) -> list[ResearcherReport]:
        limit = asyncio.Semaphore(1 if self._request.mode == "quick" else self._s.deep.max_parallel)
        finished = self._finished  # across rounds: later rounds get earlier reports injected
        running: dict[str, ResearcherPort] = {}
        cap = self._s.researcher.report_cap_chars

        async def one(task: SubTask) -> ResearcherReport:
            async with limit:
                notes = [_injection(r, cap) for r in finished if r.status == "ok"]
                researcher = self._spawner.acquire()
                running[task.id] = researcher
                healthy = False
                try:
                    report = await researcher.run(task, notes)
                    healthy = True
                except Exception as exc:  # a dead actor or a bug: isolate it to this sub-task
                    reason = str(exc) if isinstance(exc, DeepResearchError) else type(exc).__name__
                    await self._sink.emit(
                        "researcher_failed", {"subtask": task.id, "error": reason}
                    )
                    report = ResearcherReport(
                        subtask_id=task.id, question=task.question, status="failed", error=reason
                    )
                finally:
                    running.pop(task.id, None)
                    self._spawner.release(researcher, healthy)
                finished.append(report)
                await self._checkpoint(finished)
                if report.status == "ok":
                    note = f"A sibling finished '{task.question}': {report.summary[:300]}"
                    for other in list(running.values()):
                        await other.steer(note)
                return report

        reports = await asyncio.gather(*(one(t) for t in subtasks))
        for report in reports:
            self._usage = self._usage + report.usage
        return list(reports)

    async def _rounds(
        self, subtasks: list[SubTask], reports: list[ResearcherReport]
    ) -> list[ResearcherReport]:
        """Evaluate after each round; delegated sub-questions start the next round."""
        assert self._evaluator is not None
        budget = round_budget(self._s.deep.target_rounds)
        round_no = 1
        while True:
            task = EvaluateTask(
                query=self._request.query,
                agenda=tuple(r.question for r in reports),
                summaries=tuple(r.summary if r.status == "ok" else "" for r in reports),
                failed=tuple(r.question for r in reports if r.status != "ok"),
                round=round_no,
            )
            decision, replies = await self._evaluator.evaluate(task)
            self._account("evaluator", replies)
            await self._sink.emit(
                "evaluated",
                {
                    "round": round_no,
                    "action": decision.action,
                    "reason": decision.reason,
                    "new_subtasks": list(decision.new_subtasks),
                },
            )
            asked = {r.question for r in reports}
            fresh = [q for q in dict.fromkeys(decision.new_subtasks) if q and q not in asked]
            if decision.action != "delegate" or not fresh or round_no >= budget:
                return reports
            round_no += 1
            start = len(subtasks)
            new = [
                SubTask(id=f"t{start + i + 1}", question=q, round=round_no)
                for i, q in enumerate(fresh)
            ]
            subtasks.extend(new)
            await self._sink.emit("round_started", {"round": round_no, "count": len(new)})
            reports = reports + await self._research(new)

    async def _checkpoint(self, finished: list[ResearcherReport]) -> None:
        data: dict[str, Any] = {
            "request": self._request.model_dump(mode="json"),
            "subtasks": [t.model_dump(mode="json") for t in self._subtasks],
            "completed": [r.model_dump(mode="json") for r in finished],
        }
        await self._sink.checkpoint(data)

    async def _synthesize(self, reports: list[ResearcherReport]) -> RunResult:
        req = self._request
        title = synthesis.title_for(req.query)
        notes = []
        if self._llm.name == "extractive":
            notes.append(synthesis.EXTRACTIVE_NOTE)
        if any(r.search_degraded for r in reports):
            notes.append(synthesis.SEARCH_LIMITED_NOTE)
        ok = [r for r in reports if r.status == "ok" and r.findings]
        report: Report
        if not ok:
            reasons = [f"{r.subtask_id} {r.error or 'found nothing relevant'}" for r in reports]
            report = synthesis.no_answer_report(req.query, title, reasons, notes)
        else:
            await self._sink.emit("writing", {"reports": len(ok)})
            task = synthesis.write_task(req.query, ok)
            draft, replies = await call_structured(
                self._llm, build_request("writer", task, WriteDraft), WriteDraft
            )
            self._account("writer", replies)
            report, dropped = synthesis.report_from_draft(task, draft, title, notes)
            if dropped:
                await self._sink.emit("citations_dropped", {"count": dropped})
        if any(r.status == "ok" for r in reports):
            self._providers.setdefault("researcher", self._llm.name)
        return RunResult(
            request=req,
            status=report.status,
            report=report,
            usage=self._usage,
            providers={**self._providers, "search": ",".join(self._s.search.providers)},
            reason="" if ok else report.answer,
        )


def _injection(report: ResearcherReport, cap: int) -> str:
    """An earlier researcher's report as a note for a later one, capped in size."""
    lines = [f"Earlier finding on '{report.question}': {report.summary}"]
    lines += [f"- {f.text}" for f in report.findings]
    return "\n".join(lines)[:cap]
