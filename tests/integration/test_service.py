"""The research service over real HTTP (httpx against aiohttp on 127.0.0.1:0) and the shared Ray:
start, poll, SSE, reconnect with Last-Event-ID, a disconnect that does not stop the run, cancel,
and the 429 cap. Slow runs use injected latency; the tests wait on events, never on sleeps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from deepresearch.config.settings import Settings
from deepresearch.service.app import create_app
from deepresearch.storage.run_dir import RunDir

pytestmark = pytest.mark.usefixtures("ray_session")

QUERY = "What were ACME Corp total net sales and Globex Inc revenue?"


@dataclass
class Message:
    id: int | None
    event: str
    data: dict[str, Any] = field(default_factory=dict)


async def sse_messages(response: httpx.Response) -> AsyncIterator[Message]:
    """Parse an SSE stream into messages (comment lines are skipped)."""
    msg_id: int | None = None
    kind, data = "message", ""
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield Message(msg_id, kind, json.loads(data))
            msg_id, kind, data = None, "message", ""
        elif line.startswith(":"):
            continue
        elif line.startswith("id: "):
            msg_id = int(line[4:])
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data += line[6:]


Serve = Callable[[Settings], Awaitable[httpx.AsyncClient]]


@pytest.fixture()
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []
    clients: list[httpx.AsyncClient] = []

    async def start(settings: Settings) -> httpx.AsyncClient:
        runner = web.AppRunner(create_app(settings))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.aclose()
    for runner in runners:
        await runner.cleanup()  # stops any run still going


async def start_run(client: httpx.AsyncClient, **body: Any) -> str:
    created = await client.post("/runs", json=body)
    assert created.status_code == 202, created.text
    run_id: str = created.json()["run_id"]
    return run_id


async def events_until_end(client: httpx.AsyncClient, run_id: str, after: int = 0) -> list[Message]:
    headers = {"Last-Event-ID": str(after)} if after else {}
    out = []
    async with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for message in sse_messages(response):
            out.append(message)
            if message.event == "end":
                break
    return out


async def test_start_stream_poll_and_read_the_report(
    serve: Serve, small_corpus: Path, make_settings: Any
) -> None:
    client = await serve(make_settings(small_corpus))
    created = await client.post("/runs", json={"query": QUERY, "mode": "quick"})
    assert created.status_code == 202, created.text
    run_id = created.json()["run_id"]

    messages = await events_until_end(client, run_id)
    events = [m for m in messages if m.event == "message"]
    seqs = [m.id for m in events]
    assert seqs == [m.data["seq"] for m in events] and seqs == sorted(seqs) and seqs[0] == 1
    assert events[-1].data["type"] == "run_finished"
    assert messages[-1].event == "end" and messages[-1].data["status"] == "completed"

    status = (await client.get(f"/runs/{run_id}")).json()
    assert status["status"] == "completed"
    assert status["usage"]["search_calls"] >= 1
    assert status["progress"]["percent"] == 100
    report = await client.get(f"/runs/{run_id}/report")
    assert report.status_code == 200
    assert report.headers["content-type"].startswith("text/markdown")
    assert "## Sources" in report.text and "[1]" in report.text
    listed = (await client.get("/runs")).json()["runs"]
    assert [r["status"] for r in listed if r["run_id"] == run_id] == ["completed"]

    # Reconnect after seq 3: exactly the rest, in order.
    rest = await events_until_end(client, run_id, after=3)
    assert [m.id for m in rest if m.event == "message"] == seqs[3:]
    missing = await client.get("/runs/20990101-000000-abcdef")
    assert missing.status_code == 404


async def test_a_disconnected_watcher_does_not_stop_the_run_and_can_resume(
    serve: Serve, small_corpus: Path, make_settings: Any
) -> None:
    settings = make_settings(small_corpus, **{"simulate.latency_s": 0.2})
    client = await serve(settings)
    run_id = await start_run(client, query=QUERY, mode="deep")
    seen: list[int] = []
    async with client.stream("GET", f"/runs/{run_id}/events") as response:
        async for message in sse_messages(response):
            seen.append(message.id or 0)
            if len(seen) == 3:
                break  # drop the connection mid-run
    assert (await client.get(f"/runs/{run_id}")).json()["status"] == "running"
    rest = await events_until_end(client, run_id, after=seen[-1])
    ids = [m.id for m in rest if m.event == "message"]
    assert ids[0] == seen[-1] + 1
    assert rest[-1].data["status"] == "completed"
    assert (await client.get(f"/runs/{run_id}/report")).status_code == 200


async def test_cancel_keeps_the_checkpoint_and_shows_interrupted(
    serve: Serve, small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus, **{"simulate.latency_s": 0.5, "service.max_runs": 1})
    client = await serve(settings)
    run_id = await start_run(client, query=QUERY, mode="deep")

    # The cap: a second run is refused while the first one goes.
    busy = await client.post("/runs", json={"query": QUERY})
    assert busy.status_code == 429
    assert int(busy.headers["Retry-After"]) >= 1
    assert "already going" in busy.json()["error"]

    async with client.stream("GET", f"/runs/{run_id}/events") as response:
        async for message in sse_messages(response):
            if message.data.get("type") == "researcher_started":
                break
    cancelled = await client.delete(f"/runs/{run_id}")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "interrupted"
    status = (await client.get(f"/runs/{run_id}")).json()
    assert status["status"] == "interrupted"
    assert "deep-research resume" in status["summary"]["reason"]
    assert RunDir.existing(tmp_path / "state", run_id).has_checkpoint()
    messages = await events_until_end(client, run_id)
    assert messages[-1].event == "end" and messages[-1].data["status"] == "interrupted"
    assert (await client.get(f"/runs/{run_id}/report")).status_code == 404
    again = await client.delete(f"/runs/{run_id}")
    assert again.status_code == 409 and again.json()["status"] == "interrupted"
    # The slot is free again.
    assert (await client.post("/runs", json={"query": "  "})).status_code == 422
    after = await client.post("/runs", json={"query": QUERY, "mode": "quick"})
    assert after.status_code == 202
    tail = await events_until_end(client, after.json()["run_id"])
    assert tail[-1].data["status"] == "completed"


def mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


async def test_reports_land_privately_under_the_state_dir(
    serve: Serve, small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    configured = make_settings(small_corpus)
    no_output = configured.model_copy(
        update={"run": configured.run.model_copy(update={"output_dir": None})}
    )
    client = await serve(no_output)
    run_id = await start_run(client, query=QUERY, mode="quick")
    messages = await events_until_end(client, run_id)
    assert messages[-1].data["status"] == "completed"
    summary = (await client.get(f"/runs/{run_id}")).json()["summary"]
    report = Path(summary["report_path"])
    assert report.parent == tmp_path / "state" / "reports"
    assert mode_of(report) == 0o600 and mode_of(report.parent) == 0o700
    assert await slots_free(client)


async def slots_free(client: Any, within_s: float = 30.0) -> bool:
    """The run's slot is given back when its task ends, a moment after the end event is sent."""
    deadline = asyncio.get_running_loop().time() + within_s
    while (await client.get("/runs")).json()["active"]:
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
