from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from deepresearch import cli
from deepresearch.config.settings import load_settings
from deepresearch.errors import InputError, StorageError
from deepresearch.schemas import Event, Request, RunSummary
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir


def make_run(state: Path, run_id: str, created: float, status: str | None) -> RunDir:
    run_dir = RunDir.create(state, run_id)
    request = Request(run_id=run_id, query=f"question {run_id}", mode="quick", created_at=created)
    runs.write_record(run_dir, request, load_settings(env={}), state)
    run_dir.append_event(Event(seq=1, ts=created, run_id=run_id, type="run_started"))
    if status:
        summary = RunSummary(
            run_id=run_id,
            status=status,
            mode="quick",
            query="q",  # type: ignore[arg-type]
            report_path=f"/r/{run_id}.md",
        )
        run_dir.write_text("summary.json", summary.model_dump_json())
    run_dir.close()
    return run_dir


def test_list_show_and_record_round_trip(tmp_path: Path) -> None:
    make_run(tmp_path, "20260101-000000-aaaaaa", 100.0, "completed")
    make_run(tmp_path, "20260102-000000-bbbbbb", 200.0, "interrupted")
    rows = runs.list_runs(tmp_path)
    assert [(r.run_id, r.status) for r in rows] == [
        ("20260101-000000-aaaaaa", "completed"),
        ("20260102-000000-bbbbbb", "interrupted"),
    ]
    assert rows[0].report_path == "/r/20260101-000000-aaaaaa.md"
    shown = runs.show(tmp_path, "20260102-000000-bbbbbb")
    assert shown["status"] == "interrupted" and shown["tail"][0]["type"] == "run_started"
    record = runs.read_record(RunDir(tmp_path / "runs" / "20260101-000000-aaaaaa"))
    assert record.request.query == "question 20260101-000000-aaaaaa"
    assert record.settings.llm.provider == "extractive"


def test_unknown_or_bad_run_ids(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        runs.show(tmp_path, "nope")
    with pytest.raises(InputError):
        runs.show(tmp_path, "../etc")
    (tmp_path / "runs" / "x").mkdir(parents=True)
    with pytest.raises(StorageError):
        runs.read_record(RunDir(tmp_path / "runs" / "x"))


def test_prune_keeps_recent_and_running(tmp_path: Path) -> None:
    now = time.time()
    make_run(tmp_path, "old-done", now - 40 * 86400, "completed")
    make_run(tmp_path, "old-running", now - 40 * 86400, None)  # events just written: running
    make_run(tmp_path, "new-done", now - 3600, "completed")
    removed = runs.prune(tmp_path, runs.parse_age("30d"), now)
    assert removed == ["old-done"]
    assert {r.run_id for r in runs.list_runs(tmp_path)} == {"old-running", "new-done"}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30d", 2592000.0),
        ("12h", 43200.0),
        ("90min", 5400.0),
        ("1.5min", 90.0),
        ("45s", 45.0),
        ("2w", 1209600.0),
        (" 12 H ", 43200.0),
    ],
)
def test_parse_age(text: str, seconds: float) -> None:
    assert runs.parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "3x", "-1d", "1m", "1mo", "6months", "1.5m"])
def test_parse_age_rejects_what_could_be_misread(text: str) -> None:
    with pytest.raises(InputError, match=r"s, min, h, d, w"):
        runs.parse_age(text)


PruneCLI = Callable[..., tuple[int, list[str], list[str]]]


@pytest.fixture()
def prune_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> PruneCLI:
    """``runs prune`` in-process over ``tmp_path``, off a terminal (pytest's stdin is no TTY)."""
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path))

    def run(*args: str) -> tuple[int, list[str], list[str]]:
        try:
            cli.main(["runs", "prune", *args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return code, captured.out.splitlines(), captured.err.splitlines()

    return run


def test_prune_dry_run_lists_and_keeps(tmp_path: Path, prune_cli: PruneCLI) -> None:
    now = time.time()
    make_run(tmp_path, "old-a", now - 40 * 86400, "completed")
    make_run(tmp_path, "old-b", now - 31 * 86400, "interrupted")
    make_run(tmp_path, "new", now - 3600, "completed")
    code, out, err = prune_cli("--older-than", "30d", "--dry-run")
    assert code == 0 and out == ["old-a", "old-b"]
    assert err == ["would remove 2 finished run(s) older than 30d:"]
    assert len(runs.list_runs(tmp_path)) == 3


def test_prune_off_a_terminal_needs_yes(tmp_path: Path, prune_cli: PruneCLI) -> None:
    make_run(tmp_path, "old", time.time() - 40 * 86400, "completed")
    code, out, err = prune_cli("--older-than", "30d")
    assert code == 2 and out == [] and len(err) == 1
    assert "1 finished run(s) older than 30d would be removed; pass --yes" in err[0]
    assert [r.run_id for r in runs.list_runs(tmp_path)] == ["old"]
    code, out, _ = prune_cli("--older-than", "30d", "--yes")
    assert code == 0 and out == ["old"] and runs.list_runs(tmp_path) == []


def test_prune_refuses_an_ambiguous_unit_and_deletes_nothing(
    tmp_path: Path, prune_cli: PruneCLI
) -> None:
    make_run(tmp_path, "old", time.time() - 3600, "completed")
    code, out, err = prune_cli("--older-than", "1m", "--yes")
    assert code == 2 and out == [] and len(err) == 1
    assert "e.g. 90min, 12h, 30d" in err[0] and "Traceback" not in err[0]
    assert len(runs.list_runs(tmp_path)) == 1


def test_follow_prints_until_run_finished(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "r1", 1.0, None)
    seen: list[str] = []
    summary = RunSummary(run_id="r1", status="completed", mode="quick", query="q")
    appended = iter(
        [
            Event(seq=2, ts=2.0, run_id="r1", type="researcher_started"),
            summary,  # as the driver does: the summary, then run_finished
            Event(seq=3, ts=3.0, run_id="r1", type="run_finished"),
        ]
    )
    sleeps: list[float] = []

    def fake_sleep(s: float) -> None:  # each poll, the run makes progress
        sleeps.append(s)
        step = next(appended, None)
        if isinstance(step, Event):
            run_dir.append_event(step)
        elif step is not None:
            run_dir.write_text("summary.json", step.model_dump_json())

    status = runs.follow(tmp_path, "r1", lambda e: seen.append(e.type), sleep=fake_sleep)
    assert seen == ["run_started", "researcher_started", "run_finished"]
    assert status == "completed" and len(sleeps) == 4  # one look after the last event


def test_attach_to_a_failed_run_ends_at_once_not_at_its_idle_limit(tmp_path: Path) -> None:
    """A failed run says no ``run_finished`` (only a reported run does): its summary is its end.
    ``follow`` used to wait out its idle limit (600 s) before returning."""
    make_run(tmp_path, "r1", 1.0, "failed")
    sleeps: list[float] = []
    status = runs.follow(tmp_path, "r1", lambda e: None, sleep=sleeps.append)
    assert status == "failed" and len(sleeps) <= 1


@pytest.mark.parametrize(
    ("status", "finished", "over_s", "ended"),
    [
        (None, None, 99.0, None),  # still going
        ("failed", None, 0.0, "failed"),  # no run_finished to wait for
        ("interrupted", None, 0.0, "interrupted"),
        ("stopped", None, 0.0, "stopped"),
        ("completed", None, 1.0, None),  # the summary, run_finished on its way
        ("completed", None, 16.0, "completed"),  # ... that never came
        ("completed", "completed", 0.0, "completed"),
        (None, "no_answer", 1.0, None),  # run_finished seen, the summary not yet
        (None, "no_answer", 16.0, "no_answer"),
    ],
)
def test_one_rule_ends_every_stream_of_a_run(
    status: str | None, finished: str | None, over_s: float, ended: str | None
) -> None:
    assert runs.stream_ended(status, finished, over_s) == ended
