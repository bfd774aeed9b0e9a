"""When ``report.partial.md`` is rendered again: at most once per interval, nothing left out.

Rendering the progress file verifies every finished researcher's findings against all their
evidence (``progress_file.partial_markdown``), so each render of a run costs more than the one before,
and a run host renders for every run it holds. A finish within ``every_s`` of the last render is
not rendered at once: one render when the interval ends covers it and every finish after it. The
last finish while none is left running is rendered at once (with any finish due): the run moves
on to evaluation or writing, which the render overlaps, instead of holding up the run's end. The
file shows what had finished when it was rendered, as before, only less often.
"""

from __future__ import annotations

from dataclasses import dataclass

EVERY_S = 2.0  # at most one render of a run's progress file per this many seconds
RUNS_AT_BASE_PACE = 4  # a host holding more runs than this paces each one's renders further apart


@dataclass(frozen=True)
class Pace:
    rendered_at: float | None = None  # when the last render was asked for
    due: bool = False  # a render is due when the interval ends (finishes since the last)


def finished(
    pace: Pace, now: float, every_s: float = EVERY_S, *, last: bool = False
) -> tuple[Pace, float | None]:
    """A researcher finished at ``now`` (``last``: no other is running): the delay before the
    render that shows it (0: render now), or None when the render already due will show it."""
    if pace.due and not last:
        return pace, None
    if last or pace.rendered_at is None or now - pace.rendered_at >= every_s:
        return Pace(rendered_at=now), 0.0
    return Pace(pace.rendered_at, due=True), pace.rendered_at + every_s - now


def rendered(now: float) -> Pace:
    """The due render was asked for at ``now``."""
    return Pace(rendered_at=now)


def interval(runs: int, every_s: float = EVERY_S) -> float:
    """The interval for each run of a host holding ``runs``: their renders share the host's one
    event loop (and GIL), so beyond ``RUNS_AT_BASE_PACE`` runs it stretches with their number and
    the host renders about as many files a second as with that many runs (32 runs rendering every
    2 s took a quarter of a busy host's time, and each render delays every other run's calls)."""
    return every_s * max(1.0, runs / RUNS_AT_BASE_PACE)
