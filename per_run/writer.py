"""The synthesis step of a run: the writer's draft, then the citation verifier and its one rewrite.

Split from the Coordinator because it is a sequence of its own (writer call with a model-free
fallback, draft → Report, verification, rewrite, final counts) that only needs the settings, the
event sink, the model and two callbacks to book usage. The Coordinator decides *whether* to
write; with too little to stand on, ``decline`` writes the honest could-not-research report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError
from deepresearch.llm_messages import LLMReply, LLMRequest, RewriteDraft, WriteDraft, WriteTask
from deepresearch.per_run.event_log import EventSink
from deepresearch.policies.synthesis import sufficiency, synthesis
from deepresearch.policies.verification import rewrite, verify
from deepresearch.policies.verification.citations import usable_sources
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.schemas import Report, ResearcherReport

Account = Callable[[str, Sequence[LLMReply]], None]  # role, replies: usage and which tier answered


class ReportWriter:
    def __init__(
        self,
        settings: Settings,
        query: str,
        deep: bool,
        sink: EventSink,
        llm: LLMProvider,
        account: Account,
        charge: Callable[[Sequence[LLMReply]], None],
    ) -> None:
        self._s = settings
        self._query = query
        self._deep = deep
        self._sink = sink
        self._llm = llm
        self._account = account
        self._charge = charge  # usage only: the model-free fallback answered, not the role's tier

    async def decline(
        self,
        title: str,
        reports: Sequence[ResearcherReport],
        usable: Sequence[ResearcherReport],
        notes: Sequence[str],
        stop_reason: str,
    ) -> Report:
        """Too little to stand on: say what was searched and what to try, cite nothing."""
        min_sources = self._s.run.min_sources
        await self._sink.emit(
            "insufficient_sources",
            {
                "usable": len(usable_sources(usable)),
                "min_sources": min_sources,
                "reason": stop_reason,
            },
        )
        corpus = self._s.corpus.path is not None
        ctx = sufficiency.SearchContext(
            providers=self._s.search.providers or (("local corpus",) if corpus else ()),
            corpus=corpus,
            deep=self._deep,
        )
        quiet = [n for n in notes if n != synthesis.EXTRACTIVE_NOTE]  # nothing is quoted
        return sufficiency.could_not_research(
            self._query, title, reports, min_sources, ctx, quiet, stop_reason
        )

    async def write(
        self,
        title: str,
        usable: Sequence[ResearcherReport],
        notes: list[str],
        only_extractive: Callable[[], bool],
    ) -> Report:
        """The verified Report from the researchers' findings. ``only_extractive`` is asked after
        the writer answered: a model-written report must not carry the extractive note."""
        await self._sink.emit("writing", {"reports": len(usable)})
        task = synthesis.write_task(self._query, usable)
        request = build_request("writer", task, WriteDraft)
        try:
            draft, replies = await call_structured(self._llm, request, WriteDraft)
        except DeepResearchError as exc:
            # Research is done and paid for: a writer that is over budget or down must not
            # lose it. The model-free writer quotes the findings instead, and says so.
            await self._sink.emit("writer_fallback", {"error": str(exc)[:200]})
            draft, replies = await call_structured(ExtractiveLLM(), request, WriteDraft)
            notes.append(f"The writer model was unavailable ({exc}); findings are quoted.")
        self._account("writer", replies)
        if not only_extractive():  # a model wrote it after all: no such note
            notes = [n for n in notes if n != synthesis.EXTRACTIVE_NOTE]
        checking = self._s.verify.enabled
        unknown = verify.unknown_ids(task, draft) if checking else []
        draft = verify.adopt_answer_markers(task, draft) if checking else draft
        report, dropped = synthesis.report_from_draft(task, draft, title, notes)
        if dropped:
            await self._sink.emit("citations_dropped", {"count": dropped})
        if checking and report.status == "completed":
            report = await self._verify(task, report, usable, [f"[{n}]" for n in unknown])
        if checking and self._s.verify.answer_floor and not only_extractive() and usable:
            report = await self._never_worse(task, title, notes, usable, report)
        return report

    async def _never_worse(
        self,
        task: WriteTask,
        title: str,
        notes: list[str],
        usable: Sequence[ResearcherReport],
        report: Report,
    ) -> Report:
        """The model's report, unless the extractive composer's Answer keeps more verified
        claims: a weak writer must not leave the user worse off than no model at all."""
        request = build_request("writer", task, WriteDraft)
        draft, replies = await call_structured(ExtractiveLLM(), request, WriteDraft)
        draft = verify.adopt_answer_markers(task, draft)
        composed, _ = synthesis.report_from_draft(task, draft, title, notes)
        if composed.status != "completed":
            self._charge(replies)
            return report
        composed = await self._verify(task, composed, usable, [], quiet=True)
        evidence = verify.evidence_index(usable)
        min_support = self._s.verify.min_support
        model_n = verify.verified_answer_claims(report, evidence, min_support)
        composer_n = verify.verified_answer_claims(composed, evidence, min_support)
        if composer_n <= model_n:
            self._charge(replies)
            return report
        self._account("writer", replies)  # the report shown is the composer's: Providers says so
        await self._sink.emit(
            "answer_replaced", {"model_verified": model_n, "composer_verified": composer_n}
        )
        note = synthesis.composer_note(model_n, composer_n)
        return composed.model_copy(update={"notes": (*composed.notes, note)})

    async def _verify(
        self,
        task: WriteTask,
        report: Report,
        reports: Sequence[ResearcherReport],
        removed: list[str],
        quiet: bool = False,
    ) -> Report:
        """Check every sentence against the passages the researchers cited; rewrite the failing
        ones once (the writer, or the model-free writer if it is down), drop what still fails.
        ``quiet``: the composer's report to compare with, by the model-free writer, unannounced."""
        vs = self._s.verify
        evidence = verify.evidence_index(reports)
        checked = verify.check_report(report, evidence, vs.min_support)
        rewrites: dict[int, verify.Rewrite] = {}
        if checked.failing() and vs.rewrite:
            rtask = rewrite.rewrite_task(self._query, checked, evidence, task)
            if not quiet:
                await self._sink.emit("rewriting", {"claims": len(rtask.claims)})
            rdraft = await self._rewrite(build_request("writer", rtask, RewriteDraft), quiet)
            rewrites, unknown = rewrite.rewrites_from_draft(rtask, rdraft)
            removed += [f"[{n}]" for n in unknown]
        final, dropped = verify.finalize(
            checked,
            rewrites,
            evidence,
            synthesis.merged_sources(reports),
            vs.min_support,
            removed,
        )
        counts = final.verification
        assert counts is not None
        if quiet:
            return final
        if counts.removed_ids:  # counted, not quoted: a bogus marker is not shown to anyone
            await self._sink.emit("citation_removed", {"count": len(counts.removed_ids)})
        for check in dropped:
            where = "answer" if check.claim.section == verify.ANSWER else "finding"
            await self._sink.emit("claim_dropped", {"where": where, "reason": check.reason[:200]})
        await self._sink.emit(
            "citation_verified",
            counts.model_dump(mode="json", exclude={"removed_ids"}),
        )
        return final

    async def _rewrite(self, request: LLMRequest, model_free: bool) -> RewriteDraft:
        """The writer's rewrite of the failing sentences; the model-free one's if it is down."""
        if not model_free:
            try:
                rdraft, replies = await call_structured(self._llm, request, RewriteDraft)
                self._account("writer", replies)
                return rdraft
            except DeepResearchError as exc:
                await self._sink.emit("rewrite_fallback", {"error": str(exc)[:200]})
        rdraft, replies = await call_structured(ExtractiveLLM(), request, RewriteDraft)
        self._charge(replies)
        return rdraft
