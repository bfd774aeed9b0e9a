"""Interruption and crash survival through the real CLI: SIGINT → 130 → resume; kill -9 → resume;
a corrupted checkpoint → exit 2. Runs are slowed with injected provider latency, and the tests
wait on the run's own events (events.jsonl), not on fixed sleeps."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_env import EXE, cli_env
from test_cli import cli

pytestmark = pytest.mark.slow
QUERY = "Compare ACME Corp sales, Globex Inc revenue and ACME dividend"


def start(cwd: Path, corpus: Path) -> subprocess.Popen[str]:
    env = cli_env(
        cwd, {"DEEP_RESEARCH_SIMULATE__LATENCY_S": "0.4", "DEEP_RESEARCH_DEEP__MAX_PARALLEL": "1"}
    )
    return subprocess.Popen(
        [EXE, "run", QUERY, "--mode", "deep", "--corpus", str(corpus), "--json"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for_event(cwd: Path, event_type: str, timeout: float = 180) -> tuple[str, list[dict]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = list((cwd / "state" / "runs").glob("*/events.jsonl"))
        if runs:
            lines = runs[0].read_text().splitlines()
            events = [json.loads(x) for x in lines if x.strip().endswith("}")]
            if any(e["type"] == event_type for e in events):
                return runs[0].parent.name, events
        time.sleep(0.1)
    raise AssertionError(f"no {event_type} event within {timeout}s")


def checkpointed(run_dir: Path, timeout: float = 60) -> None:
    """Until the run's checkpoint lists a completed sub-task: the log says a researcher finished
    before the coordinator's checkpoint records it, and an interrupt between the two would
    (rightly) redo that sub-task on resume, which this test is not about."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if json.loads((run_dir / "checkpoint.json").read_text()).get("completed"):
                return
        time.sleep(0.1)
    raise AssertionError(f"no completed sub-task checkpointed within {timeout}s")


def events_of(cwd: Path, run_id: str) -> list[dict]:
    text = (cwd / "state" / "runs" / run_id / "events.jsonl").read_text()
    return [json.loads(x) for x in text.splitlines()]


def test_sigint_exits_130_and_resume_completes_without_redoing_work(
    small_corpus: Path, tmp_path: Path
) -> None:
    proc = start(tmp_path, small_corpus)
    run_id, _ = wait_for_event(tmp_path, "researcher_finished")
    checkpointed(tmp_path / "state" / "runs" / run_id)  # the finished work is on disk
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"deep-research resume {run_id}" in err
    assert "Traceback" not in err
    assert json.loads(out)["status"] == "interrupted"
    checkpoint = json.loads((tmp_path / "state" / "runs" / run_id / "checkpoint.json").read_text())
    done_before = {r["subtask_id"] for r in checkpoint["completed"]}
    assert done_before
    assert cli("runs", "list", cwd=tmp_path).stdout.count("interrupted") == 1

    resumed = cli("resume", run_id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["status"] == "completed" and Path(summary["report_path"]).exists()
    events = events_of(tmp_path, run_id)
    cut = next(i for i, e in enumerate(events) if e["type"] == "run_resumed")
    restarted = {e["payload"]["subtask"] for e in events[cut:] if e["type"] == "researcher_started"}
    assert not restarted & done_before  # completed sub-tasks were not redone
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    show = json.loads(cli("runs", "show", run_id, cwd=tmp_path).stdout)
    assert show["status"] == "completed"


def test_kill_9_of_the_cli_then_resume_and_a_corrupted_checkpoint(
    small_corpus: Path, tmp_path: Path
) -> None:
    proc = start(tmp_path, small_corpus)
    run_id, _ = wait_for_event(tmp_path, "researcher_finished")
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and the Ray it started die together
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    # A copy whose checkpoints are both damaged cannot be resumed: exit 2, one clear line.
    runs = tmp_path / "state" / "runs"
    # Orphaned Ray workers of the killed CLI may still be replacing files: skip their temp files.
    shutil.copytree(runs / run_id, runs / "damaged", ignore=shutil.ignore_patterns("*.tmp"))
    for name in ("checkpoint.json", "checkpoint.prev.json"):
        path = runs / "damaged" / name
        if path.exists():
            path.write_text(path.read_text()[:-20] + "garbage")
    bad = cli("resume", "damaged", cwd=tmp_path)
    assert bad.returncode == 2, bad.stderr
    assert "checkpoint" in bad.stderr and "Traceback" not in bad.stderr
    shutil.rmtree(runs / "damaged")

    resumed = cli("resume", run_id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "completed"


def test_sigterm_ends_a_run_like_ctrl_c(small_corpus: Path, tmp_path: Path) -> None:
    """``kill`` (SIGTERM) of a run: exit 130 with the resume line, the checkpoint kept, and no
    stack dump from Ray's C++ failure handler ("*** SIGTERM received ... PC: @")."""
    proc = start(tmp_path, small_corpus)
    run_id, _ = wait_for_event(tmp_path, "researcher_started")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"deep-research resume {run_id}" in err
    assert "SIGTERM received" not in err and "PC: @" not in err and "Traceback" not in err
    assert json.loads(out)["status"] == "interrupted"
    summary = json.loads((tmp_path / "state" / "runs" / run_id / "summary.json").read_text())
    assert summary["status"] == "interrupted"
