"""``deep-research submit --follow`` against a real ``ray start --head`` on loopback ports.

The head is started from this virtualenv without it on the head's PATH (as ``/opt/venv/bin/ray
start`` from a service would be): a job's bare ``python`` is then some other Python. Told to use
it (``--python python``), submit says so in one line before the run (preflight); told nothing, it
finds this driver's own interpreter on the head (the same machine) and the run works; neither
check shows as a FAILED job in ``jobs list --all``.
The head runs in its own process group with its own RAY_TMPDIR, and only that group is ended
(never ``ray stop``, which would stop every Ray on the machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
EXE = shutil.which("deep-research", path=str(BIN)) or "deep-research"
SECRET = "sk-test-DO-NOT-LEAK-4f1c9a"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEP_RESEARCH_", "RAY_"))}
    path = [d for d in env.get("PATH", "").split(os.pathsep) if Path(d).resolve() != BIN.resolve()]
    env.update(
        {
            "PATH": os.pathsep.join(path),  # the head's PATH lacks this venv: no workaround
            "RAY_AUTH_MODE": "disabled",
            "XDG_CONFIG_HOME": str(tmp / "xdg"),
            "HOME": str(tmp / "home"),  # no ~/.ray/auth_token from earlier runs on the machine
        }
    )
    return env


class HeadExited(RuntimeError):
    """``ray start`` ended before its dashboard answered."""


def wait_for_dashboard(url: str, head: subprocess.Popen[bytes], timeout_s: float = 90) -> None:
    """Poll the Jobs server's version endpoint until it answers (the head takes seconds)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if head.poll() is not None:
            raise HeadExited(f"ray start exited with {head.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/version", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the Ray dashboard did not come up")


def head_args(dashboard_port: int) -> list[str]:
    """``ray start --head`` on free loopback ports only. Every port is chosen, the agents'
    included: a default one (the dashboard agent's 52365) may be held by another Ray on the
    machine, such as the test session's own, and the head then has no job agent at all."""
    return [
        str(BIN / "ray"),
        "start",
        "--head",
        "--block",
        f"--port={free_port()}",
        "--node-ip-address=127.0.0.1",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dashboard_port}",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
        f"--runtime-env-agent-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        f"--ray-client-server-port={free_port()}",
        "--num-cpus=2",
        "--object-store-memory=200000000",
        "--disable-usage-stats",
    ]


@contextlib.contextmanager
def head_process(
    dashboard_port: int, env: dict[str, str], stderr: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A Ray head in a process group of its own; on exit only that group is killed (``ray start
    --block`` takes ~30 s to exit on SIGTERM, and a throwaway test cluster needs no graceful
    shutdown). Its stderr goes to ``stderr`` when given."""
    with contextlib.ExitStack() as files:
        err = files.enter_context(stderr.open("wb")) if stderr else subprocess.DEVNULL
        head = subprocess.Popen(
            head_args(dashboard_port),
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            yield head
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=30)


HEAD_ATTEMPTS = 3


@contextlib.contextmanager
def started_head(
    env: dict[str, str],
    logs: Path,
    wait: Callable[[str, subprocess.Popen[bytes]], None] | None = None,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A Ray head whose dashboard answers (``wait``, by default ``wait_for_dashboard``, returns),
    and the dashboard's URL. Its ports are free when chosen, yet another Ray on the machine (the
    test session's own) may take one before the head binds it, and the head then exits while
    starting (``wait`` raises ``HeadExited``): it is started again on new ports, and the last
    attempt's stderr (in ``logs``) ends the error."""
    for attempt in range(1, HEAD_ATTEMPTS + 1):
        dash = free_port()
        url = f"http://127.0.0.1:{dash}"
        err = logs / f"ray-start-{attempt}.err"
        with head_process(dash, env, err) as head:
            try:
                (wait or wait_for_dashboard)(url, head)
            except HeadExited as exc:
                if attempt == HEAD_ATTEMPTS:
                    tail = err.read_text(errors="replace")[-2000:]
                    raise HeadExited(f"{exc} ({HEAD_ATTEMPTS} attempts); stderr:\n{tail}") from None
                continue
            yield head, url
            return


@pytest.fixture(scope="module")
def ray_head() -> Iterator[tuple[str, dict[str, str]]]:
    tmp = Path(tempfile.mkdtemp(prefix="drh", dir="/tmp"))  # short: Ray's socket paths are capped
    (tmp / "home").mkdir()
    env = base_env(tmp)
    env["RAY_TMPDIR"] = str(tmp / "ray")
    try:
        with started_head(env, tmp) as (_, url):
            yield url, env
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.mark.slow
def test_submit_follow_downloads_report_and_keeps_keys_secret(
    ray_head: tuple[str, dict[str, str]], small_corpus: Path, tmp_path: Path
) -> None:
    url, env = ray_head
    env = {**env, "OPENAI_API_KEY": SECRET}
    out = tmp_path / "out"
    out.mkdir()
    query = "What were ACME Corp total net sales for the quarter ended March 31, 2024?"
    submit = ["submit", query, "--address", url, "--corpus", str(small_corpus), "--follow"]
    submit += ["--output-dir", str(out), "--pass-env", "OPENAI_API_KEY", "--json"]

    # The head's bare `python` lacks the dependencies: one line before any run, naming the fix.
    refused = cli([*submit, "--python", "python"], env, tmp_path)
    assert refused.returncode == 2, refused.stderr[-3000:]
    assert "Traceback" not in refused.stderr and refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    line = lines[0]
    assert "lacks" in line and "--python" in line and "--ship-deps" in line
    listed = cli(["jobs", "list", "--address", url], env, tmp_path)
    assert listed.stdout.strip() == ""  # no run was submitted (and the check cleaned up)

    # No --python: this driver's interpreter is on the head (same machine), and is used.
    proc = cli(submit, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert SECRET not in proc.stdout + proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]  # every stdout line is JSON
    assert set(rows[0]) == {"job_id", "run_id"}
    final = rows[-1]
    assert final["status"] == "completed" and final["run_id"] == rows[0]["run_id"]
    assert final["job_id"] == rows[0]["job_id"]
    assert final["duration_s"] >= final["research_s"] > 0
    report_path = Path(final["report_path"])
    assert report_path.parent == out
    text = report_path.read_text("utf-8")
    assert "1,234" in text
    job_id = rows[0]["job_id"]

    from ray.job_submission import JobSubmissionClient

    os.environ["RAY_AUTH_MODE"] = "disabled"
    client = JobSubmissionClient(url)
    info = client.get_job_info(job_id)
    assert str(info.status).endswith("SUCCEEDED")
    assert SECRET not in info.entrypoint
    assert SECRET not in json.dumps(info.metadata or {})
    assert SECRET not in client.get_job_logs(job_id)
    assert info.metadata and info.metadata["run_id"] in job_id

    status = cli(["jobs", "status", job_id, "--address", url], env, tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["status"] == "SUCCEEDED"
    listed = cli(["jobs", "list", "--address", url], env, tmp_path)
    assert job_id in listed.stdout
    every = cli(["jobs", "list", "--all", "--json", "--address", url], env, tmp_path)
    rows = [json.loads(line) for line in every.stdout.splitlines()]
    assert {"job_id": job_id, "status": "SUCCEEDED", "run_id": final["run_id"]} in rows
    checks = [r for r in rows if r["job_id"].endswith("-preflight")]
    assert len(checks) == 2 and {r["status"] for r in checks} == {"SUCCEEDED"}  # none FAILED
    assert str(BIN / "python") in info.entrypoint  # the driver's own interpreter ran the job
    unknown = cli(["jobs", "status", "no-such-job", "--address", url], env, tmp_path)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert unknown.stderr.strip() == f"deep-research: error: no such job no-such-job at {url}"
    again = tmp_path / "again"
    again.mkdir()
    fetched = cli(
        ["jobs", "report", job_id, "--address", url, "--output-dir", str(again)], env, tmp_path
    )
    assert fetched.returncode == 0, fetched.stderr
    assert Path(fetched.stdout.strip()).read_text("utf-8") == text


def test_unreachable_jobs_server_is_one_clear_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    proc = cli(["jobs", "list", "--address", dead], base_env(tmp_path), tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cannot reach the Ray Jobs server" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
