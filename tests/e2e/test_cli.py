"""The installed CLI as a subprocess: a real run, the --json schema, and every bad input (exit 2)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_env import EXE, cli_env
from report_checks import body_of, find_unresolved


def cli(
    *args: str, cwd: Path, env_extra: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = cli_env(cwd, env_extra)
    return subprocess.run(
        [EXE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


# The plain progress lines a run prints off a terminal once it has started (console.plain_line).
PROGRESS = re.compile(r"deep-research: (starting|planning|researching|exploring|writing|done)\b")


def assert_usage_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip() and not PROGRESS.match(x)]
    assert len(lines) == 1, proc.stderr
    assert needle.lower() in lines[0].lower(), lines[0]


@pytest.mark.slow
def test_run_writes_report_and_json_summary(small_corpus: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "Notes").mkdir(parents=True)  # reports go to a notes/ sub-directory, any case
    proc = cli(
        "run",
        "What were ACME Corp total net sales for the quarter ended March 31, 2024?",
        "--corpus",
        str(small_corpus),
        "--json",
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout)
    for key in ("run_id", "status", "mode", "report_path", "sources", "usage", "duration_s"):
        assert key in summary
    assert summary["status"] == "completed" and summary["mode"] == "quick"
    for key in (
        "llm_calls",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "search_calls",
        "fetches",
    ):
        assert key in summary["usage"]
    assert all(set(s) >= {"n", "title", "location"} for s in summary["sources"])
    report = Path(summary["report_path"])
    assert report.parent == work / "Notes"
    assert report.name.startswith("deep-research-what-were-acme-corp-total-net-sales")
    text = report.read_text()
    assert find_unresolved(body_of(text), len(summary["sources"])) == []
    assert summary["run_id"] in text.split("\n---\n")[-1]
    events = (work / "state" / "runs" / summary["run_id"] / "events.jsonl").read_text()
    assert "broken.pdf" in events  # the corrupt PDF was skipped with a warning event
    # Off a terminal: a plain line per stage on stderr (never silent through Ray start-up)
    stages = [line.split(":")[1].strip() for line in proc.stderr.splitlines()]
    assert stages == [
        "starting Ray and the actors",
        "planning",
        "researching",
        "writing",
        "done",
    ], proc.stderr


def test_module_entry_point_and_help(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "deepresearch", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and "run" in proc.stdout


@pytest.mark.parametrize(
    ("query", "needle"),
    [("", "empty"), ("   \t ", "empty"), ("x" * 2100, "limit")],
    ids=["empty", "whitespace", "too-long"],
)
def test_bad_queries(query: str, needle: str, small_corpus: Path, tmp_path: Path) -> None:
    assert_usage_error(cli("run", query, "--corpus", str(small_corpus), cwd=tmp_path), needle)


def test_corpus_problems(tmp_path: Path, small_corpus: Path) -> None:
    assert_usage_error(cli("run", "q?", "--corpus", str(tmp_path / "nope"), cwd=tmp_path), "corpus")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_usage_error(cli("run", "q?", "--corpus", str(empty), cwd=tmp_path), "corpus")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "bad.pdf").write_bytes(b"not a pdf at all")
    (junk / "image.bin").write_bytes(b"\x00\x01")
    assert_usage_error(cli("run", "q?", "--corpus", str(junk), cwd=tmp_path), "corpus")
    a_file = small_corpus / "memo.txt"
    assert_usage_error(cli("run", "q?", "--corpus", str(a_file), cwd=tmp_path), "corpus")
    # An explicit offline chain without a corpus is an error, never a silent switch to the web.
    assert_usage_error(cli("run", "q?", "--search", "local", cwd=tmp_path), "corpus")


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads every directory; permission bits cannot make one unreadable",
)
def test_unreadable_corpus(tmp_path: Path, small_corpus: Path) -> None:
    small_corpus.chmod(0)
    try:
        assert_usage_error(cli("run", "q?", "--corpus", str(small_corpus), cwd=tmp_path), "corpus")
    finally:
        small_corpus.chmod(0o755)


def test_unknown_providers_and_settings(tmp_path: Path, small_corpus: Path) -> None:
    base = ("run", "q?", "--corpus", str(small_corpus))
    assert_usage_error(cli(*base, "--llm", "nope", cwd=tmp_path), "llm.provider")
    assert_usage_error(cli(*base, "--search", "nope", cwd=tmp_path), "search.providers")
    assert_usage_error(cli(*base, "--mode", "fast", cwd=tmp_path), "mode")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("deep:\n  max_paralel: 3\n")
    assert_usage_error(cli(*base, "--config", str(cfg), cwd=tmp_path), "deep.max_paralel")
    assert_usage_error(
        cli(*base, cwd=tmp_path, env_extra={"DEEP_RESEARCH_DEEP__MAX_PARALLEL": "lots"}),
        "deep.max_parallel",
    )


def test_unwritable_output_and_state_dirs(tmp_path: Path, small_corpus: Path) -> None:
    base = ("run", "q?", "--corpus", str(small_corpus))
    (tmp_path / "afile").write_text("x")  # a missing directory is created; a file cannot be
    assert_usage_error(cli(*base, "--output-dir", str(tmp_path / "afile"), cwd=tmp_path), "output")
    assert_usage_error(
        cli(*base, "--output-dir", str(tmp_path / "afile" / "sub"), cwd=tmp_path), "output"
    )
    # /proc refuses new files even for root: an unwritable directory on every Linux box.
    assert_usage_error(cli(*base, "--output-dir", "/proc", cwd=tmp_path), "not writable")
    assert_usage_error(
        cli(*base, cwd=tmp_path, env_extra={"DEEP_RESEARCH_STATE_DIR": "/proc/deep-research"}),
        "not writable",
    )


@pytest.mark.slow
def test_every_researcher_failing_exits_3_with_an_honest_report(
    small_corpus: Path, tmp_path: Path
) -> None:
    # A watchdog of one step (the query-planning call) stops every researcher before it reads.
    proc = cli(
        "run",
        "Compare ACME Corp sales and Globex Inc revenue",
        "--mode",
        "deep",
        "--corpus",
        str(small_corpus),
        "--json",
        cwd=tmp_path,
        env_extra={"DEEP_RESEARCH_RESEARCHER__MAX_STEPS": "1"},
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "no_answer" and summary["sources"] == []
    report = Path(summary["report_path"]).read_text()
    assert "No answer" in report and "step" in report
