"""The tests pass beside a foreign Ray: a user's own ``ray start --head`` left on the machine.

Such a head writes the current-cluster file into Ray's temp dir, and a user may have
``RAY_ADDRESS`` exported; a bare ``ray.init()`` (a fixture, a CLI the tests start) then joins
that cluster, where ``num_cpus`` is refused and every test would run on someone else's Ray. Here
a head is started on free loopback ports with a temp dir of its own (``TMPDIR``, so the file
lands where every Ray started with that environment looks for it, as ``/tmp/ray`` does for a
real user), and a slice of the suite (the crew, a run in-process, a CLI run) runs in a child
pytest that sees both the file and ``RAY_ADDRESS``. Only the head's own process group is ended.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from test_submit import started_head

REPO = Path(__file__).resolve().parents[2]
SLICE = (
    "tests/integration/test_crew.py::test_two_runs_at_once_share_the_crew_but_nothing_of_each_other",
    "tests/integration/test_quick_run.py::test_quick_run_writes_a_cited_report",
    "tests/e2e/test_cli.py::test_run_writes_report_and_json_summary",
)


def written_address(path: Path, head: subprocess.Popen[bytes], timeout_s: float = 90) -> str:
    """The GCS address ``ray start`` writes to the current-cluster file (after its dashboard
    answers, so it is waited for)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return path.read_text().strip()
        assert head.poll() is None, f"ray start exited with {head.returncode}"
        time.sleep(0.2)
    raise AssertionError(f"the head wrote no {path.name} within {timeout_s:g} s")


def drivers_on(dashboard: str) -> list[dict[str, object]]:
    """Every job the head has seen, drivers that merely connected included."""
    with urllib.request.urlopen(f"{dashboard}/api/jobs/", timeout=30) as resp:
        rows: list[dict[str, object]] = json.load(resp)
    return rows


@pytest.mark.slow
def test_the_suite_passes_beside_a_foreign_ray_head() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="drf", dir="/tmp"))  # short: Ray's socket paths are capped
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEP_RESEARCH_", "RAY_"))}
    env.update({"TMPDIR": str(tmp), "RAY_AUTH_MODE": "disabled"})
    try:
        with started_head(env, tmp) as (head, dashboard):
            address = written_address(tmp / "ray" / "ray_current_cluster", head)
            child_env = {**env, "RAY_ADDRESS": address}
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", *SLICE, "-q", "-x", "-p", "no:cacheprovider"],
                cwd=REPO,
                env=child_env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
            assert "3 passed" in proc.stdout, proc.stdout[-2000:]
            assert drivers_on(dashboard) == []  # nothing the tests started joined the head
            assert head.poll() is None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
