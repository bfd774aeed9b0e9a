"""Two runs at once through one crew: the same researcher and gateway processes serve both, yet
each run sees only its own URL pool, events, search env and keys, and the crew forgets both once
they end. A crew actor killed mid-run is replaced and the run still finishes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import ray
from pydantic import SecretStr
from web_settings import web_settings

from deepresearch.actors import crew
from deepresearch.providers.testing.fake_web import FakeWeb
from deepresearch.providers.testing.searxng import FakeSearxng, result
from deepresearch.run import driver
from deepresearch.schemas import Event

pytestmark = pytest.mark.usefixtures("ray_session")


def events_of(state: Path, run_id: str) -> list[dict[str, Any]]:
    text = (state / "runs" / run_id / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def read_urls(events: list[dict[str, Any]]) -> set[str]:
    return {e["payload"]["url"] for e in events if e["type"] == "source_read"}


async def test_two_runs_at_once_share_the_crew_but_nothing_of_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = web_settings(tmp_path, {"researcher.queries": 1})
    state = tmp_path / "state"
    secrets = {"a": "sk-crew-test-key-of-run-a", "b": "sk-crew-test-key-of-run-b"}
    async with FakeWeb(latency_s=0.3) as web:  # slow pages: the two runs overlap
        shared = web.url("/article")  # both searches return it: each run must fetch it itself
        only = {"a": web.url("/pages/1"), "b": web.url("/pages/2")}
        hits = {
            name: [
                result(shared, "Solar output in 2024", "solar output rose in 2024"),
                result(only[name], "Solar output readings", "solar output readings in 2024"),
            ]
            for name in ("a", "b")
        }
        async with (
            FakeSearxng(default=hits["a"]) as searx_a,
            FakeSearxng(default=hits["b"]) as searx_b,
        ):
            preps = {}
            for name, searx in (("a", searx_a), ("b", searx_b)):
                monkeypatch.setenv("SEARXNG_URL", searx.base_url)  # each run's own search env
                prep = driver.prepare("How much did solar output rise in 2024?", "quick", settings)
                keys = prep.keys.model_copy(update={"openai_api_key": SecretStr(secrets[name])})
                preps[name] = dataclasses.replace(prep, keys=keys)
            summaries = dict(
                zip(
                    preps,
                    await asyncio.gather(
                        *(asyncio.to_thread(driver.execute, p, crew=crew) for p in preps.values())
                    ),
                    strict=True,
                )
            )
        article_fetches = len(web.paths("/article"))

    events = {name: events_of(state, s.run_id) for name, s in summaries.items()}
    for name, summary in summaries.items():
        assert summary.status == "completed", summary.reason
        other = "b" if name == "a" else "a"
        assert {e["run_id"] for e in events[name]} == {summary.run_id}
        assert shared in read_urls(events[name]) and only[other] not in read_urls(events[name])
        assert not [e for e in events[name] if e["type"] == "source_reused"]
    assert searx_a.requests and searx_b.requests  # each run searched with its own env
    assert article_fetches == 2  # one pool per run: the shared URL was read once by each

    spans = [(ev[0]["ts"], ev[-1]["ts"]) for ev in events.values()]
    assert max(s[0] for s in spans) < min(s[1] for s in spans), "the runs did not overlap"
    handles = crew.join(settings, detached=True)
    crew_pids = set(ray.get([r.pid.remote() for r in handles.researchers]))
    for name in events:
        started = [e["payload"]["pid"] for e in events[name] if e["type"] == "researcher_started"]
        assert started and set(started) <= crew_pids

    members = [*handles.hosts, *handles.researchers, handles.gateway]
    ids = {s.run_id for s in summaries.values()}

    def still_held() -> set[str]:
        return ids & set().union(*ray.get([m.held.remote() for m in members]))

    # released at the end: the host tells the members once the run is closed, not in its reply
    deadline = time.monotonic() + 60
    while still_held() and time.monotonic() < deadline:  # noqa: ASYNC110 (remote state)
        await asyncio.sleep(0.1)
    assert not still_held()

    assert_no_secret(state, [Path(s.report_path or "") for s in summaries.values()], secrets)


def assert_no_secret(state: Path, reports: list[Path], secrets: dict[str, str]) -> None:
    """The keys travelled to the crew and back out nowhere: no run file, no report."""
    files = [p for p in state.rglob("*") if p.is_file()] + reports
    assert reports and all(p.exists() for p in reports)
    for path in files:
        text = path.read_text(errors="replace")
        assert not any(secret in text for secret in secrets.values()), path


def test_a_killed_search_gateway_is_replaced_and_the_run_finishes(
    small_corpus: Path, make_settings: Any
) -> None:
    settings = make_settings(small_corpus, **{"simulate.latency_s": 0.3})
    handles = crew.join(settings, detached=True)
    before = ray.get(handles.gateway.pid.remote())
    prep = driver.prepare("What were ACME Corp total net sales in 2024?", "quick", settings)
    killed: list[int] = []

    def on_events(batch: list[Event]) -> None:
        if not killed and any(e.type == "researcher_started" for e in batch):
            os.kill(before, signal.SIGKILL)
            killed.append(before)

    summary = driver.execute(prep, on_events, crew=crew)
    assert killed
    assert summary.status == "completed", summary.reason
    after = ray.get(handles.gateway.pid.remote())  # the same named actor, a new process
    assert after != before
