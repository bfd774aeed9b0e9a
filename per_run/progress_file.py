"""``report.partial.md``: what the finished researchers found so far, rendered in the background.

A render verifies every finished report in a worker thread (``partial_markdown``), so
finishes are paced (``policies.partial_pace``): at most one render per interval, a round's last
finish at once, and a render still due when the run ends happens then, so the file covers every
finished report. Its failure is an event, never the end of the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from deepresearch.per_run.event_log import EventSink
from deepresearch.per_run.latency_hiding import Background
from deepresearch.policies.lifecycle import partial_pace
from deepresearch.policies.synthesis import synthesis
from deepresearch.policies.verification import verify
from deepresearch.reports.markdown import render_body
from deepresearch.schemas import Report, ReportSection, ResearcherReport

NAME = "report.partial.md"


class ProgressFile:
    def __init__(
        self,
        query: str,
        reports: Callable[[], Sequence[ResearcherReport]],
        min_support: float,
        sink: Background,
        log: EventSink,
        clock: Callable[[], float] = time.monotonic,
        every_s: Callable[[], float] | None = None,
    ) -> None:
        self._query = query
        self._every_s = every_s or (lambda: partial_pace.EVERY_S)  # ``partial_pace.interval``
        self._reports = reports
        self._min_support = min_support
        self._sink = sink  # events and the render's turn, in order
        self._log = log  # the file itself is written when the render's turn comes
        self._clock = clock
        self._pace = partial_pace.Pace()
        self._timer: asyncio.TimerHandle | None = None

    def changed(self, last: bool = False) -> None:
        """A researcher finished (``last``: none is left running): render now, or when the
        interval since the last render ends."""
        now, every_s = self._clock(), self._every_s()
        self._pace, delay = partial_pace.finished(self._pace, now, every_s, last=last)
        if delay == 0:
            if self._timer is not None:  # this render shows what the due one would have
                self._timer.cancel()
                self._timer = None
            self._sink.later(self._write)
        elif delay is not None:
            self._timer = asyncio.get_running_loop().call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        self._pace = partial_pace.rendered(self._clock())
        self._sink.later(self._write)

    def render_due_now(self) -> None:
        """The run ends: a render still due is asked for now (flushing the sink writes it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._due()

    async def _write(self) -> None:
        try:
            args = (self._query, list(self._reports()), self._min_support)
            markdown = await asyncio.to_thread(partial_markdown, *args)
            await self._log.write_text(NAME, markdown)
        except Exception as exc:  # a progress file must never stall the lifecycle
            await self._sink.emit("partial_report_failed", {"error": type(exc).__name__})


def partial_markdown(
    query: str, reports: Sequence[ResearcherReport], min_support: float = 0.5
) -> str:
    """``report.partial.md``: what the finished researchers found so far, readable mid-run."""
    usable = [r for r in reports if r.findings]
    sources = tuple(synthesis.merged_sources(usable))
    draft = Report(
        query=query,
        title=f"{synthesis.title_for(query)} (in progress)",
        answer="",
        sections=tuple(ReportSection(heading=r.question, findings=r.findings) for r in usable),
        sources=sources,
    )
    # The researchers' findings are model text: only the sentences their own cited passages
    # support are shown before the writer's verified report exists.
    evidence = verify.evidence_index(usable)
    checked = verify.check_report(draft, evidence, min_support)
    report, _ = verify.finalize(checked, {}, evidence, sources, min_support)
    report = report.model_copy(
        update={
            "answer": f"Research in progress: {len(reports)} sub-question(s) finished so far.",
            "status": "completed",
            "limits": synthesis.limit_notes(None, reports),
            "verification": None,
        }
    )
    return render_body(report)
