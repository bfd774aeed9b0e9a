"""The progress file is rendered at most once per interval, and nothing finished is left out:
a finish within the interval is shown by one render when it ends, or when the run ends."""

from __future__ import annotations

import pytest
from fake_clock import FakeClock
from list_sink import ListSink

from deepresearch.per_run import progress_file
from deepresearch.per_run.latency_hiding import Background
from deepresearch.per_run.progress_file import ProgressFile
from deepresearch.policies.lifecycle import partial_pace
from deepresearch.policies.lifecycle.partial_pace import Pace
from deepresearch.schemas import ResearcherReport


def test_a_finish_within_the_interval_waits_for_its_end_and_later_ones_join_it() -> None:
    pace, delay = partial_pace.finished(Pace(), 10.0, every_s=2.0)
    assert delay == 0.0  # the first finish is rendered at once
    pace, delay = partial_pace.finished(pace, 10.5, every_s=2.0)
    assert delay == pytest.approx(1.5)  # due when the interval since the last render ends
    pace, delay = partial_pace.finished(pace, 11.0, every_s=2.0)
    assert delay is None  # the render already due shows it too
    pace = partial_pace.rendered(12.0)
    assert partial_pace.finished(pace, 14.5, every_s=2.0)[1] == 0.0  # a quiet spell: at once


def _report(n: int) -> ResearcherReport:
    return ResearcherReport(subtask_id=f"t{n}", question=f"Question {n}?", summary="")


async def test_finishes_in_a_burst_render_twice_and_the_last_render_shows_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rendering verifies every finished report: five finishes in a burst render once at once
    and once when the run settles (not five times), and the file lists every one of them."""
    clock, sink, reports = FakeClock(100.0), ListSink(), []
    rendered: list[int] = []

    def render(query: str, finished: list[ResearcherReport], min_support: float) -> str:
        rendered.append(len(finished))
        return "\n".join(r.question for r in finished)

    monkeypatch.setattr(progress_file, "partial_markdown", render)
    background = Background(sink)
    progress = ProgressFile("Q?", lambda: reports, 0.5, background, sink, clock)
    for n in range(1, 6):
        reports.append(_report(n))
        progress.changed()
        await background.flush()  # each render done before the next finish
        clock.now += 0.3
    assert rendered == [1]
    progress.render_due_now()  # the run ends with a render due
    await background.flush()
    assert rendered == [1, 5]
    assert sink.files[progress_file.NAME].splitlines() == [f"Question {n}?" for n in range(1, 6)]
    progress.render_due_now()  # nothing due: nothing more
    await background.flush()
    assert rendered == [1, 5]


async def test_a_rounds_last_finish_renders_at_once_so_the_runs_end_waits_for_no_render(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When no researcher is left running the run goes on to evaluate or write: the render
    showing every finish (the due one's too) starts then, not when the run ends."""
    clock, sink, reports = FakeClock(100.0), ListSink(), []
    rendered: list[int] = []

    def render(query: str, finished: list[ResearcherReport], min_support: float) -> str:
        rendered.append(len(finished))
        return ""

    monkeypatch.setattr(progress_file, "partial_markdown", render)
    background = Background(sink)
    progress = ProgressFile("Q?", lambda: reports, 0.5, background, sink, clock)
    for n, last in ((1, False), (2, False), (3, True)):
        reports.append(_report(n))
        progress.changed(last=last)
        await background.flush()
        clock.now += 0.3
    assert rendered == [1, 3]
    progress.render_due_now()  # nothing is due any more
    await background.flush()
    assert rendered == [1, 3]
    assert partial_pace.finished(Pace(100.0, due=True), 100.1, 2.0, last=True)[1] == 0.0


async def test_a_host_holding_many_runs_paces_each_runs_renders_further_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every run a host holds renders on its one event loop: with 32 runs a finish 3 s after
    the last render waits (the interval is 16 s), while with one run it renders at once."""
    assert partial_pace.interval(1) == partial_pace.interval(4) == partial_pace.EVERY_S
    assert partial_pace.interval(32) == 8 * partial_pace.EVERY_S
    rendered: list[int] = []

    def render(query: str, finished: list[ResearcherReport], min_support: float) -> str:
        rendered.append(len(finished))
        return ""

    monkeypatch.setattr(progress_file, "partial_markdown", render)
    for runs, expected in ((32, [1]), (1, [1, 2])):
        clock, sink, reports = FakeClock(100.0), ListSink(), []
        rendered.clear()
        background = Background(sink)
        progress = ProgressFile(
            "Q?",
            reports.copy,
            0.5,
            background,
            sink,
            clock,
            lambda r=runs: partial_pace.interval(r),
        )
        for n in (1, 2):
            reports.append(_report(n))
            progress.changed()
            await background.flush()
            clock.now += 3.0
        assert rendered == expected
        progress.render_due_now()  # a render still due is done now: nothing left out
        await background.flush()
        assert rendered == [1, 2]
