"""Run slots cannot leak: a run whose prepare or execute hangs, fails, crashes or runs out of file
descriptors gives its slot back, ends visibly (``failed`` with a reason, or a 5xx at submission),
and ``GET /runs`` counts exactly the slots held. The driver is a fake; no Ray."""

from __future__ import annotations

import asyncio
import errno
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from loopback_app import LoopbackApps

from deepresearch.config.settings import Settings, load_settings
from deepresearch.run import driver
from deepresearch.schemas import Mode, Request
from deepresearch.service.app import MANAGER, create_app
from deepresearch.service.runner import RunManager
from deepresearch.service.submission import RunCreate
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

QUERY = "What did the fake find?"


class FakeDriver:
    """``prepare``/``execute`` stand-ins whose behaviour each test sets; ``release`` unblocks."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.prepare_hangs = False
        self.prepare_error: BaseException | None = None
        self.execute: Callable[[driver.Prepared], Any] = lambda prep: None
        self.executing = threading.Event()

    def prepare(
        self, query: str, mode: Mode, settings: Settings, run_id: str, llm: object = None
    ) -> driver.Prepared:
        if self.prepare_hangs:
            self.release.wait(30)  # a read that never returns (until the test ends)
        if self.prepare_error is not None:
            raise self.prepare_error
        run_dir = RunDir.create(settings.resolved_state_dir(), run_id)
        request = Request(run_id=run_id, query=query, mode=mode, created_at=time.time())
        assert settings.run.output_dir is not None
        runs.write_record(run_dir, request, settings, settings.run.output_dir)
        return driver.Prepared(settings, request, run_dir, settings.run.output_dir, ())

    def run(self, prep: driver.Prepared, **_: Any) -> Any:
        self.executing.set()
        return self.execute(prep)


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDriver]:
    fake = FakeDriver()
    monkeypatch.setattr(driver, "prepare", fake.prepare)
    monkeypatch.setattr(driver, "execute", fake.run)
    yield fake
    fake.release.set()


def settings_in(tmp_path: Path, **flags: Any) -> Settings:
    base: dict[str, Any] = {
        "state_dir": tmp_path / "state",
        "service": {"max_runs": 2, "prepare_timeout_s": 0.3, "deadline_grace_s": 0.0},
        "run": {"max_time_s": 60.0},
    }
    for section, values in flags.items():
        base[section] = {**base.get(section, {}), **values}
    return load_settings(None, base, env={})


@pytest.fixture()
async def client(tmp_path: Path) -> AsyncIterator[Callable[[Settings], Any]]:
    apps = LoopbackApps()

    async def start(settings: Settings) -> tuple[httpx.AsyncClient, RunManager]:
        app = create_app(settings)
        return await apps.client(app), app[MANAGER]

    yield start
    await apps.close()


async def ended(manager: RunManager, run_id: str) -> None:
    """Wait for the run's own task (not a sleep): its done-callback has freed the slot."""
    active = manager._active.get(run_id)
    if active is not None:
        await asyncio.wait_for(asyncio.wait({active.task}), 10)


async def test_hung_prepares_time_out_and_give_their_slots_back(
    fake: FakeDriver, client: Any, tmp_path: Path
) -> None:
    http, manager = await client(settings_in(tmp_path))
    fake.prepare_hangs = True
    for _ in range(3):  # more than max_runs: a leak would turn the third into a 429
        hung = await asyncio.wait_for(http.post("/runs", json={"query": QUERY}), 10)
        assert hung.status_code == 504 and "longer than 0.3 s" in hung.json()["error"]
    listed = (await http.get("/runs")).json()
    assert listed["active"] == 0 == manager.running()
    fake.prepare_hangs = False
    fake.execute = lambda prep: fake.release.wait(30)
    first = await http.post("/runs", json={"query": QUERY})
    second = await http.post("/runs", json={"query": QUERY})
    assert first.status_code == second.status_code == 202
    assert (await http.get("/runs")).json()["active"] == 2 == manager.running()
    busy = await http.post("/runs", json={"query": QUERY})
    assert busy.status_code == 429
    fake.release.set()
    for created in (first, second):
        await ended(manager, created.json()["run_id"])
    assert (await http.get("/runs")).json()["active"] == 0


async def test_a_run_that_never_finishes_hits_its_deadline(
    fake: FakeDriver, client: Any, tmp_path: Path
) -> None:
    http, manager = await client(settings_in(tmp_path, run={"max_time_s": 0.2}))
    fake.execute = lambda prep: fake.release.wait(30)  # ignores should_stop: truly stuck
    created = await http.post("/runs", json={"query": QUERY})
    assert created.status_code == 202
    run_id = created.json()["run_id"]
    await ended(manager, run_id)
    assert manager.running() == 0
    status = (await http.get(f"/runs/{run_id}")).json()
    assert status["status"] == "failed"
    assert "abandoned" in status["summary"]["reason"]
    assert (await http.post("/runs", json={"query": QUERY})).status_code == 202


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (RuntimeError("the coordinator crashed"), "the coordinator crashed"),
        (OSError(errno.EMFILE, "Too many open files"), "Too many open files"),
    ],
)
async def test_a_failed_run_says_failed_with_its_reason(
    fake: FakeDriver, client: Any, tmp_path: Path, error: Exception, reason: str
) -> None:
    http, manager = await client(settings_in(tmp_path, service={"max_runs": 1}))

    def fail(prep: driver.Prepared) -> None:
        raise error

    fake.execute = fail
    created = await http.post("/runs", json={"query": QUERY})
    run_id = created.json()["run_id"]
    await ended(manager, run_id)
    status = (await http.get(f"/runs/{run_id}")).json()
    assert status["status"] == "failed" and reason in status["summary"]["reason"]
    assert (await http.get("/runs")).json()["active"] == 0


async def test_out_of_descriptors_at_submission_is_503_and_frees_the_slot(
    fake: FakeDriver, client: Any, tmp_path: Path
) -> None:
    http, manager = await client(settings_in(tmp_path, service={"max_runs": 1}))
    fake.prepare_error = OSError(errno.EMFILE, "Too many open files")
    for _ in range(2):
        sent = await http.post("/runs", json={"query": QUERY})
        assert sent.status_code == 503 and "Too many open files" in sent.json()["error"], sent.text
        assert sent.headers["Retry-After"]
    assert manager.running() == 0
    fake.prepare_error = RuntimeError("unexpected")
    crashed = await http.post("/runs", json={"query": QUERY})
    assert crashed.status_code == 500 and "unexpected" in crashed.json()["error"]
    assert manager.running() == 0


async def test_a_failure_that_cannot_be_written_is_still_shown_failed(
    fake: FakeDriver, client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http, manager = await client(settings_in(tmp_path))
    monkeypatch.setattr("deepresearch.service.outcome.RETRY_DELAYS_S", (0.01, 0.01))
    real_write = RunDir.write_text
    attempts: list[str] = []

    def no_descriptors(self: RunDir, name: str, text: str) -> None:
        if name == runs.SUMMARY:
            attempts.append(name)
            raise OSError(errno.EMFILE, "Too many open files")
        real_write(self, name, text)

    def fail(prep: driver.Prepared) -> None:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(RunDir, "write_text", no_descriptors)
    fake.execute = fail
    created = await http.post("/runs", json={"query": QUERY})
    run_id = created.json()["run_id"]
    await ended(manager, run_id)
    assert len(attempts) == 3  # tried, then retried, before settling for memory
    status = (await http.get(f"/runs/{run_id}")).json()
    assert status["status"] == "failed" and "Too many open files" in status["reason"]
    listed = (await http.get("/runs")).json()["runs"]
    assert [r["status"] for r in listed if r["run_id"] == run_id] == ["failed"]


async def test_a_crashed_run_task_frees_its_slot(fake: FakeDriver, tmp_path: Path) -> None:
    manager = RunManager(settings_in(tmp_path), 1)
    fake.execute = lambda prep: fake.release.wait(30)
    run_id = await manager.start(RunCreate(query=QUERY))
    assert run_id is not None and manager.running() == 1
    await asyncio.wait_for(asyncio.to_thread(fake.executing.wait, 10), 15)
    task = manager._active[run_id].task
    task.cancel()  # the task itself dies (not the thread): its done-callback still frees the slot
    await asyncio.wait({task})
    assert manager.running() == 0
    fake.release.set()


def test_service_reports_go_under_the_state_dir_privately(tmp_path: Path) -> None:
    manager = RunManager(settings_in(tmp_path), 1)
    reports = tmp_path / "state" / "reports"
    assert manager.settings.run.output_dir == reports
    assert reports.is_dir() and reports.stat().st_mode & 0o777 == 0o700
    chosen = RunManager(settings_in(tmp_path, service={"output_dir": tmp_path / "elsewhere"}), 1)
    assert chosen.settings.run.output_dir == tmp_path / "elsewhere"


async def test_reading_runs_without_descriptors_is_503_and_the_service_goes_on(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http, _ = await client(settings_in(tmp_path))
    real = runs.list_runs

    def no_descriptors(state_dir: Path) -> Any:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(runs, "list_runs", no_descriptors)
    short = await http.get("/runs")
    assert short.status_code == 503 and short.headers["Retry-After"]
    monkeypatch.setattr(runs, "list_runs", real)
    assert (await http.get("/runs")).status_code == 200
