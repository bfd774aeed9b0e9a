"""Job submission pieces without a cluster: runtime_env, entrypoint, report block, follow, placement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deepresearch.cluster import jobs, runtime
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.errors import ClusterError, InputError
from deepresearch.schemas import RunSummary

SECRET = "sk-test-never-print-me"
RUN_ID = "20260101-120000-ab12cd"


def spec(**kw: Any) -> jobs.JobSpec:
    base: dict[str, Any] = {"query": "What did ACME earn?", "run_id": RUN_ID}
    base.update(kw)
    return jobs.JobSpec(**base)


def test_keys_go_only_to_env_vars_never_entrypoint_or_metadata(tmp_path: Path) -> None:
    sub = jobs.build_submission(
        spec(pass_env=("OPENAI_API_KEY",), run_args=("--mode", "deep")),
        tmp_path / "deepresearch",
        environ={"OPENAI_API_KEY": SECRET},
    )
    assert sub.runtime_env["env_vars"]["OPENAI_API_KEY"] == SECRET
    assert SECRET not in sub.entrypoint
    assert SECRET not in json.dumps(sub.metadata)
    assert SECRET not in repr(sub)
    assert sub.metadata == {"tool": "deep-research", "run_id": RUN_ID}
    assert sub.job_id == f"deep-research-{RUN_ID}"
    assert "--mode deep" in sub.entrypoint and sub.entrypoint.endswith("'What did ACME earn?'")


def test_missing_pass_env_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--pass-env GEMINI_API_KEY"):
        jobs.build_submission(spec(pass_env=("GEMINI_API_KEY",)), tmp_path, environ={})


def test_local_corpus_uploads_as_working_dir_and_respects_the_limit(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_bytes(b"x" * 300_000)
    sub = jobs.build_submission(spec(corpus=corpus), tmp_path, environ={})
    assert sub.runtime_env["working_dir"] == str(corpus.resolve())
    assert "--corpus ." in sub.entrypoint
    with pytest.raises(InputError, match="--remote-corpus"):
        jobs.build_submission(spec(corpus=corpus, max_upload_mb=0.1), tmp_path, environ={})


def test_remote_corpus_is_named_not_uploaded(tmp_path: Path) -> None:
    sub = jobs.build_submission(spec(remote_corpus="/data/docs"), tmp_path, environ={})
    assert "working_dir" not in sub.runtime_env
    assert "--corpus /data/docs" in sub.entrypoint
    with pytest.raises(InputError, match="not both"):
        jobs.build_submission(spec(remote_corpus="/d", corpus=tmp_path), tmp_path, environ={})


def test_quoting_survives_hostile_queries(tmp_path: Path) -> None:
    import shlex

    query = "x'; rm -rf / #\n$(echo hi)"
    sub = jobs.build_submission(spec(query=query), tmp_path, environ={})
    assert shlex.split(sub.entrypoint)[-1] == query


def test_stage_package_ships_the_package_not_tests(tmp_path: Path) -> None:
    staged = jobs.stage_package(tmp_path)
    assert staged.name == "deepresearch"
    assert (staged / "run" / "driver.py").is_file() and (
        staged / "config" / "default.yaml"
    ).is_file()
    assert not (staged / "tests").exists() and not (staged / ".venv").exists()


def test_a_job_ships_the_packages_own_files_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    kept = [
        "__init__.py",
        "cli.py",
        "py.typed",
        "pyproject.toml",
        "policies/__init__.py",
        "policies/gate/__init__.py",
        "policies/gate/intent.py",
        "prompts/__init__.py",
        "prompts/writer.md",
        "config/__init__.py",
        "config/default.yaml",
        "service/__init__.py",
        "service/static/index.html",
    ]
    left = [
        ".env",
        "deep-research-acme-1a2b.md",
        "README.md",
        "dist/ray_deep_research-0.1.0.tar.gz",
        ".hypothesis/examples/x",
        ".ci/pipeline.yml",
        ".venv/lib/site.py",
        ".git/config",
        "build/lib/deepresearch/__init__.py",
        "reports/acme.md",
        "tests/__init__.py",
        "tests/unit/test_x.py",
        "bench/sec10q.py",
        "policies/notes.csv",
        "policies/__pycache__/x.cpython-311.pyc",
        "scratch/__main__.py",
    ]
    for rel in kept + left:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    staged = jobs.stage_package(tmp_path / "out", root)
    shipped = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    assert shipped == sorted(kept)


def test_the_shipped_data_is_pyprojects_package_data() -> None:
    import tomllib

    setup = tomllib.loads((jobs.PACKAGE_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared = {
        package.removeprefix("deepresearch").lstrip(".").replace(".", "/"): tuple(patterns)
        for package, patterns in setup["package-data"].items()
    }
    shipped = dict(jobs.SHIPPED_DATA)
    shipped[""] = tuple(p for p in shipped[""] if p != "pyproject.toml")
    assert shipped == declared


def summary(status: str = "completed") -> RunSummary:
    return RunSummary(
        run_id=RUN_ID, status=status, mode="quick", query="q", report_path="/x/acme-1a2b.md"
    )


def test_report_block_round_trips_any_text() -> None:
    report = "# Report\n=====END DEEP-RESEARCH REPORT=====\nünïcode [1]\n"
    logs = "starting\n" + jobs.report_block(summary(), report) + "\ntrailing\n"
    found = jobs.parse_report_block(logs, RUN_ID)
    assert found is not None
    assert found.report == report and found.filename == "acme-1a2b.md"
    assert found.summary.status == "completed"
    assert jobs.parse_report_block(logs, "20260101-120000-ffffff") is None
    assert jobs.parse_report_block("no block here", RUN_ID) is None


def test_damaged_block_is_an_error_not_a_report() -> None:
    lines = jobs.report_block(summary(), "# R\n" * 50).splitlines()
    lines[2] = lines[2][:-4] + ("AAAA" if not lines[2].endswith("AAAA") else "BBBB")
    with pytest.raises(ClusterError, match="hash"):
        jobs.parse_report_block("\n".join(lines), RUN_ID)


def test_visible_lines_hide_the_block_across_chunks() -> None:
    text = "a\n" + jobs.report_block(summary(), "r" * 500) + "\nb"
    lines = text.splitlines()
    first, inside = jobs.visible_lines("\n".join(lines[:3]), False)
    rest, inside = jobs.visible_lines("\n".join(lines[3:]), inside)
    assert first + rest == ["a", "b"] and not inside


class FakeJobs:
    """Logs grow by one chunk per poll; the status turns terminal with the last chunk."""

    def __init__(self, chunks: list[str], final: str) -> None:
        self.chunks, self.final, self.polls = chunks, final, 0

    def get_job_status(self, job_id: str) -> str:
        self.polls += 1
        return self.final if self.polls >= len(self.chunks) else "JobStatus.RUNNING"

    def get_job_logs(self, job_id: str) -> str:
        return "".join(self.chunks[: self.polls])


def test_follow_prints_whole_lines_once_and_returns_the_logs() -> None:
    block = jobs.report_block(summary(), "# R")
    fake = FakeJobs(["one\ntw", "o\n", block + "\n", "done\n"], "SUCCEEDED")
    shown: list[str] = []
    sleeps: list[float] = []
    status, logs = jobs.follow(fake, "j", shown.extend, sleep=sleeps.append)
    assert status == "SUCCEEDED"
    assert shown == ["one", "two", "done"]
    assert jobs.parse_report_block(logs, RUN_ID) is not None
    assert len(sleeps) == 3


def test_follow_gives_up_at_its_deadline() -> None:
    now = iter(range(100))
    fake = FakeJobs(["x\n"] * 50, "SUCCEEDED")
    with pytest.raises(ClusterError, match="did not finish"):
        jobs.follow(
            fake, "j", lambda _: None, clock=lambda: next(now), sleep=lambda _: None, timeout_s=3
        )


class BusyHead:
    """Answers like a head whose job agent is not up yet, ``busy`` times, then accepts."""

    def __init__(self, busy: int, error: str = "No available agent to submit job") -> None:
        self.busy, self.error, self.calls = busy, error, 0

    def submit_job(self, **kw: Any) -> str:
        self.calls += 1
        if self.calls <= self.busy:
            raise RuntimeError(f"Request failed with status code 500: {self.error}")
        return str(kw["submission_id"])


def test_submit_retries_only_while_the_head_has_no_agent(tmp_path: Path) -> None:
    sub = jobs.build_submission(spec(), tmp_path / "deepresearch", environ={})
    head = BusyHead(2)
    sleeps: list[float] = []
    jobs.submit(head, sub, sleep=sleeps.append)
    assert head.calls == 3 and len(sleeps) == 2
    other = BusyHead(1, error="bad runtime_env")
    with pytest.raises(RuntimeError, match="bad runtime_env"):
        jobs.submit(other, sub, sleep=sleeps.append)
    assert other.calls == 1
    now = iter(range(0, 1000, 10))
    stuck = BusyHead(100)
    with pytest.raises(RuntimeError, match="No available agent"):
        jobs.submit(stuck, sub, wait_s=30, clock=lambda: next(now), sleep=lambda _: None)
    assert stuck.calls == 4


def test_a_job_refuses_a_run_id_that_is_not_one() -> None:
    with pytest.raises(InputError, match="not a run id"):
        jobs.check_run_id("../../etc")
    assert jobs.check_run_id(RUN_ID) == RUN_ID


def test_join_failures_name_the_token_setting() -> None:
    msg = runtime.explain_join_failure(RuntimeError("Authentication required: 401"), "disabled")
    assert "requires token authentication" in msg and "ray.auth_mode: token" in msg
    msg = runtime.explain_join_failure(RuntimeError("Authentication failed: 403"), "token")
    assert "does not match" in msg
    msg = runtime.explain_join_failure(ConnectionError("no cluster\nat all"), "disabled")
    assert msg == "cannot join (no cluster at all)"
    err = jobs.explain(ConnectionError("Failed to connect"), "http://h:8265", "disabled")
    assert "cannot reach the Ray Jobs server" in str(err) and err.exit_code == 2


def test_auth_mode_takes_effect_after_ray_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray caches RAY_AUTH_MODE in its C++ config: the env var alone would be ignored."""
    from ray._raylet import AuthenticationMode, get_authentication_mode

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # restored after; so is the mode, below
    try:
        runtime.set_auth_mode("token")
        assert get_authentication_mode() == AuthenticationMode.TOKEN
    finally:
        runtime.set_auth_mode("disabled")
    assert get_authentication_mode() == AuthenticationMode.DISABLED


def test_placement_comes_from_settings() -> None:
    flags = {
        "ray.researcher": {
            "num_cpus": 0.5,
            "resources": {"researcher_node": 1},
            "label_selector": {"pool": "research"},
        }
    }
    settings = load_settings(None, overrides_from_flags(flags), env={})
    assert runtime.placement(settings, "researcher") == {
        "num_cpus": 0.5,
        "resources": {"researcher_node": 1.0},
        "label_selector": {"pool": "research"},
    }
    assert runtime.placement(settings, "evaluator") == {}
    assert runtime.placement(settings, "coordinator") == {}
