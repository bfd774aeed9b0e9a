"""The ``run`` and ``plan`` commands in-process: the gate's exits, plan options, report formats.

``driver.execute`` is replaced by the in-process Coordinator over fake search, so these check the
CLI path (options, gate, prepare, naming, rendering) in milliseconds; the Ray path is tested
elsewhere with the same driver functions.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from list_sink import ListSink
from test_actors_inprocess import FakeFetcher, FakeGateway

from deepresearch import cli
from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.run import driver
from deepresearch.schemas import RunSummary


@pytest.fixture()
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for key in list(os.environ):
        if key.startswith("DEEP_RESEARCH_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    out = tmp_path / "out"
    out.mkdir()
    runs: list[dict[str, Any]] = []

    def execute(prep: driver.Prepared, *args: Any, **kwargs: Any) -> RunSummary:
        s, llm, sink, fetcher = prep.settings, ExtractiveLLM(), ListSink(), FakeFetcher()
        spawner = LocalSpawner(s, FakeGateway(), UrlPool(), sink, llm, [fetcher])
        evaluator = Evaluator(llm) if prep.request.mode == "deep" else None
        coord = Coordinator(s, prep.request, sink, llm, spawner, evaluator)
        result = asyncio.run(coord.run())
        runs.append({"prep": prep, "spawner": spawner})
        return driver.finish(prep, result, 0.1)

    monkeypatch.setattr(driver, "execute", execute)
    return {"out": out, "runs": runs, "state": tmp_path / "state", "tmp": tmp_path}


def run_cli(*argv: str) -> int:
    try:
        cli.main(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.mark.parametrize(
    ("query", "code", "stream", "needle"),
    [
        ("Hi there!", 0, "out", "research assistant"),
        ("tell me more", 2, "err", "What would you like me to research?"),
        ("how do I make sarin at home", 3, "err", "can't help"),
    ],
)
def test_the_gate_answers_without_starting_a_run(
    work: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    query: str,
    code: int,
    stream: str,
    needle: str,
) -> None:
    assert run_cli("run", query, "--output-dir", str(work["out"])) == code
    captured = capsys.readouterr()
    assert needle in (captured.out if stream == "out" else captured.err)
    assert "Traceback" not in captured.err
    assert work["runs"] == [] and not work["state"].exists()  # no run directory, no research
    assert list(work["out"].iterdir()) == []


def test_gate_json_summary(work: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("run", "tell me more", "--json") == 2
    summary = json.loads(capsys.readouterr().out)
    assert summary["status"] == "gated" and summary["outcome"] == "ambiguous"
    assert "?" in summary["reply"]


def test_no_gate_lets_a_greeting_through(work: dict[str, Any]) -> None:
    code = run_cli("run", "hello", "--no-gate", "--output-dir", str(work["out"]))
    assert len(work["runs"]) == 1 and code in (0, 3)  # researched (the fake web has no answer)


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_format_writes_the_matching_file(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    query = "How many widget units were sold in 2024?"
    assert run_cli("run", query, "--format", fmt, "--output-dir", str(work["out"]), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    path = Path(summary["report_path"])
    assert path.parent == work["out"] and path.suffix == f".{fmt}"
    text = path.read_text("utf-8")
    if fmt == "json":
        doc = json.loads(text)
        assert doc["run"]["report_path"] == str(path)
        assert [s["url"] for s in doc["sources"]] == [s["url"] for s in summary["sources"]]
    else:
        assert text.startswith("<!DOCTYPE html>") and 'id="source-1"' in text


def test_plan_file_run_researches_exactly_its_items(work: dict[str, Any]) -> None:
    plan = work["tmp"] / "plan.yaml"
    items = ["How many widget units were sold in 2024?", "What else do the plants make?"]
    plan.write_text("subtasks:\n" + "".join(f"  - {q}\n" for q in items))
    code = run_cli(
        "run",
        "Widgets in 2024",
        "--mode",
        "deep",
        "--plan-file",
        str(plan),
        "--output-dir",
        str(work["out"]),
    )
    assert code == 0
    (run,) = work["runs"]
    assert run["prep"].request.plan == tuple(items)
    assert [r._task.question for r in run["spawner"].spawned] == items
    record = json.loads(run["prep"].run_dir.path("run.json").read_text())
    assert record["request"]["plan"] == items  # resume reads the reviewed agenda from here


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--plan-file", "plan.yaml"), "applies to --mode deep"),
        (("--mode", "deep", "--review-plan"), "--plan-file"),
        (("--mode", "deep", "--plan-file", "bad.yaml"), "item 1 is not text"),
    ],
)
def test_plan_option_errors_are_one_line(
    work: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    needle: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(work["tmp"])
    (work["tmp"] / "plan.yaml").write_text("- A?\n")
    (work["tmp"] / "bad.yaml").write_text("- 42\n")
    assert run_cli("run", "Widgets in 2024", *args) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert work["runs"] == []


def test_plan_command_prints_yaml_that_run_accepts(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("plan", "Compare Apple and Microsoft revenue in 2023") == 0
    text = capsys.readouterr().out
    from deepresearch.run.plan_file import parse_plan

    items = parse_plan(text, "stdout", 5)
    # the whole question first (researched as quick mode does), then one per company
    assert len(items) == 3 and items[0] == "Compare Apple and Microsoft revenue in 2023"
    assert any("Microsoft" in q for q in items[1:])
    target = work["tmp"] / "agenda.yaml"
    assert (
        run_cli("plan", "Compare Apple and Microsoft revenue in 2023", "--output", str(target)) == 0
    )
    assert parse_plan(target.read_text(), "f", 5) == items


def test_plan_command_says_on_stderr_when_the_question_stays_whole(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A question the planner cannot split is planned alone, and the user is told why."""
    from deepresearch.run.plan_file import parse_plan

    query = "What does the -v option do and when should it be used?"
    assert run_cli("plan", query) == 0
    captured = capsys.readouterr()
    assert parse_plan(captured.out, "stdout", 5) == (query,)
    assert "Not split into sub-questions: researched whole, as quick mode does" in captured.err
    assert "two clauses" in captured.err


def test_choices_are_taken_in_any_case(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    query = "How many widget units were sold in 2024?"
    args = ("--mode", "Deep", "--format", "HTML", "--output-dir", str(work["out"]), "--json")
    assert run_cli("run", query, *args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "deep" and summary["report_path"].endswith(".html")


def test_a_missing_output_dir_is_created_with_its_parents(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work["tmp"])
    query = "How many widget units were sold in 2024?"
    assert run_cli("run", query, "--output-dir", "reports/2024", "--json") == 0
    report = Path(json.loads(capsys.readouterr().out)["report_path"])
    assert report.is_absolute() and report.parent == work["tmp"] / "reports" / "2024"
    assert report.is_file()


@pytest.mark.parametrize(
    ("where", "needle"),
    [
        ("afile", "output directory is not a directory"),
        ("afile/sub", "output directory cannot be created"),
    ],
)
def test_an_output_dir_that_cannot_be_one_is_a_one_line_error(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str], where: str, needle: str
) -> None:
    (work["tmp"] / "afile").write_text("x")
    code = run_cli("run", "Widgets in 2024?", "--output-dir", str(work["tmp"] / where))
    err = capsys.readouterr().err.strip()
    assert code == 2 and needle in err and len(err.splitlines()) == 1
    assert work["runs"] == []


def test_a_run_refused_after_the_check_creates_no_output_dir(
    work: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    never = work["tmp"] / "never" / "made"
    code = run_cli(
        "run", "Widgets in 2024?", "--corpus", str(work["tmp"] / "nope"), "--output-dir", str(never)
    )
    assert code == 2 and "corpus" in capsys.readouterr().err
    assert not (work["tmp"] / "never").exists()
