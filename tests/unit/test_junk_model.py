"""A model that speaks junk or cannot be reached, end to end without Ray: ``deep-research run
--llm openai`` against the loopback OpenAI-compatible server (the real openai/httpx client) over
the fake search of ``test_actors_inprocess``. Nothing the junk model says is shown as a search
query, the report says why the sources read gave no answer, and an unreachable model ends the
same way in quick and deep mode."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from list_sink import ListSink
from test_lying_model_e2e import CANNED
from test_lying_model_e2e import sinks as sinks  # the in-process run, as a fixture here too

from deepresearch import cli
from deepresearch.providers.testing.openai_server import ScriptedOpenAIServer, Step

JUNK = "Reply with the JSON object now."
QUERY = "How many widget units were sold in 2024?"


INVENTED = "Widget sales reached 999,999 million units in 2024."


def junk(body: dict[str, Any]) -> Step:
    """Plans like a model, but its queries are junk and its one finding states a figure no page
    holds, citing a source that does not exist: no claim it makes about the pages read stands."""
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    assert name in CANNED, f"unexpected schema {name!r}"
    reply = dict(CANNED[name])
    if name == "QueryList":
        reply = {"queries": [JUNK, "Output only JSON."]}
    elif name == "FindingsDraft":
        reply = {"summary": JUNK, "findings": [{"text": INVENTED, "sources": [99]}]}
    return Step(text=json.dumps(reply), input_tokens=100, output_tokens=20)


def run_cli(*argv: str) -> int:
    """The CLI as ``main`` runs it (every error one line and an exit code), minus its signal
    handler, which only the main thread may install."""
    try:
        cli._main(list(argv), debug=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


async def run_against(
    base_url: str, mode: str, out: Path, capfd: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any], str]:
    os.environ["OPENAI_BASE_URL"] = base_url
    try:
        argv = ("run", QUERY, "--llm", "openai", "--mode", mode, "--model", "gpt-test")
        code = await asyncio.to_thread(run_cli, *argv, "--output-dir", str(out), "--json")
    finally:
        del os.environ["OPENAI_BASE_URL"]
    captured = capfd.readouterr()
    lines = [x for x in captured.out.strip().splitlines() if x.startswith("{")]
    return code, json.loads(lines[-1]) if lines else {}, captured.err


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_junk_queries_are_neither_searched_nor_listed(
    sinks: list[ListSink], tmp_path: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    """The model's "Reply with the JSON object now." was searched and then listed under "What
    was searched"; its claims were dropped, and the report said no relevant source was found
    though eight pages were read."""
    async with ScriptedOpenAIServer(junk) as server:
        code, summary, err = await run_against(server.base_url, mode, tmp_path, capfd)
        server.assert_no_unexpected()
    assert summary["status"] == "no_answer" and code == 3, err
    report = await asyncio.to_thread(Path(summary["report_path"]).read_text, "utf-8")
    events = json.dumps(sinks[0].events)
    assert JUNK not in report and "Output only JSON" not in report and JUNK not in events
    assert "999,999" not in report
    assert "no source relevant to the question was found" not in report
    researchers = 1 if mode == "quick" else 2  # the plan's two sub-questions
    read = f"{8 * researchers} source(s) were read, but the model's {researchers} claim(s)"
    assert read in report, report
    assert "dropped as unsupported" in report
    listed = next(x for x in report.splitlines() if x.startswith("What was searched"))
    assert "widget" in listed.lower()  # the question itself, searched instead


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_an_unreachable_model_fails_the_run_the_same_way_in_both_modes(
    sinks: list[ListSink], tmp_path: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    """Quick ended ``no_answer`` (3, "every researcher failed") and deep ``failed`` (1, the
    planner's error). It is a failure of the model, not of the sources: ``failed``, exit 1, the
    model's error as the reason, in both."""
    async with ScriptedOpenAIServer([]) as server:
        closed = server.base_url  # nothing listens here once the server is gone
    code, summary, err = await run_against(closed, mode, tmp_path, capfd)
    assert code == 1, err
    assert "no tier answered" in err and "connection failed" in err
    assert summary == {} or summary["status"] == "failed"
