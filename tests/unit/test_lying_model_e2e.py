"""The issue's probe end to end without Ray: ``deep-research run --llm openai`` against a loopback
OpenAI-compatible server (the real openai/httpx client) whose model appends an invented figure
and a bogus citation to everything it writes. The run ends honestly, and neither the figure nor
the citation appears on stdout, stderr, in the report file, the run's events or its summary."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from list_sink import ListSink
from test_actors_inprocess import FakeFetcher, FakeGateway
from test_lying_model import TELLTALES, lied

from deepresearch import cli
from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.providers.assembly import from_settings as assembly
from deepresearch.providers.testing.openai_server import ScriptedOpenAIServer, Step
from deepresearch.run import driver
from deepresearch.schemas import RunSummary

CANNED: dict[str, Any] = {
    "PlanDraft": {"complexity": 1, "sub_questions": ["Widget units sold in 2024", "Widget plants"]},
    "QueryList": {"queries": ["widget units sold 2024"]},
    "FindingsDraft": {
        "summary": "Widget sales were found.",
        "findings": [{"text": "The source reports widget sales.", "sources": [1]}],
    },
    "Evaluation": {"action": "synthesize", "reason": "covered", "new_subtasks": []},
    "RewriteDraft": {"claims": []},
    "WriteDraft": {
        "answer": "Widget sales were reported.",
        "answer_sources": [1],
        "sections": [
            {
                "heading": "Widget sales",
                "findings": [{"text": "The source reports widget sales.", "sources": [1]}],
            }
        ],
    },
}
BOGUS_SOURCE = '"sources": [7]'  # the writer cites a number no source has: nothing is cited


def liar(writer_cites: str) -> Any:
    """Answers by the requested schema, with the lie after every string it writes."""

    def answer(body: dict[str, Any]) -> Step:
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name", "")
        assert name in CANNED, f"unexpected schema {name!r}"
        text = json.dumps(CANNED[name])
        if name == "WriteDraft":
            text = text.replace('"sources": [1]', writer_cites)
        return Step(text=json.dumps(lied(json.loads(text))), input_tokens=100, output_tokens=20)

    return answer


@pytest.fixture()
def sinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[ListSink]:
    for key in list(os.environ):
        if key.startswith(("DEEP_RESEARCH_", "OPENAI_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    seen: list[ListSink] = []

    def execute(prep: driver.Prepared, *args: Any, **kwargs: Any) -> RunSummary:
        """The run in-process over fake search, with the real model client from the settings."""
        s, sink = prep.settings, ListSink()
        llm = assembly.build_llm_provider(s, prep.keys, notify=sink.emit)
        spawner = LocalSpawner(s, FakeGateway(), UrlPool(), sink, llm, [FakeFetcher()])
        evaluator = Evaluator(llm) if prep.request.mode == "deep" else None
        coord = Coordinator(s, prep.request, sink, llm, spawner, evaluator)
        result = asyncio.run(coord.run())
        seen.append(sink)
        return driver.finish(prep, result, 0.1)

    monkeypatch.setattr(driver, "execute", execute)
    return seen


def written(report: Path, state: Path) -> list[str]:
    """The report file and every file of the run's state (record, summary, partial report)."""
    return [report.read_text("utf-8")] + [
        p.read_text("utf-8") for p in state.rglob("*") if p.is_file()
    ]


def run_cli(*argv: str) -> int:
    try:
        cli.cli.main(args=list(argv), prog_name="deep-research", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.mark.parametrize(
    ("mode", "writer_cites", "status"),
    [
        ("quick", '"sources": [1]', "completed"),
        # the probe: the draft cites nothing, so the extractive composer's Answer is used
        ("quick", BOGUS_SOURCE, "completed"),
        ("deep", '"sources": [1]', "completed"),  # plan items, headings, evaluator reasons
    ],
)
async def test_a_lying_openai_model_reaches_no_output(
    sinks: list[ListSink],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    mode: str,
    writer_cites: str,
    status: str,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    async with ScriptedOpenAIServer(liar(writer_cites)) as server:
        os.environ["OPENAI_BASE_URL"] = server.base_url
        try:
            query = "How many widget units were sold in 2024?"
            argv = ("run", query, "--llm", "openai", "--mode", mode)
            code = await asyncio.to_thread(
                run_cli, *argv, "--model", "gpt-test", "--output-dir", str(out), "--json"
            )
        finally:
            del os.environ["OPENAI_BASE_URL"]
        server.assert_no_unexpected()
        assert len(server.requests) >= 3  # query planning, findings, writer: the model was used
    captured = capfd.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert summary["status"] == status and code == (3 if status == "no_answer" else 0)
    shown = [captured.out, captured.err, json.dumps(sinks[0].events)]
    shown += written(Path(summary["report_path"]), tmp_path / "state")
    leaks = [(t, text[:300]) for text in shown for t in TELLTALES if t in text]
    assert leaks == []
    if writer_cites == BOGUS_SOURCE:  # the model's Answer was worse: the composer's is used
        assert any("this report is the composer's" in text for text in shown)
