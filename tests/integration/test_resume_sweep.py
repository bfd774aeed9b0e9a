"""A deep run stopped at every k-th event, k spread over the whole run, then resumed: each resumed
report equals the uninterrupted run's byte for byte above the footer, and the event log never
says ``completed`` for a run whose report is not on disk.

Through the CLI the driver is killed (SIGKILL, a real ``deep-research run --address`` process
joined to this session's Ray): its run host notices through the run's lease and stops the run.
Through the service the ``deep-research serve`` process is killed likewise: it holds its runs'
leases, so its runs are stopped the same way. Runs are slowed with
injected provider latency; the tests wait on the run's own files, never on a fixed sleep.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
import ray
from cli_env import EXE, cli_env
from report_checks import body_of
from run_files import events_of, until

from deepresearch.actors import crew
from deepresearch.config.settings import Settings
from deepresearch.run import driver

pytestmark = [pytest.mark.usefixtures("ray_session"), pytest.mark.slow]
QUERY = "Compare ACME Corp sales, Globex Inc revenue and ACME dividend"
KILL_POINTS = 4
# What decides the report: the same for the uninterrupted run, the killed ones and the resumes.
FLAGS: dict[str, Any] = {
    "simulate.latency_s": 0.5,
    "deep.max_parallel": 2,
    "ray.crew.name": "sweep-crew",
    "ray.crew.researchers": 2,
}


def kill_points(total: int) -> list[int]:
    """``KILL_POINTS`` event counts spread over a run of ``total`` events, the first after the
    run has started (``run_started`` is its second event)."""
    return [2 + (total - 2) * i // (KILL_POINTS + 1) for i in range(1, KILL_POINTS + 1)]


def reference(settings: Settings) -> tuple[str, int]:
    """The uninterrupted run's report body and how many events it logged."""
    summary = driver.execute(driver.prepare(QUERY, "deep", settings), crew=crew)
    assert summary.status == "completed", summary.reason
    run_dir = settings.resolved_state_dir() / "runs" / summary.run_id
    return body_of(Path(summary.report_path or "").read_text()), len(events_of(run_dir))


def resumed_body(settings: Settings, run_id: str) -> str:
    summary = driver.execute(
        driver.prepare_resume(run_id, settings.resolved_state_dir()), crew=crew
    )
    assert summary.status == "completed", summary.reason
    return body_of(Path(summary.report_path or "").read_text())


def check_ending(run_dir: Path) -> dict[str, Any]:
    """The log says ``completed`` only when the report is on disk, and then the summary too."""
    summary = json.loads((run_dir / "summary.json").read_text())
    finished = [e for e in events_of(run_dir) if e["type"] == "run_finished"]
    if summary["status"] == "completed":
        assert Path(summary["report_path"]).is_file()
        assert [e["payload"]["status"] for e in finished] == ["completed"]
    else:
        assert summary["status"] == "interrupted", summary
        assert finished == [], "the log says the run finished but no report was written"
    return summary


def kill_cli_at(k: int, args: list[str], env: dict[str, str], cwd: Path) -> tuple[Path, str]:
    """Start ``deep-research run ARGS``, SIGKILL it once its run has logged ``k`` events; the
    run's folder and the CLI's stderr."""
    runs = cwd / "state" / "runs"
    known = set(runs.iterdir())
    proc = subprocess.Popen(
        [EXE, "run", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        run_dir: Path = until(lambda: next(iter(set(runs.iterdir()) - known), None), "a run")
    except BaseException:
        proc.kill()
        raise
    kill_once_logged(proc, run_dir, k)
    assert proc.stderr is not None
    return run_dir, proc.stderr.read().decode(errors="replace")


def kill_once_logged(proc: subprocess.Popen[Any], run_dir: Path, k: int) -> None:
    """SIGKILL ``proc`` (no handler of it runs) once its run has logged ``k`` events."""
    try:
        until(lambda: len(events_of(run_dir)) >= k or proc.poll() is not None, f"event {k}")
    finally:
        proc.kill()
        proc.wait(timeout=60)


def test_a_run_whose_cli_is_killed_at_any_event_resumes_to_the_same_report(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus, **FLAGS)
    expected, total = reference(settings)
    address = ray.get_runtime_context().gcs_address
    env = cli_env(tmp_path, {"DEEP_RESEARCH_RUN__OUTPUT_DIR": str(tmp_path / "out")})
    env.update({"DEEP_RESEARCH_" + k.upper().replace(".", "__"): str(v) for k, v in FLAGS.items()})
    args = [QUERY, "--mode", "deep", "--corpus", str(small_corpus), "--address", address, "--json"]
    outcomes: list[tuple[int, int, str]] = []
    for k in kill_points(total):
        run_dir, err = kill_cli_at(k, args, env, tmp_path)
        at_kill = len(events_of(run_dir))
        # The host notices the dead driver through the run's lease and records the ending.
        summary_file = run_dir / "summary.json"
        until(summary_file.exists, "the run's ending recorded", 90)
        summary = check_ending(run_dir)
        if summary["status"] == "completed":  # it wrote its report before it was killed
            got = body_of(Path(summary["report_path"]).read_text())
        else:
            got = resumed_body(settings, run_dir.name)
            check_ending(run_dir)
        outcomes.append((k, at_kill, summary["status"]))
        assert got == expected, f"killed after {at_kill} events: {err[-500:]}"
    # the kills landed over the whole run, not all after its end
    assert [status for *_, status in outcomes].count("interrupted") >= 2, outcomes


def serve_and_post(args: list[str], env: dict[str, str], cwd: Path) -> tuple[Any, str]:
    """A ``deep-research serve`` process (its stderr drained) and the run it was asked for."""
    proc = subprocess.Popen(
        [EXE, "serve", "--port", "0", *args], cwd=cwd, env=env, stderr=subprocess.PIPE, text=True
    )
    lines: queue.Queue[str] = queue.Queue()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put("")  # the process ended

    threading.Thread(target=drain, daemon=True).start()
    url = ""
    while not url:
        line = lines.get(timeout=120)
        assert line, "serve exited before it listened"
        url = line.split("serving on ", 1)[1].strip() if "serving on " in line else ""
    created = httpx.post(f"{url}/runs", json={"query": QUERY, "mode": "deep"}, timeout=60)
    assert created.status_code == 202, created.text
    return proc, str(created.json()["run_id"])


def test_a_service_killed_at_any_event_of_a_run_resumes_it_to_the_same_report(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    """The service process itself killed (SIGKILL) mid-run: it held the run's lease, so the run
    host stops the run; ``resume`` continues it to the uninterrupted run's report."""
    settings = make_settings(small_corpus, **FLAGS)
    expected, total = reference(settings)
    address = ray.get_runtime_context().gcs_address
    env = cli_env(tmp_path, {"DEEP_RESEARCH_RUN__OUTPUT_DIR": str(tmp_path / "out")})
    env.update({"DEEP_RESEARCH_" + k.upper().replace(".", "__"): str(v) for k, v in FLAGS.items()})
    args = ["--corpus", str(small_corpus), "--address", address]
    runs = tmp_path / "state" / "runs"
    outcomes: list[tuple[int, int, str]] = []
    for k in kill_points(total):
        proc, run_id = serve_and_post(args, env, tmp_path)
        run_dir = runs / run_id
        kill_once_logged(proc, run_dir, k)
        at_kill = len(events_of(run_dir))
        summary_file = run_dir / "summary.json"
        until(summary_file.exists, "the run's ending recorded", 90)
        summary = check_ending(run_dir)
        if summary["status"] == "completed":
            got = body_of(Path(summary["report_path"]).read_text())
        else:
            got = resumed_body(settings, run_id)
            check_ending(run_dir)
        outcomes.append((k, at_kill, summary["status"]))
        assert got == expected, f"killed after {at_kill} events"
    assert [status for *_, status in outcomes].count("interrupted") >= 2, outcomes
