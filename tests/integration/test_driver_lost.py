"""A driver killed mid-run: the crew's run host notices through the run's lease (Ray's
owner-death signal), stops the run, releases what the crew kept for it and keeps its checkpoint,
so ``resume`` finishes it. The driver is a real ``deep-research run --address`` process joined to
this session's Ray; the test waits on the run's own events, never on a fixed sleep."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import ray
from cli_env import EXE, cli_env
from run_files import events_of, until, with_event

from deepresearch.actors import crew
from deepresearch.config.settings import load_settings, overrides_from_flags

pytestmark = [pytest.mark.usefixtures("ray_session"), pytest.mark.slow]
CREW = "orphan-crew"  # a crew of its own, created by the subprocess driver
QUERY = "Compare ACME Corp sales, Globex Inc revenue and ACME dividend"
DROPPED_WITHIN_S = 60.0  # the host used to hold a driverless run for 600 s
WAIT_S = 180.0


def env_for(tmp_path: Path) -> dict[str, str]:
    return cli_env(
        tmp_path,
        {
            "DEEP_RESEARCH_SIMULATE__LATENCY_S": "0.4",
            "DEEP_RESEARCH_DEEP__MAX_PARALLEL": "1",
            "DEEP_RESEARCH_RAY__CREW__NAME": CREW,
            "DEEP_RESEARCH_RAY__CREW__RESEARCHERS": "1",
        },
    )


def crew_members() -> list[Any]:
    """The subprocess driver's crew (its namespace is the CLI's, not this session's)."""
    settings = load_settings(None, overrides_from_flags({"ray.crew.name": CREW}), env={})
    names = [crew.actor_name(settings, "run_host", 0), crew.actor_name(settings, "researcher", 0)]
    names += [crew.actor_name(settings, kind) for kind in ("search_gateway", "evaluator")]
    return [ray.get_actor(name, namespace="deep-research") for name in names]


def test_a_killed_driver_s_run_is_dropped_by_the_crew_and_resumes(
    small_corpus: Path, tmp_path: Path
) -> None:
    address = ray.get_runtime_context().gcs_address
    env = env_for(tmp_path)
    args = ["--mode", "deep", "--corpus", str(small_corpus), "--address", address, "--json"]
    proc = subprocess.Popen(
        [EXE, "run", QUERY, *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    runs = tmp_path / "state" / "runs"

    try:
        run_dir = until(
            lambda: with_event(runs, "researcher_finished"), "a researcher finished", WAIT_S
        )
        run_id = run_dir.name
        members = crew_members()
        assert run_id in ray.get(members[0].held.remote())  # the run goes on on its host
    finally:
        if proc.poll() is None:
            proc.kill()  # SIGKILL: no handler of the driver runs
        proc.communicate(timeout=60)
    killed = time.monotonic()
    assert proc.returncode == -signal.SIGKILL

    def released() -> bool:
        return not any(run_id in held for held in ray.get([m.held.remote() for m in members]))

    until(released, "the crew released the driverless run", WAIT_S)
    assert time.monotonic() - killed < DROPPED_WITHIN_S

    events = events_of(run_dir)
    types = [e["type"] for e in events]
    assert "driver_lost" in types and "run_finished" not in types
    assert types.index("driver_lost") < types.index("researchers_cancelled")
    assert types.count("researchers_cancelled") == 1
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert f"deep-research resume {run_id}" in summary["reason"]
    done = json.loads((run_dir / "checkpoint.json").read_text())["completed"]
    assert done  # what was finished before the driver died is kept

    resumed = subprocess.run(
        [EXE, "resume", run_id, "--json", "--address", address],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["status"] == "completed" and Path(result["report_path"]).exists()
    after = events_of(run_dir)
    cut = next(i for i, e in enumerate(after) if e["type"] == "run_resumed")
    again = {e["payload"]["subtask"] for e in after[cut:] if e["type"] == "researcher_started"}
    assert not again & {r["subtask_id"] for r in done}  # finished sub-tasks were not redone
