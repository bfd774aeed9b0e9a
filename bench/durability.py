"""What durability costs: checkpointing overhead, and how long a resume takes.

1. The same deep run (injected provider latency, SEC corpus) with checkpoints on and off,
   interleaved ``--repeat`` times; prints the median ratio on/off (target <= 1.05).
2. A run interrupted at 80% progress (the driver's ``should_stop``, the same path as Ctrl-C),
   then resumed; prints resume time / uninterrupted run time (target <= 0.25: the resume redoes
   only the unfinished part; Ray is joined once, so every run finds the crew warm, as under
   ``serve`` or ``--address``), resume time / the time the run had left (near 1 when the resume
   repeats nothing: an unfinished sub-task reuses its query plan, searches and pages), and when
   the stop came as a share of the full run's time. 80% is the progress users see: the share of
   the run's time done as ``policies/lifecycle/progress.py`` estimates it (steps of about one call each,
   researchers counted by the span of their steps in ``max_parallel`` slots: with 5 sub-tasks and
   2 slots the last one, running alone, is a third of the research time), so the stop comes at
   about 0.8 of the run (a step later at most, plus the poll). Progress is polled four times a
   second, so with a small ``--latency`` the run may end before it can be interrupted: use
   ``--latency 0.4``.

3. A kill sweep: the same deep run, its driver (a ``deep-research run --address`` process joined
   to this Ray) killed with SIGKILL after k events, for ``--kill-points`` values of k spread over
   the whole run, each then resumed; prints how many resumed reports equal the uninterrupted
   run's above the footer (target: all), how many kills left an interrupted run (the rest came
   after the run had ended, its report written), and how many logs said ``run_finished`` for a
   run with no report (target: 0). ``--kill-points 0`` skips it.

    python bench/durability.py [--latency 0.1] [--repeat 3] [--kill-points 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from printout import show

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the run-file waits the tests use
from run_files import events_of, until  # noqa: E402

WAIT_S = 300.0
QUERY = "Compare the revenue of Apple, Amazon, Intel, Microsoft and Nvidia in 2023"


def flags_for(root: Path, docs: Path, latency: float, checkpoints: bool) -> dict[str, Any]:
    return {
        "corpus.path": docs,
        "corpus.cache_dir": root / "cache",
        "state_dir": root / "state",
        "run.output_dir": root / "out",
        "simulate.latency_s": latency,
        "run.mode": "deep",
        "run.checkpoints": checkpoints,
        "deep.max_parallel": 2,
    }


def settings_for(root: Path, docs: Path, latency: float, checkpoints: bool) -> Any:
    from deepresearch.config.settings import load_settings, overrides_from_flags

    flags = flags_for(root, docs, latency, checkpoints)
    return load_settings(None, overrides_from_flags(flags), env={})


def timed_run(settings: Any) -> float:
    from deepresearch.actors import crew
    from deepresearch.run import driver

    prep = driver.prepare(QUERY, "deep", settings)
    start = time.perf_counter()
    summary = driver.execute(prep, crew=crew)
    assert summary.status == "completed", summary.reason
    return time.perf_counter() - start


def interrupted_then_resumed(settings: Any, at_percent: int) -> tuple[float, float, int]:
    from deepresearch.actors import crew
    from deepresearch.errors import RunInterrupted
    from deepresearch.policies.lifecycle.progress import ProgressState, advance
    from deepresearch.run import driver
    from deepresearch.schemas import Event

    prep = driver.prepare(QUERY, "deep", settings)
    state = [ProgressState()]

    def on_events(events: list[Event]) -> None:
        for event in events:
            state[0] = advance(state[0], event)

    start = time.perf_counter()
    try:
        driver.execute(
            prep, on_events, should_stop=lambda: state[0].percent >= at_percent, crew=crew
        )
        raise SystemExit("the run finished before it could be interrupted")
    except RunInterrupted:
        first = time.perf_counter() - start
    resumed = driver.prepare_resume(prep.request.run_id, settings.resolved_state_dir())
    start = time.perf_counter()
    summary = driver.execute(resumed, crew=crew)
    assert summary.status == "completed", summary.reason
    return first, time.perf_counter() - start, state[0].percent


def killed_at(k: int, flags: dict[str, Any], address: str) -> Path:
    """A ``deep-research run --address`` of the query, SIGKILLed once its run logged ``k``
    events; its run folder once its run host recorded the ending."""
    env = {key: v for key, v in os.environ.items() if not key.startswith("DEEP_RESEARCH_")}
    env.update({"DEEP_RESEARCH_" + f.upper().replace(".", "__"): str(v) for f, v in flags.items()})
    env["RAY_AUTH_MODE"] = "disabled"
    runs = Path(flags["state_dir"]) / "runs"
    known = set(runs.iterdir())
    exe = Path(sys.executable).parent / "deep-research"
    args = [str(exe), "run", QUERY, "--address", address, "--json"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run_dir: Path = until(
            lambda: next(iter(set(runs.iterdir()) - known), None), "a run", WAIT_S
        )
        until(lambda: len(events_of(run_dir)) >= k or proc.poll() is not None, f"event {k}", WAIT_S)
    finally:
        proc.kill()
        proc.wait()
    # the host saw its driver die
    until((run_dir / "summary.json").exists, "the ending recorded", WAIT_S)
    return run_dir


def kill_sweep(root: Path, docs: Path, latency: float, points: int) -> dict[str, int]:
    """Kill a run's driver after k events for ``points`` values of k over the whole run,
    resume each, and count the resumed reports equal to the uninterrupted one."""
    import ray
    from report_checks import body_of

    from deepresearch.actors import crew
    from deepresearch.run import driver

    flags = flags_for(root, docs, latency, True)
    settings = settings_for(root, docs, latency, True)
    full = driver.execute(driver.prepare(QUERY, "deep", settings), crew=crew)
    expected = body_of(Path(full.report_path or "").read_text())
    total = len(events_of(settings.resolved_state_dir() / "runs" / full.run_id))
    address = ray.get_runtime_context().gcs_address
    counts = {"kill_points": points, "matched": 0, "interrupted": 0, "finished_without_report": 0}
    for i in range(1, points + 1):
        k = 2 + (total - 2) * i // (points + 1)
        run_dir = killed_at(k, flags, address)
        summary = json.loads((run_dir / "summary.json").read_text())
        said = any(e["type"] == "run_finished" for e in events_of(run_dir))
        report = summary.get("report_path")
        if said and not (report and Path(report).is_file()):
            counts["finished_without_report"] += 1
        if summary["status"] == "interrupted":
            counts["interrupted"] += 1
            resumed = driver.execute(driver.prepare_resume(run_dir.name, root / "state"), crew=crew)
            report = resumed.report_path
        same = bool(report) and body_of(Path(report).read_text()) == expected
        counts["matched"] += same
        print(
            f"killed after {k} of {total} events: {summary['status']}, "
            f"resumed report {'equal' if same else 'DIFFERENT'}",
            file=sys.stderr,
        )
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kill-points", type=int, default=10)
    parser.add_argument("--sweep-only", action="store_true", help="only the kill sweep (3.)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ["RAY_AUTH_MODE"] = "disabled"
    from deepresearch.cluster import runtime
    from deepresearch.run import driver

    result: dict[str, Any] = {"latency_s": args.latency}
    with tempfile.TemporaryDirectory(prefix="dr-durability-") as tmp:
        root = Path(tmp)
        (root / "out").mkdir()
        on = settings_for(root, args.docs, args.latency, True)
        driver.build_index(on)
        conn = runtime.connect(on.ray)
        try:
            if not args.sweep_only:
                result.update(overhead_and_resume(root, args.docs, args.latency, args.repeat))
            if args.kill_points > 0:
                result["kill_sweep"] = kill_sweep(root, args.docs, args.latency, args.kill_points)
        finally:
            runtime.disconnect(conn)
    result["targets"] = {
        "checkpoint_overhead_ratio": 1.05,
        "resume_over_full_run": 0.25,
        "kill_sweep.matched": "= kill_points",
        "kill_sweep.finished_without_report": 0,
    }
    show(result, args.json)


def overhead_and_resume(root: Path, docs: Path, latency: float, repeat: int) -> dict[str, Any]:
    """Parts 1 and 2: checkpoint overhead, and a resume from 80 %."""
    on = settings_for(root, docs, latency, True)
    off = settings_for(root, docs, latency, False)
    timed_run(on)  # warm-up: worker processes, caches
    with_cp, without_cp = [], []
    for i in range(repeat):
        with_cp.append(timed_run(on))
        without_cp.append(timed_run(off))
        print(
            f"round {i + 1}: checkpoints on {with_cp[-1]:.2f}s, off {without_cp[-1]:.2f}s",
            file=sys.stderr,
        )
    first, resume_s, pct = interrupted_then_resumed(on, 80)
    print(f"interrupted at {pct}% after {first:.2f}s; resume took {resume_s:.2f}s", file=sys.stderr)
    full = statistics.median(with_cp)
    return {
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
    }


if __name__ == "__main__":
    main()
