"""A model that speaks junk or cannot be reached, end to end without Ray: ``deep-research run
--llm openai`` against the loopback OpenAI-compatible server (the real openai/httpx client) over
the fake search of ``test_actors_inprocess``. Nothing the junk model says is shown as a search
query, the report says why the sources read gave no answer, and an unreachable model ends the
same way in quick and deep mode: on extractive, saying so, unless the user emptied the fallback."""

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
    base_url: str, mode: str, out: Path, capfd: pytest.CaptureFixture[str], *more: str
) -> tuple[int, dict[str, Any], str]:
    os.environ["OPENAI_BASE_URL"] = base_url
    try:
        argv = ("run", QUERY, "--llm", "openai", "--mode", mode, "--model", "gpt-test", *more)
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
async def test_an_unreachable_model_falls_back_to_extractive_and_says_so(
    sinks: list[ListSink], tmp_path: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    """With a model configured and ``llm.fallback`` unset, the chain ends in ``extractive``: a
    model that cannot be reached costs the run its model, not its report (it failed, exit 1).
    The report's note says which roles fell back, from what, to what and why; the events say
    it as it happens; the footer counts model-free steps, not LLM calls."""
    async with ScriptedOpenAIServer([]) as server:
        closed = server.base_url  # nothing listens here once the server is gone
    code, summary, err = await run_against(closed, mode, tmp_path, capfd)
    assert (code, summary.get("status")) == (0, "completed"), err
    report = await asyncio.to_thread(Path(summary["report_path"]).read_text, "utf-8")
    roles = ["researcher", "writer"] if mode == "quick" else ["planner", "researcher", "writer"]
    for role in roles:
        line = f"The {role} fell back from openai:gpt-test to extractive:extractive-v1: "
        assert line in report, report
    assert "connection failed (ConnectError)" in report
    usage = next(x for x in report.splitlines() if x.startswith("- Usage: "))
    assert "extractive steps (no model)" in usage and "LLM calls" not in usage, usage
    events = [(kind, payload) for kind, payload in sinks[0].events if kind.startswith("llm_")]
    fell = [p for kind, p in events if kind == "llm_fallback"]
    assert {p["role"] for p in fell} >= set(roles)
    assert all(p["from"] == "openai:gpt-test" and p["why"] for p in fell), fell
    assert any(kind == "llm_retry" for kind, _ in events)


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_an_emptied_fallback_fails_the_run_the_same_way_in_both_modes(
    sinks: list[ListSink], tmp_path: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    """``llm.fallback: []`` is the user's choice of no fallback: an unreachable model fails the
    run, ``failed`` and exit 1 in quick and deep mode alike, the model's error as the reason
    (quick had ended ``no_answer``, exit 3), recorded in the run's summary."""
    config = tmp_path / "config.yaml"
    await asyncio.to_thread(config.write_text, "llm:\n  fallback: []\n", "utf-8")
    async with ScriptedOpenAIServer([]) as server:
        closed = server.base_url
    code, summary, err = await run_against(closed, mode, tmp_path, capfd, "--config", str(config))
    assert code == 1, err
    assert "no tier answered" in err and "connection failed" in err
    assert summary == {} or summary["status"] == "failed"


def schema_echo(body: dict[str, Any]) -> Step:
    """A small model's answer to a request for ``queries``: the schema's title and type, not
    the data (as a 135M model answers); every other role as asked."""
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    assert name in CANNED, f"unexpected schema {name!r}"
    if name == "QueryList":
        text = json.dumps({"title": "QueryList", "type": {"queries": "array"}})
    else:
        text = json.dumps(CANNED[name])
    return Step(text=text, input_tokens=100, output_tokens=20)


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_replies_that_stay_invalid_fall_back_and_every_call_is_counted(
    sinks: list[ListSink], tmp_path: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    """The researcher's query plan stayed invalid after its repair: the run had failed (exit 3
    quick, exit 1 deep). Now the researcher falls to ``extractive`` for that step, the run
    completes, the note says why, and the footer counts each request the server saw (the
    invalid ones and their tokens too), flags the unpriced model and the model-free steps."""
    async with ScriptedOpenAIServer(schema_echo) as server:
        code, summary, err = await run_against(server.base_url, mode, tmp_path, capfd)
        server.assert_no_unexpected()
        seen = len(server.requests)
    assert (code, summary.get("status")) == (0, "completed"), err
    report = await asyncio.to_thread(Path(summary["report_path"]).read_text, "utf-8")
    line = "The researcher fell back from openai:gpt-test to extractive:extractive-v1: "
    assert line + "invalid reply after one repair (queries: Field required" in report, report
    usage = summary["usage"]
    assert usage["llm_calls"] == seen and usage["input_tokens"] == 100 * seen
    assert usage["output_tokens"] == 20 * seen and usage["extractive_steps"] >= 1
    footer = next(x for x in report.splitlines() if x.startswith("- Usage: "))
    assert f"{seen} LLM calls" in footer
    assert "cost unpriced (gpt-test: not in llm.prices)" in footer and "$0.0000" not in footer
    assert "extractive steps (no model)" in footer
    invalid = [p for kind, p in sinks[0].events if kind == "llm_invalid_reply"]
    assert invalid and all(p["role"] == "researcher" for p in invalid)
