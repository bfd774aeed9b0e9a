"""The Coordinator, a plain object the run host holds for each run: feeds events into the lifecycle
reducer and performs its commands.

Every rule (parallelism, injection, steering, rounds, the crash retry, the time and cost limits,
writing or declining, the honest stop) lives in ``policies.lifecycle``; this shell only turns
commands into researcher runs, evaluator and writer calls, and turns their outcomes (and the
run's spend) back into events; what it sends without waiting goes through one ``Background``.
Children come from a ``Spawner`` so the same code runs on Ray or in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from deepresearch import schemas
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError, ProviderError
from deepresearch.llm_messages import LLMReply
from deepresearch.per_run import planning
from deepresearch.per_run.event_log import EventSink
from deepresearch.per_run.latency_hiding import Background
from deepresearch.per_run.ports import EvaluatorPort, ResearcherPort, Spawner
from deepresearch.per_run.progress_file import ProgressFile
from deepresearch.per_run.writer import ReportWriter
from deepresearch.policies.follow_up import reuse
from deepresearch.policies.lifecycle import checkpoint, evaluation, progress
from deepresearch.policies.lifecycle import reducer as lc
from deepresearch.policies.synthesis import synthesis
from deepresearch.policies.verification.citations import usable_sources
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.pricing import usage_of
from deepresearch.schemas import FollowUpSeed, Request, ResearcherReport, RunResult, SubTask, Usage


class Coordinator:
    def __init__(
        self,
        settings: Settings,
        request: Request,
        sink: EventSink,
        llm: LLMProvider,
        spawner: Spawner,
        evaluator: EvaluatorPort | None = None,
        resume: dict[str, Any] | None = None,
        follow_up: FollowUpSeed | None = None,
        prior: Mapping[str, schemas.PriorWork] | None = None,
        progress_pace: Callable[[], float] | None = None,  # ``ProgressFile``'s pace
    ) -> None:
        self._resume = resume
        self._prior = dict(prior or {})  # what unfinished sub-tasks had done before a resume
        self._seed = follow_up  # an earlier run's reports (its texts are in the UrlPool)
        self._question = reuse.research_question(request.query, follow_up)
        self._plan_limits: tuple[str, ...] = ()  # agenda items the planner's cap left out
        self._s = settings
        self._request = request
        # Events, checkpoints, the progress file and steering never hold up the lifecycle.
        self._sink = Background(sink)
        self._llm = llm
        self._spawner = spawner
        self._evaluator = evaluator
        self._usage = Usage()
        self._providers: dict[str, str] = {}
        self._fell_back: dict[str, str] = {}  # role -> its first fallback's note (not researchers)
        self._subtasks: dict[str, SubTask] = {}
        self._reports: dict[str, ResearcherReport] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._current: dict[str, ResearcherPort] = {}  # the researcher serving each sub-task
        self._events: asyncio.Queue[lc.LifecycleEvent] = asyncio.Queue()
        self._result: RunResult | None = None
        self._saved: lc.LifecycleState | None = None  # the state last checkpointed
        min_support = settings.verify.min_support
        self._partial = ProgressFile(
            request.query, self._ordered, min_support, self._sink, sink, every_s=progress_pace
        )
        deep_mode = request.mode == "deep"
        self._writer = ReportWriter(
            settings, self._question, deep_mode, self._sink, llm, self._account, self._charge
        )

    # ------------------------------------------------------------------ the loop

    async def run(self) -> RunResult:
        req = self._request
        # A user-fixed agenda (Request.plan) is researched as given: no evaluator rounds add to it.
        deep = req.mode == "deep" and self._evaluator is not None and not req.plan
        state = lc.for_run(self._s, req.mode == "quick", deep)
        planned = req.mode == "deep" and not req.plan  # the planner's call is a step of the run
        commands: list[lc.Command] = []
        if self._resume is not None:
            state = self._restore(self._resume)
            done = {
                "status": state.status,
                "completed": len(self._reports),
                # what the completed sub-tasks read and kept: the live line starts from it
                "sources": sum(len(report.sources) for report in self._reports.values()),
            }
            steps = progress.budget(self._s, deep, planned, state.round - 1, state.max_parallel)
            await self._sink.emit("run_resumed", {**done, "count": len(self._subtasks), **steps})
            state, commands = lc.resume(state, self._subtasks)
        else:
            await self._sink.emit("run_started", reuse.started_event(req, self._question))
        timer = asyncio.get_running_loop().call_later(
            self._s.run.max_time_s, self._events.put_nowait, lc.LimitReached("time")
        )
        try:
            if state.status == "planning":
                plan = await self._plan()  # the crew is up before a run opens: nothing to wait for
                await self._sink.emit(
                    "plan_ready",
                    {
                        "subtasks": [t.question for t in plan],
                        "count": len(plan),
                        "target_rounds": self._s.deep.target_rounds if deep else 1,
                        **progress.budget(self._s, deep, planned, slots=state.max_parallel),
                    },
                )
                state, commands = lc.reduce(state, lc.PlanReady(tuple(plan)))
            while True:
                self._adopt(commands)
                await self._save(state)
                for command in commands:
                    await self._perform(command, state)
                if state.terminal:
                    break
                state, commands = lc.reduce(state, await self._events.get())
        except BaseException:
            await self._cancel_all("run ended", timer)
            self._partial.render_due_now()
            with contextlib.suppress(Exception):  # what was emitted before the error still lands
                await self._sink.flush()
            self._spawner.close()
            raise
        await self._cancel_all("run ended", timer)
        assert self._result is not None
        self._partial.render_due_now()  # the progress file covers every finished report
        try:
            # Every checkpoint, file and note landed before the end. ``run_finished`` is not the
            # coordinator's to say: only whoever wrote the report file does (``driver.execute``),
            # so the log never says a run completed whose report is not on disk.
            await self._sink.flush()
        finally:  # stopping the researchers' processes takes CPU: only once the run has ended
            self._spawner.close()
        return self._result

    def _restore(self, data: dict[str, Any]) -> lc.LifecycleState:
        """Completed work from a checkpoint: it is never redone."""
        restored = checkpoint.restore(data)
        self._subtasks = restored.subtasks
        self._reports.update(restored.reports)
        self._usage = restored.usage
        self._providers = restored.providers
        self._fell_back = restored.fell_back
        self._plan_limits = restored.plan_limits
        return restored.state

    async def _perform(self, command: lc.Command, state: lc.LifecycleState) -> None:
        match command:
            case lc.SpawnResearcher(subtask, inject):
                if not await self._reuse(subtask):
                    self._start(subtask, inject)
            case lc.RetryResearcher(sid, inject):
                await self._sink.emit("researcher_retry", {"subtask": sid})
                self._start(self._subtasks[sid], inject)
            case lc.NewRound(round_no, subtasks):
                await self._sink.emit("round_started", {"round": round_no, "count": len(subtasks)})
            case lc.Steer(target, source):
                if target in self._current and source in self._reports:
                    note = synthesis.steering_note(self._reports[source])
                    self._sink.submit(_steer(self._current[target], note))
            case lc.Evaluate(round_no, max_rounds):
                await self._evaluate(round_no, max_rounds)
            case lc.CancelResearchers(reason):
                await self._cancel_all(reason)
            case lc.Synthesize(limited_by) | lc.Decline(limited_by):
                decline = isinstance(command, lc.Decline)
                self._result = await self._synthesize(limited_by, decline)
                self._events.put_nowait(lc.Synthesized())
            case lc.Stop(reason):
                unreachable = synthesis.model_failure(self._ordered())
                if unreachable is not None:  # the same ending as a planner that cannot reach it
                    raise ProviderError("llm", unreachable.removeprefix("llm: "))
                self._result = await self._synthesize(state.limited_by, True, reason)

    def _adopt(self, commands: Sequence[lc.Command]) -> None:
        """A delegated round's sub-tasks join the plan before the step is checkpointed."""
        for command in commands:
            if isinstance(command, lc.NewRound):
                self._subtasks.update((t.id, t) for t in command.subtasks)

    def _account(self, role: str, replies: Sequence[LLMReply]) -> None:
        for reply in replies:
            self._providers[role] = reply.provider
            if reply.fell_back:
                self._fell_back.setdefault(role, reply.fell_back)
        self._charge(replies)

    def _charge(self, replies: Sequence[LLMReply]) -> None:
        self._usage = self._usage + usage_of(replies, self._s.llm.prices)
        self._events.put_nowait(lc.Charged(self._usage.cost_usd))

    def _only_extractive(self, reports: Sequence[ResearcherReport]) -> bool:
        return synthesis.only_extractive(reports, self._providers, self._llm.name)

    # ------------------------------------------------------------------ commands

    async def _plan(self) -> list[SubTask]:
        query = self._question
        if self._request.mode == "quick":
            tasks = [SubTask(id="t1", question=query)]
        else:
            questions = list(self._request.plan)  # a reviewed agenda replaces the planner
            if not questions:
                proposal = await planning.propose(self._llm, query, self._s)
                self._account("planner", proposal.replies)
                questions, self._plan_limits = proposal.questions, proposal.limits()
                if proposal.dropped:
                    await self._sink.emit("plan_capped", proposal.event())
            tasks = [SubTask(id=f"t{i + 1}", question=q) for i, q in enumerate(questions)]
        self._subtasks.update((t.id, t) for t in tasks)
        return tasks

    async def _reuse(self, subtask: SubTask) -> bool:
        """Deep mode of a follow-up: only what is new is researched. A sub-question an earlier
        report already answers takes that report (its cost was paid by the earlier run) and
        finishes at once; False when there is none."""
        if self._seed is None or self._request.mode != "deep":
            return False
        threshold = self._s.follow_up.match_threshold
        earlier = reuse.matching_report(subtask.question, self._seed.reports, threshold)
        if earlier is None:
            return False
        await self._sink.emit("subtask_reused", reuse.reused_event(subtask, self._seed, earlier))
        await self._finish(reuse.reused_report(subtask, earlier))
        return True

    def _earlier_notes(self) -> list[str]:
        """A follow-up's researchers start from the earlier findings (capped)."""
        if self._seed is None:
            return []
        planned = [t.question for t in self._subtasks.values() if t.round == 1]
        deep = self._request.mode == "deep"
        cap = self._s.researcher.report_cap_chars
        return reuse.earlier_notes(
            self._seed.reports, planned if deep else [], self._s.follow_up, cap
        )

    def _start(self, subtask: SubTask, inject: tuple[str, ...]) -> None:
        cap = self._s.researcher.report_cap_chars
        notes = self._earlier_notes()  # oldest first: the newest note steers queries most
        notes += [reuse.injection_note(self._reports[i], cap) for i in inject if i in self._reports]
        limit = self._s.researcher.max_time_s * 1.5 + 5.0  # hard stop if the watchdog cannot run

        async def work() -> None:
            """One researcher run; its outcome (and whether its process died) goes to the reducer."""
            report, crashed = synthesis.failed_report(subtask, "cancelled"), False
            researcher = self._spawner.acquire()
            self._current[subtask.id] = researcher
            healthy = False
            try:
                prior = self._prior.get(subtask.id)
                report = await asyncio.wait_for(researcher.run(subtask, notes, prior), limit)
                healthy = report.status == "ok"
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # a dead actor or a bug: isolated to this sub-task
                reason = str(exc) if isinstance(exc, DeepResearchError) else type(exc).__name__
                if isinstance(exc, TimeoutError):
                    reason = f"timed out after {limit:.0f}s"
                crashed = self._spawner.crashed(exc)
                await self._sink.emit(
                    "researcher_failed",
                    {"subtask": subtask.id, "error": reason, "crashed": crashed},
                )
                report = synthesis.failed_report(subtask, reason)
            finally:
                self._spawner.release(researcher, healthy)
            self._running.pop(subtask.id, None)
            self._current.pop(subtask.id, None)
            await self._finish(report, crashed)

        self._running[subtask.id] = asyncio.create_task(work())

    async def _finish(self, report: ResearcherReport, crashed: bool = False) -> None:
        """Record an outcome (a retry's replaces its crash); the spend goes in after it."""
        sid = report.subtask_id
        self._reports[sid] = report
        self._usage = self._usage + report.usage
        self._partial.changed(last=not self._running)
        cited = tuple(usable_sources([report]))
        if report.status == "ok":
            self._events.put_nowait(lc.ResearcherFinished(sid, cited))
        else:
            partial = bool(report.findings)
            self._events.put_nowait(lc.ResearcherFailed(sid, report.error, partial, crashed, cited))
        self._events.put_nowait(lc.Charged(self._usage.cost_usd))

    async def _cancel_all(self, reason: str, timer: asyncio.TimerHandle | None = None) -> None:
        if timer is not None:
            timer.cancel()
        # Said once per researcher: one cancelled before it ever ran stays listed (done), one
        # whose cancel is still under way (this call itself cancelled) is not cancelled again.
        tasks = [task for task in self._running.values() if not task.done()]
        fresh = [task for task in tasks if not task.cancelling()]
        for task in fresh:
            task.cancel()
        if fresh:
            await self._sink.emit("researchers_cancelled", {"count": len(fresh), "reason": reason})
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _evaluate(self, round_no: int, max_rounds: int) -> None:
        assert self._evaluator is not None
        task = evaluation.evaluate_task(self._question, self._ordered(), round_no, max_rounds)
        decision, replies = await self._evaluator.evaluate(task)
        self._account("evaluator", replies)
        new = evaluation.new_subtasks(decision, list(self._subtasks.values()), round_no)
        await self._sink.emit(
            "evaluated",
            {
                "round": round_no,
                "action": decision.action,
                "reason": decision.reason,
                "new_subtasks": [t.question for t in new],
            },
        )
        self._events.put_nowait(lc.Evaluated(decision.action, new))

    def _ordered(self) -> list[ResearcherReport]:
        """Reports in plan order, whatever order they finished in: reports are deterministic."""
        order = {sid: i for i, sid in enumerate(self._subtasks)}
        return sorted(self._reports.values(), key=lambda r: order.get(r.subtask_id, len(order)))

    async def _save(self, state: lc.LifecycleState) -> None:
        """Checkpoint after every lifecycle step: resume continues from exactly here.

        Written in the background while the step's commands run (a crash meanwhile resumes from
        the step before, as a crash just before the save always did; a newer state replaces one
        still waiting); a failed write stops the run at the next step, and the run ends only
        once the last one landed. An event the reducer ignored changes nothing to save.
        A ``done`` state is not written: the report exists by then and nothing resumes from it
        (a run that dies before its summary is saved resumes from ``synthesizing`` and writes the
        report again), so its fsyncs would only delay the end of every run."""
        if not self._s.run.checkpoints or state.status == "done" or state is self._saved:
            return
        self._saved = state
        self._sink.check()
        await self._sink.checkpoint(
            checkpoint.payload(
                self._request,
                state,
                list(self._subtasks.values()),
                self._ordered(),
                self._usage,
                self._providers,
                self._plan_limits,
                self._fell_back,
            )
        )

    async def _synthesize(
        self, limited_by: lc.Limit | None, decline: bool, stop_reason: str = ""
    ) -> RunResult:
        """The report: written from the findings, or (``decline``, the reducer's call) the
        honest could-not-research report."""
        req = self._request
        title = synthesis.title_for(req.query)
        reports = self._ordered()
        notes = []
        if self._seed is not None:
            notes.append(reuse.follow_up_note(self._seed.query, self._seed.report_name))
        if self._only_extractive(reports):
            notes.append(synthesis.EXTRACTIVE_NOTE)
        if any(r.search_degraded for r in reports):
            notes.append(synthesis.SEARCH_LIMITED_NOTE)
        usable = [r for r in reports if r.findings]
        # a stop says in its own words which limit ended it: no "built from what was read" note
        ended = None if stop_reason else limited_by
        limits = self._plan_limits + synthesis.limit_notes(ended, reports)
        limits += () if decline else synthesis.uncovered_notes(req.query, usable)
        if decline:
            report = await self._writer.decline(title, reports, usable, notes, stop_reason)
        else:
            report = await self._writer.write(
                title, usable, notes, lambda: self._only_extractive(reports)
            )
        fell_back = synthesis.fallback_notes(self._fell_back, reports)
        report = report.model_copy(update={"limits": limits, "notes": (*report.notes, *fell_back)})
        researcher_tiers = sorted({p for r in reports for p in r.answered_by})
        if researcher_tiers:
            self._providers["researcher"] = ",".join(researcher_tiers)
        return RunResult(
            request=req,
            status=report.status,
            report=report,
            usage=self._usage,
            providers={**self._providers, "search": ",".join(self._s.search.providers)},
            reason="" if report.status == "completed" else report.answer.split("\n", 1)[0],
            limited_by=limited_by,
        )


async def _steer(researcher: ResearcherPort, note: str) -> None:
    with contextlib.suppress(Exception):  # a dying researcher cannot be steered
        await researcher.steer(note)
