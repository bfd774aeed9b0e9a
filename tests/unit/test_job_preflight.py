"""``submit``: the preflight that checks the cluster's Python, the chosen interpreter, shipped
dependencies, and ``--json`` that stays JSON lines to the end. No cluster: a fake Jobs API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deepresearch import cli
from deepresearch.cluster import dependency_check as preflight
from deepresearch.cluster import job_preflight, jobs
from deepresearch.errors import ClusterError
from deepresearch.schemas import RunSummary

RUN_ID = "20260101-120000-ab12cd"


def spec(**kw: Any) -> jobs.JobSpec:
    base: dict[str, Any] = {"query": "What did ACME earn?", "run_id": RUN_ID}
    base.update(kw)
    return jobs.JobSpec(**base)


class FakeHead:
    """Runs every submitted job at once: it ends with ``status`` and these ``logs``."""

    def __init__(self, status: str, logs: str) -> None:
        self.status, self.logs = status, logs
        self.submitted: list[dict[str, Any]] = []
        self.deleted: list[str] = []

    def submit_job(self, **kw: Any) -> str:
        self.submitted.append(kw)
        return str(kw["submission_id"])

    def get_job_status(self, job_id: str) -> str:
        return self.status

    def get_job_logs(self, job_id: str) -> str:
        return self.logs

    def delete_job(self, job_id: str) -> bool:
        self.deleted.append(job_id)
        return True


def found(**kw: Any) -> str:
    data = {"python": "/usr/bin/python3", "version": "3.11.7", "too_old": False, "missing": []}
    data.update(kw)
    return f"setting up\n{preflight.MARKER} {json.dumps(data)}\n"


def test_preflight_names_what_the_clusters_python_lacks_and_the_fix(tmp_path: Path) -> None:
    head = FakeHead("SUCCEEDED", found(missing=["ray", "json-repair"]))
    with pytest.raises(ClusterError) as info:
        job_preflight.preflight(head, spec(pass_env=("OPENAI_API_KEY",)), tmp_path / "deepresearch")
    line = str(info.value)
    assert "\n" not in line and info.value.exit_code == 2
    assert "/usr/bin/python3 (Python 3.11.7) lacks ray, json-repair" in line
    assert "--python" in line and "--ship-deps" in line
    [job] = head.submitted
    assert (
        job["entrypoint"] == "python -m deepresearch.cluster.dependency_check; true"
    )  # never a FAILED job
    assert set(job["runtime_env"]["env_vars"]) == {"PYTHONUNBUFFERED"}  # no passed keys
    assert head.deleted == []  # deleting races Ray's monitor, which records it again as FAILED


def test_preflight_passes_when_the_python_has_everything(tmp_path: Path) -> None:
    head = FakeHead("SUCCEEDED", found())
    job_preflight.preflight(head, spec(python="/opt/venv/bin/python"), tmp_path / "deepresearch")
    assert head.submitted[0]["entrypoint"].startswith("/opt/venv/bin/python -m ")


def test_no_python_at_all_on_the_head_is_named(tmp_path: Path) -> None:
    head = FakeHead("FAILED", "/bin/sh: 1: python: not found\n")
    with pytest.raises(ClusterError, match="python: not found"):
        job_preflight.preflight(head, spec(), tmp_path / "deepresearch")


def test_the_job_runs_the_chosen_python(tmp_path: Path) -> None:
    sub = jobs.build_submission(spec(python="/opt/venv/bin/python"), tmp_path, environ={})
    assert sub.entrypoint.startswith("/opt/venv/bin/python -m deepresearch job-run ")


def test_shipped_dependencies_are_this_installs_requirements_without_ray() -> None:
    shipped = job_preflight.shipped_requirements()
    names = [line.split(">")[0].split("[")[0].strip().lower() for line in shipped]
    assert "json-repair" in names and "lxml_html_clean" in names
    assert "ray" not in names and not any("extra ==" in line for line in shipped)


def test_the_preflight_module_runs_on_a_bare_python(tmp_path: Path) -> None:
    """Shipped as the job ships it, under a Python without site-packages (``-S``)."""
    jobs.stage_package(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    bare = [sys.executable, "-S", "-m"]
    out = subprocess.run(
        [*bare, "deepresearch.cluster.dependency_check"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    problem = job_preflight.preflight_problem("SUCCEEDED", out.stdout, "python")
    assert "lacks ray" in problem
    # ``python -m deepresearch`` on such a Python: one line and exit 2, not an ImportError.
    run = subprocess.run(
        [*bare, "deepresearch", "runs", "list"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "lacks ray" in run.stderr


@pytest.fixture()
def fake_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    for key in list(os.environ):
        if key.startswith("DEEP_RESEARCH_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    state: dict[str, Any] = {"status": "SUCCEEDED", "report": True, "tried": [], "subs": []}
    monkeypatch.setattr(jobs, "client", lambda address, mode: object())

    def preflight(api: Any, spec: jobs.JobSpec, package: Path, tried: tuple[str, ...]) -> str:
        state["tried"].append(tried)
        return tried[0]  # the first Python tried has everything

    monkeypatch.setattr(job_preflight, "preflight", preflight)
    monkeypatch.setattr(jobs, "submit", lambda api, sub: state["subs"].append(sub))

    def follow(api: Any, job_id: str, on_lines: Any) -> tuple[str, str]:
        run_id = job_id.removeprefix("deep-research-")
        summary = RunSummary(
            run_id=run_id, status="completed", mode="quick", query="q", report_path="/job/r.md"
        )
        on_lines(["a log line"])
        block = jobs.report_block(summary, "# Report\n") if state["report"] else "boom"
        return str(state["status"]), f"a log line\n{block}\n"

    monkeypatch.setattr(jobs, "follow", follow)
    return state


def submit(tmp_path: Path, *extra: str) -> int:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    argv = ["submit", "What did ACME earn?", "--output-dir", str(out), *extra]
    try:
        cli.main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]  # fails on any non-JSON line


def test_submit_follow_json_is_json_lines_ending_with_the_report_path(
    fake_cluster: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert submit(tmp_path, "--follow", "--json") == 0
    first, last = json_lines(capsys.readouterr().out)
    assert set(first) == {"job_id", "run_id"}
    assert last["job_id"] == first["job_id"] and last["run_id"] == first["run_id"]
    assert last["status"] == "completed"
    report = Path(last["report_path"])
    assert report.parent == tmp_path / "out" and report.read_text() == "# Report\n"


def test_submit_json_without_follow_is_one_object(
    fake_cluster: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert submit(tmp_path, "--json") == 0
    [row] = json_lines(capsys.readouterr().out)
    assert set(row) == {"job_id", "run_id"}


def test_a_job_that_fails_still_ends_json_lines_with_an_object(
    fake_cluster: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_cluster.update(status="FAILED", report=False)
    assert submit(tmp_path, "--follow", "--json") == 1
    captured = capsys.readouterr()
    last = json_lines(captured.out)[-1]
    assert last["status"] == "failed" and last["report_path"] is None
    assert "boom" in last["reason"] and "boom" in captured.err


class DroppingHead:
    """Drops the first request after creating the job (the reply is what got lost)."""

    def __init__(self) -> None:
        self.jobs: set[str] = set()
        self.calls = 0

    def submit_job(self, **kw: Any) -> str:
        self.calls += 1
        job_id = str(kw["submission_id"])
        if job_id in self.jobs:
            raise RuntimeError(f"Job with submission_id {job_id} already exists.")
        self.jobs.add(job_id)
        if self.calls == 1:
            raise ConnectionError("('Connection aborted.', RemoteDisconnected('closed'))")
        return job_id


def test_a_dropped_submit_is_retried_and_a_job_already_created_counts(tmp_path: Path) -> None:
    sub = jobs.build_submission(spec(), tmp_path, environ={})
    head = DroppingHead()
    jobs.submit(head, sub, sleep=lambda _: None)
    assert head.calls == 2 and head.jobs == {sub.job_id}


def test_without_python_named_the_drivers_own_interpreter_is_tried_first(
    fake_cluster: dict[str, Any], tmp_path: Path
) -> None:
    assert submit(tmp_path) == 0
    assert fake_cluster["tried"] == [(sys.executable, "python")]
    [job] = fake_cluster["subs"]
    assert job.entrypoint.startswith(f"{sys.executable} -m deepresearch job-run ")


def test_a_python_named_is_the_only_one_tried(fake_cluster: dict[str, Any], tmp_path: Path) -> None:
    assert submit(tmp_path, "--python", "python") == 0
    assert fake_cluster["tried"] == [("python",)]
    assert fake_cluster["subs"][0].entrypoint.startswith("python -m deepresearch job-run ")


def two_reports(driver: dict[str, Any] | None, bare: dict[str, Any]) -> str:
    base = {"python": "/usr/bin/python3", "version": "3.11.7", "too_old": False, "missing": []}
    lines = [] if driver is None else [{**base, **driver, "as": "/venv/bin/python"}]
    lines.append({**base, **bare, "as": "python"})
    return "".join(f"{preflight.MARKER} {json.dumps(line)}\n" for line in lines)


def test_the_driver_python_on_the_head_runs_the_job(tmp_path: Path) -> None:
    head = FakeHead("SUCCEEDED", two_reports({"python": "/venv/bin/python"}, {"missing": ["ray"]}))
    tried = ("/venv/bin/python", "python")
    assert job_preflight.preflight(head, spec(), tmp_path, tried=tried) == "/venv/bin/python"
    [job] = head.submitted
    assert "command -v /venv/bin/python" in job["entrypoint"]
    assert job["entrypoint"].endswith("; true")  # the check job never ends FAILED


def test_without_the_driver_python_on_the_head_a_complete_bare_python_is_used(
    tmp_path: Path,
) -> None:
    head = FakeHead("SUCCEEDED", two_reports(None, {}))
    tried = ("/venv/bin/python", "python")
    assert job_preflight.preflight(head, spec(), tmp_path, tried=tried) == "python"


def test_when_no_python_tried_has_everything_one_line_names_the_flag(tmp_path: Path) -> None:
    head = FakeHead("SUCCEEDED", two_reports(None, {"missing": ["ray"]}))
    with pytest.raises(ClusterError) as info:
        job_preflight.preflight(head, spec(), tmp_path, tried=("/venv/bin/python", "python"))
    line = str(info.value)
    assert "/usr/bin/python3 (Python 3.11.7) lacks ray" in line and "\n" not in line
    assert "--python" in line and "--ship-deps" in line
    empty = FakeHead("SUCCEEDED", "")
    with pytest.raises(ClusterError, match="'/venv/bin/python' or 'python' cannot run there"):
        job_preflight.preflight(empty, spec(), tmp_path, tried=("/venv/bin/python", "python"))


def test_the_candidates() -> None:
    assert job_preflight.candidates("/opt/py", "/venv/bin/python") == ("/opt/py",)
    assert job_preflight.candidates(None, "/venv/bin/python") == ("/venv/bin/python", "python")
    assert job_preflight.candidates(None, "") == ("python",)
