"""The service's HTTP surface without Ray: SSE from run files (resume, heartbeat, end), status,
report, the page, bearer auth and 422s, through httpx against aiohttp on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from loopback_app import LoopbackApps
from pydantic import SecretStr

from deepresearch.config.settings import Settings, load_settings
from deepresearch.errors import InputError
from deepresearch.run import driver
from deepresearch.schemas import Event, Report, Request, RunResult, RunSummary
from deepresearch.service import sse
from deepresearch.service.app import create_app
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

RUN = "20261122-100000-abcdef"
Serve = Callable[..., Awaitable[httpx.AsyncClient]]


def settings_in(tmp_path: Path, heartbeat_s: float = 10.0) -> Settings:
    (tmp_path / "out").mkdir(exist_ok=True)
    flags = {
        "state_dir": tmp_path / "state",
        "run": {"output_dir": tmp_path / "out"},
        "service": {"heartbeat_s": heartbeat_s},
    }
    return load_settings(None, flags, env={})


def make_run(settings: Settings, n_events: int, finished: bool) -> RunDir:
    run_dir = RunDir.create(settings.resolved_state_dir(), RUN)
    request = Request(run_id=RUN, query="What?", mode="deep", created_at=time.time())
    out = settings.run.output_dir or Path()
    runs.write_record(run_dir, request, settings, out)
    for seq in range(1, n_events + 1):
        kind = "run_finished" if finished and seq == n_events else "researcher_progress"
        payload = {"status": "completed"} if kind == "run_finished" else {"subtask": "t1"}
        run_dir.append_event(Event(seq=seq, ts=time.time(), run_id=RUN, type=kind, payload=payload))
    if finished:
        report = out / "report.md"
        report.write_text("# Title\n\nAnswer [1]\n\n## Sources\n\n1. Doc\n")
        summary = RunSummary(
            run_id=RUN, status="completed", mode="deep", query="What?", report_path=str(report)
        )
        run_dir.write_text(runs.SUMMARY, summary.model_dump_json())
    return run_dir


@pytest.fixture()
async def serve() -> AsyncIterator[Serve]:
    apps = LoopbackApps()

    async def start(settings: Settings, token: str | None = None) -> httpx.AsyncClient:
        return await apps.client(create_app(settings, SecretStr(token) if token else None))

    yield start
    await apps.close()


async def raw_stream(client: httpx.AsyncClient, path: str, **headers: str) -> str:
    async with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200
        return "".join([chunk async for chunk in response.aiter_text()])


def ids_of(text: str) -> list[int]:
    return [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]


async def test_a_finished_run_streams_all_events_then_end_and_resumes(
    serve: Serve, tmp_path: Path
) -> None:
    settings = settings_in(tmp_path)
    make_run(settings, 5, finished=True)
    client = await serve(settings)
    text = await raw_stream(client, f"/runs/{RUN}/events")
    assert ids_of(text) == [1, 2, 3, 4, 5]
    assert text.endswith('event: end\ndata: {"status": "completed"}\n\n')
    resumed = await raw_stream(client, f"/runs/{RUN}/events", **{"Last-Event-ID": "3"})
    assert ids_of(resumed) == [4, 5]
    by_query = await raw_stream(client, f"/runs/{RUN}/events?last_event_id=4")
    assert ids_of(by_query) == [5]

    status = (await client.get(f"/runs/{RUN}")).json()
    assert status["status"] == "completed" and status["events"] == 5
    report = await client.get(f"/runs/{RUN}/report")
    assert report.text.startswith("# Title") and "markdown" in report.headers["content-type"]
    assert (await client.delete(f"/runs/{RUN}")).status_code == 409
    missing = await client.get("/runs/nope/events")
    assert missing.status_code == 404 and missing.json() == {"error": "no run nope"}
    assert str(tmp_path) not in missing.text  # the server's paths are not the client's business


async def test_the_page_gets_the_report_rendered_and_sanitized(
    serve: Serve, tmp_path: Path
) -> None:
    settings = settings_in(tmp_path)
    client = await serve(settings)
    unfinished = await client.get(f"/runs/{RUN}/report/rendered")
    assert unfinished.status_code == 404
    make_run(settings, 3, finished=True)
    markdown = (
        "# Title\n\n## Answer\n\n| Quarter | Sales |\n| --- | ---: |\n| Q1 | 1,234 [1] |\n\n"
        "<script>alert(1)</script> [x](javascript:alert(1))\n\n## Sources\n\n1. Doc\n"
    )
    (tmp_path / "out" / "report.md").write_text(markdown)
    response = await client.get(f"/runs/{RUN}/report/rendered")
    assert response.status_code == 200 and response.headers["content-type"].startswith(
        "application/json"
    )
    assert "script-src 'self'" in response.headers["content-security-policy"]
    body = response.json()
    assert body["run_id"] == RUN and body["format"] == "md" and body["markdown"] == markdown
    page = body["html"]
    assert '<td class="align-right">1,234 <a class="cite" href="#source-1">[1]</a></td>' in page
    assert '<li id="source-1">Doc</li>' in page
    assert "<script" not in page and "&lt;script&gt;" in page and 'href="javascript' not in page
    raw = await client.get(f"/runs/{RUN}/report")  # the file as saved, unchanged
    assert raw.text == markdown and raw.headers["content-type"].startswith("text/markdown")
    (tmp_path / "out" / "report.md").unlink()
    assert (await client.get(f"/runs/{RUN}/report/rendered")).status_code == 410


async def test_heartbeats_while_idle_then_new_events_and_the_end(
    serve: Serve, tmp_path: Path
) -> None:
    settings = settings_in(tmp_path, heartbeat_s=0.05)
    run_dir = make_run(settings, 2, finished=False)  # just written: counts as running
    client = await serve(settings)
    seen = ""
    async with client.stream("GET", f"/runs/{RUN}/events") as response:
        async for chunk in response.aiter_text():
            seen += chunk
            if ": keep-alive" in seen and "run_finished" not in seen:
                run_dir.append_event(
                    Event(seq=3, ts=time.time(), run_id=RUN, type="run_finished", payload={})
                )
                summary = RunSummary(run_id=RUN, status="no_answer", mode="deep", query="q")
                run_dir.write_text(runs.SUMMARY, summary.model_dump_json())
    assert ids_of(seen) == [1, 2, 3]
    assert seen.endswith('event: end\ndata: {"status": "no_answer"}\n\n')


async def test_bearer_token_guards_the_api_but_not_the_page(serve: Serve, tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    make_run(settings, 2, finished=True)
    client = await serve(settings, token="s3cret-token")
    denied = await client.get("/runs")
    assert denied.status_code == 401 and denied.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = await client.get("/runs", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = await client.get("/runs", headers={"Authorization": "Bearer s3cret-token"})
    assert [r["run_id"] for r in ok.json()["runs"]] == [RUN]
    assert (await client.post("/runs", json={"query": "x"})).status_code == 401
    assert (await client.get(f"/runs/{RUN}/events?access_token=nope")).status_code == 401
    text = await raw_stream(client, f"/runs/{RUN}/events?access_token=s3cret-token")
    assert ids_of(text) == [1, 2]
    page = await client.get("/")
    assert page.status_code == 200 and "<form" in page.text
    assert (await client.get("/static/app.js")).status_code == 200
    assert (await client.get("/static/missing.js")).status_code == 404
    assert (await client.get("/static/__init__.py")).status_code == 404


async def test_bad_requests_are_422_with_a_clear_body(serve: Serve, tmp_path: Path) -> None:
    client = await serve(settings_in(tmp_path))
    bad_json = await client.post(
        "/runs", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 422 and "JSON" in bad_json.json()["error"]
    unknown = await client.post("/runs", json={"query": "q", "colour": "red"})
    assert unknown.status_code == 422
    assert unknown.json()["details"] == [{"field": "colour", "message": "unknown field"}]
    empty = await client.post("/runs", json={"query": "   "})  # rejected by driver.prepare
    assert empty.status_code == 422 and "empty" in empty.json()["error"]
    too_long = await client.post("/runs", json={"query": "x" * 3000})
    assert too_long.status_code == 422 and "limit" in too_long.json()["error"]
    assert not (tmp_path / "state" / "runs").exists() or not any(
        (tmp_path / "state" / "runs").iterdir()
    )


def _finish_without_ray(prep: driver.Prepared, **_: object) -> RunSummary:
    """``driver.execute`` minus the actors: the report file is rendered and saved for real."""
    report = Report(query=prep.request.query, title="T", answer="A.", sections=(), sources=())
    result = RunResult(request=prep.request, status="completed", report=report)
    summary = driver.finish(prep, result, 0.1)
    prep.run_dir.write_text(runs.SUMMARY, summary.model_dump_json())
    return summary


@pytest.mark.parametrize(
    ("given", "content_type", "starts"),
    [
        ("JSON", "application/json", "{"),
        ("html", "text/html", "<!DOCTYPE html>"),
        (None, "text/markdown", "# T"),
    ],
)
async def test_the_report_comes_in_the_format_asked_for(
    serve: Serve,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    given: str | None,
    content_type: str,
    starts: str,
) -> None:
    monkeypatch.setattr(driver, "execute", _finish_without_ray)
    client = await serve(settings_in(tmp_path))
    body = {"query": "What changed?"}
    created = await client.post("/runs", json=body | ({"format": given} if given else {}))
    assert created.status_code == 202, created.text
    run_id = created.json()["run_id"]
    for _ in range(500):  # the run finishes in its worker thread
        if (await client.get(f"/runs/{run_id}")).json()["status"] == "completed":
            break
        await asyncio.sleep(0.01)
    report = await client.get(f"/runs/{run_id}/report")
    assert report.status_code == 200
    assert report.headers["content-type"].startswith(content_type)
    assert report.text.startswith(starts)
    if content_type == "text/html":
        assert "default-src 'none'" in report.headers["content-security-policy"]
    shown = (await client.get(f"/runs/{run_id}/report/rendered")).json()
    assert shown["format"] == {"application/json": "json", "text/html": "html"}.get(
        content_type, "md"
    )
    if shown["format"] == "md":
        assert shown["markdown"] == report.text and shown["html"].startswith("<h1>T</h1>")
    else:  # no Markdown to render: the page says where the report is instead
        assert shown["markdown"] is None
        assert f"<code>GET /runs/{run_id}/report</code>" in shown["html"]


async def test_a_bad_format_is_422_and_starts_nothing(serve: Serve, tmp_path: Path) -> None:
    client = await serve(settings_in(tmp_path))
    bad = await client.post("/runs", json={"query": "q", "format": "pdf"})
    assert bad.status_code == 422
    assert [d["field"] for d in bad.json()["details"]] == ["format"]
    assert not (tmp_path / "state" / "runs").exists()


def test_sse_formatting_and_resume_point() -> None:
    event = Event(seq=7, ts=1.0, run_id=RUN, type="x", payload={"a": 1})
    body = sse.format_event(event).decode()
    assert body.startswith("id: 7\ndata: ") and body.endswith("\n\n")
    assert json.loads(body.split("data: ", 1)[1]) == event.model_dump(mode="json")
    assert sse.parse_last_event_id("12") == 12
    assert sse.parse_last_event_id(None, "4") == 4
    assert sse.parse_last_event_id(None, None) == 0
    for bad in ("x", "-3", "\u00b2", "1" * 5000):  # "²".isdigit() is true, int("²") fails
        with pytest.raises(InputError):
            sse.parse_last_event_id(bad)


async def test_events_read_in_a_thread_do_not_block_the_loop(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    run_dir = make_run(settings, 3, finished=False)
    cursor = sse._Cursor(after=1)
    fresh = await asyncio.to_thread(sse._poll, run_dir, cursor)
    assert [e.seq for e in fresh] == [2, 3] and cursor.after == 3
    assert await asyncio.to_thread(sse._poll, run_dir, cursor) == []  # unchanged file


def test_a_poll_reads_only_the_lines_appended_since_the_last(tmp_path: Path) -> None:
    """A stream polls all run long: lines it has read are never read (or parsed) again."""
    run_dir = make_run(settings_in(tmp_path), 3, finished=False)
    cursor = sse._Cursor(after=0)
    assert [e.seq for e in sse._poll(run_dir, cursor)] == [1, 2, 3]
    path = run_dir.path("events.jsonl")
    read = path.read_bytes()
    path.write_bytes(b"x" * (len(read) - 1) + b"\n")  # what was read is no longer parseable
    with path.open("ab") as fh:
        event = Event(seq=4, ts=time.time(), run_id=RUN, type="researcher_progress")
        fh.write(event.model_dump_json().encode() + b"\n" + b'{"seq": 5, "ts"')  # 5: half written
    assert [e.seq for e in sse._poll(run_dir, cursor)] == [4]
    with path.open("ab") as fh:
        fh.write(b': 1.0, "run_id": "' + RUN.encode() + b'", "type": "x"}\n')
    assert [e.seq for e in sse._poll(run_dir, cursor)] == [5] and cursor.after == 5


async def test_the_stream_of_a_reported_run_waits_for_run_finished(
    serve: Serve, tmp_path: Path
) -> None:
    """The driver writes summary.json, then run_finished: a client must not be told "end"
    between the two, or its last event is not the run's ending."""
    settings = settings_in(tmp_path, heartbeat_s=0.01)
    run_dir = make_run(settings, 3, finished=False)
    report = tmp_path / "out" / "report.md"
    report.write_text("# Title\n")
    summary = RunSummary(
        run_id=RUN, status="completed", mode="deep", query="What?", report_path=str(report)
    )
    run_dir.write_text(runs.SUMMARY, summary.model_dump_json())
    client = await serve(settings)
    seen = ""
    async with client.stream("GET", f"/runs/{RUN}/events") as response:
        async for chunk in response.aiter_text():
            seen += chunk
            # a heartbeat after the third event: the stream looked again and did not end there
            if (
                "id: 3\n" in seen.split(": keep-alive")[0]
                and ": keep-alive" in seen
                and "id: 4" not in seen
            ):
                ending = Event(
                    seq=4,
                    ts=time.time(),
                    run_id=RUN,
                    type="run_finished",
                    payload={"status": "completed"},
                )
                run_dir.append_event(ending)
    assert ids_of(seen) == [1, 2, 3, 4]
    assert seen.endswith('event: end\ndata: {"status": "completed"}\n\n')
