"""Web search on Ray: SearXNG (loopback) -> crew gateway -> crew researcher -> safe fetcher ->
pages from the loopback fake web, with ``SEARXNG_URL`` reaching the gateway only in the run's
context. The crew actors are made here (unnamed) and one sub-task is sent straight to the
researcher, with the run opened on a run host for its pool and log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from web_settings import web_settings

from deepresearch.actors.members import CrewGateway, CrewResearcher
from deepresearch.actors.run_host import RunHost
from deepresearch.cluster import runtime
from deepresearch.config.settings import Settings
from deepresearch.per_run.run_context import RunContext, RunSpec
from deepresearch.providers.assembly import from_settings as assembly
from deepresearch.providers.testing.fake_web import FakeWeb
from deepresearch.providers.testing.searxng import FakeSearxng, result
from deepresearch.schemas import Request, ResearcherReport, SubTask
from deepresearch.storage.run_dir import RunDir

pytestmark = pytest.mark.usefixtures("ray_session")

QUESTION = "How much did solar output rise in the northern valley in 2024?"


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return assembly.with_default_search_chain(web_settings(tmp_path, {"researcher.queries": 2}))


async def run_researcher(
    settings: Settings, env: dict[str, str], tmp_path: Path
) -> tuple[ResearcherReport, list[dict[str, Any]]]:
    run_dir = RunDir.create(tmp_path / "state", "web-test")
    host = runtime.spawn(RunHost, "run_host")
    gateway = runtime.spawn(CrewGateway, "search_gateway")
    researcher = runtime.spawn(CrewResearcher, "researcher")
    context = RunContext(
        "web-test", settings, host, gateway, search_keys=RunContext.secret_env(env)
    )
    request = Request(run_id="web-test", query=QUESTION, mode="quick", created_at=0.0)
    await host.open.remote(RunSpec(context, request, str(run_dir.root), (researcher,)))
    try:
        task = SubTask(id="t1", question=QUESTION)
        report: ResearcherReport = await researcher.run.remote(context, task)
        events = [  # every event the actors sent
            {"type": e.type, **e.payload} for e in await host.log.remote("web-test", "events")
        ]
        return report, events
    finally:
        for handle in (researcher, gateway, host):
            runtime.kill(handle)


async def test_searxng_hits_are_fetched_from_the_fake_web_and_cited(
    tmp_path: Path, settings: Settings
) -> None:
    async with FakeWeb() as web:
        pages = [
            result(web.url("/article"), "Solar output in 2024", "solar output rose"),
            result(web.url("/pages/1"), "Fake page 1", "a reading"),
            # on topic, so source scoring lets it through and robots.txt must stop it
            result(web.url("/private/secret"), "Solar output secrets", "solar output in 2024"),
        ]
        async with FakeSearxng(default=pages) as searx:
            env = assembly.search_env(settings, {"SEARXNG_URL": searx.base_url, "HOME": "/x"})
            assert env == {"SEARXNG_URL": searx.base_url}
            report, events = await run_researcher(settings, env, tmp_path)
        fetched = web.paths("/")

    assert report.status == "ok", report.error
    assert searx.requests and all(r["format"] == "json" for r in searx.requests)
    read = {e["url"] for e in events if e["type"] == "source_read"}
    assert web.url("/article") in read
    assert "/private/secret" not in fetched  # robots.txt respected by the safe fetcher
    assert any(e["type"] == "fetch_failed" and "secret" in e["url"] for e in events)
    assert report.sources and {s.url for s in report.sources} <= read
    assert any("12 percent" in f.text for f in report.findings)
    assert not report.search_degraded


async def test_a_gateway_given_no_env_degrades_the_search_with_a_named_cause(
    tmp_path: Path, settings: Settings
) -> None:
    async with FakeSearxng(default=[result("http://127.0.0.1:9/x", "x")]) as searx:
        report, events = await run_researcher(settings, {}, tmp_path)
    assert report.search_degraded and not searx.requests
    unavailable = [e for e in events if e["type"] == "search_unavailable"]
    assert unavailable and "SEARXNG_URL" in unavailable[0]["error"]


async def test_deep_run_over_the_fake_web_through_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search → fetch → extract → report, end to end through ``driver.prepare``/``execute``:
    the report cites the fake pages' URLs, and no page is fetched twice across researchers."""
    import asyncio
    import json

    from report_checks import body_of, find_unresolved

    from deepresearch.actors import crew
    from deepresearch.run import driver

    settings = web_settings(tmp_path, {})
    async with FakeWeb() as web:
        pages = [
            result(web.url("/article"), "Solar output in 2024", "solar output rose"),
            result(web.url("/pages/1"), "Fake page 1", "a reading"),
            result(web.url("/pages/2"), "Fake page 2", "another reading"),
        ]
        async with FakeSearxng(default=pages) as searx:
            monkeypatch.setenv("SEARXNG_URL", searx.base_url)
            prep = driver.prepare(
                "How much did solar output rise in 2024, and what did the readings show?",
                "deep",
                settings,
            )
            summary = await asyncio.to_thread(driver.execute, prep, crew=crew)
        fetched = web.paths("/")
    assert summary.status == "completed", summary.reason
    cited = {s.url for s in summary.sources}
    assert web.url("/article") in cited
    assert all(url.startswith(web.url("/")) for url in cited)
    report = await asyncio.to_thread(Path(summary.report_path or "").read_text)
    assert find_unresolved(body_of(report), len(summary.sources)) == []
    assert searx.base_url not in report
    events = [
        json.loads(x)
        for x in (tmp_path / "state" / "runs" / summary.run_id / "events.jsonl")
        .read_text()
        .splitlines()
    ]
    read = [e["payload"]["url"] for e in events if e["type"] == "source_read"]
    assert len(read) == len(set(read))
    page_requests = [p for p in fetched if p != "/robots.txt"]
    assert len(page_requests) == len(set(page_requests))  # each page fetched once per run
