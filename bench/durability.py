"""What durability costs: checkpointing overhead, and how long a resume takes.

1. The same deep run (injected provider latency, SEC corpus) with checkpoints on and off,
   interleaved ``--repeat`` times; prints the median ratio on/off (target <= 1.05).
2. A run interrupted at 80% progress (the driver's ``should_stop``, the same path as Ctrl-C),
   then resumed; prints resume time / uninterrupted run time (target <= 0.25: the resume redoes
   only the unfinished part; Ray is joined once, so every run finds the crew warm, as under
   ``serve`` or ``--address``), resume time / the time the run had left (near 1 when the resume
   repeats nothing: an unfinished sub-task reuses its query plan, searches and pages), and when
   the stop came as a share of the full run's time. 80% is the progress users see: the share of
   the run's time done as ``policies/progress.py`` estimates it (steps of about one call each,
   researchers counted by the span of their steps in ``max_parallel`` slots: with 5 sub-tasks and
   2 slots the last one, running alone, is a third of the research time), so the stop comes at
   about 0.8 of the run (a step later at most, plus the poll). Progress is polled four times a
   second, so with a small ``--latency`` the run may end before it can be interrupted: use
   ``--latency 0.4``.

    python bench/durability.py [--latency 0.1] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from printout import show

REPO = Path(__file__).resolve().parents[1]
QUERY = "Compare the revenue of Apple, Amazon, Intel, Microsoft and Nvidia in 2023"


def settings_for(root: Path, docs: Path, latency: float, checkpoints: bool) -> Any:
    from deepresearch.config.settings import load_settings, overrides_from_flags

    flags = {
        "corpus.path": docs,
        "corpus.cache_dir": root / "cache",
        "state_dir": root / "state",
        "run.output_dir": root / "out",
        "simulate.latency_s": latency,
        "run.mode": "deep",
        "run.checkpoints": checkpoints,
        "deep.max_parallel": 2,
    }
    return load_settings(None, overrides_from_flags(flags), env={})


def timed_run(settings: Any) -> float:
    from deepresearch import driver

    prep = driver.prepare(QUERY, "deep", settings)
    start = time.perf_counter()
    summary = driver.execute(prep)
    assert summary.status == "completed", summary.reason
    return time.perf_counter() - start


def interrupted_then_resumed(settings: Any, at_percent: int) -> tuple[float, float, int]:
    from deepresearch import driver
    from deepresearch.errors import RunInterrupted
    from deepresearch.policies.progress import ProgressState, advance
    from deepresearch.schemas import Event

    prep = driver.prepare(QUERY, "deep", settings)
    state = [ProgressState()]

    def on_events(events: list[Event]) -> None:
        for event in events:
            state[0] = advance(state[0], event)

    start = time.perf_counter()
    try:
        driver.execute(prep, on_events, should_stop=lambda: state[0].percent >= at_percent)
        raise SystemExit("the run finished before it could be interrupted")
    except RunInterrupted:
        first = time.perf_counter() - start
    resumed = driver.prepare_resume(prep.request.run_id, settings.resolved_state_dir())
    start = time.perf_counter()
    summary = driver.execute(resumed)
    assert summary.status == "completed", summary.reason
    return first, time.perf_counter() - start, state[0].percent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ["RAY_AUTH_MODE"] = "disabled"
    from deepresearch import driver, runtime

    with tempfile.TemporaryDirectory(prefix="dr-durability-") as tmp:
        root = Path(tmp)
        (root / "out").mkdir()
        on = settings_for(root, args.docs, args.latency, True)
        off = settings_for(root, args.docs, args.latency, False)
        driver.build_index(on)
        conn = runtime.connect(on.ray)
        try:
            timed_run(on)  # warm-up: worker processes, caches
            with_cp, without_cp = [], []
            for i in range(args.repeat):
                with_cp.append(timed_run(on))
                without_cp.append(timed_run(off))
                print(
                    f"round {i + 1}: checkpoints on {with_cp[-1]:.2f}s, off {without_cp[-1]:.2f}s",
                    file=sys.stderr,
                )
            first, resume_s, pct = interrupted_then_resumed(on, 80)
            print(
                f"interrupted at {pct}% after {first:.2f}s; resume took {resume_s:.2f}s",
                file=sys.stderr,
            )
        finally:
            runtime.disconnect(conn)
    full = statistics.median(with_cp)
    result = {
        "latency_s": args.latency,
        "run_with_checkpoints_s": round(full, 3),
        "run_without_checkpoints_s": round(statistics.median(without_cp), 3),
        "checkpoint_overhead_ratio": round(full / statistics.median(without_cp), 3),
        "interrupted_at_percent": pct,
        "resume_s": round(resume_s, 3),
        "resume_over_full_run": round(resume_s / full, 3),
        # what the interrupted run had left (its full time less the time before the stop):
        # near 1 when the resume redoes nothing the checkpoint holds
        "resume_over_time_left": round(resume_s / max(full - first, 1e-9), 3),
        "stopped_at_share_of_run": round(first / full, 3),  # when the percent reached 80
        "targets": {"checkpoint_overhead_ratio": 1.05, "resume_over_full_run": 0.25},
    }
    show(result, args.json)


if __name__ == "__main__":
    main()
