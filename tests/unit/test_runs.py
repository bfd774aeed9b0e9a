from __future__ import annotations

import time
from pathlib import Path

import pytest

from deepresearch import runs
from deepresearch.config.settings import load_settings
from deepresearch.errors import InputError, StorageError
from deepresearch.schemas import Event, Request, RunSummary
from deepresearch.storage import RunDir


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
    ("text", "seconds"), [("30d", 2592000.0), ("12h", 43200.0), ("1.5m", 90.0)]
)
def test_parse_age(text: str, seconds: float) -> None:
    assert runs.parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "3x", "-1d"])
def test_parse_age_rejects(text: str) -> None:
    with pytest.raises(InputError):
        runs.parse_age(text)


def test_follow_prints_until_run_finished(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, "r1", 1.0, None)
    seen: list[str] = []
    appended = iter(
        [
            Event(seq=2, ts=2.0, run_id="r1", type="researcher_started"),
            Event(seq=3, ts=3.0, run_id="r1", type="run_finished"),
        ]
    )

    def fake_sleep(_: float) -> None:  # each poll, the run makes progress
        event = next(appended, None)
        if event is not None:
            run_dir.append_event(event)

    status = runs.follow(tmp_path, "r1", lambda e: seen.append(e.type), sleep=fake_sleep)
    assert seen == ["run_started", "researcher_started", "run_finished"]
    assert status in ("running", "stopped")
