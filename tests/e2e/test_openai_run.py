"""A whole deep run through the installed CLI against the loopback OpenAI-compatible server with a
fake key: the real openai client, structured output, cost from the price table, per-role tiers in
--json and the footer, and the key nowhere on disk, in the output, or in the events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from cli_env import EXE, cli_env

from deepresearch.providers.testing.openai_server import ScriptedOpenAIServer, Step

pytestmark = pytest.mark.slow
FAKE_KEY = "sk-test-" + "Zq9" * 12  # looks like a key; exists nowhere else


def read_all(root: Path) -> list[str]:
    return [p.read_text(errors="replace") for p in root.rglob("*") if p.is_file()]


def answer(body: dict[str, Any]) -> Step:
    """Reply by the requested schema, like a well-behaved model."""
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    replies: dict[str, Any] = {
        "PlanDraft": {
            "complexity": 1,
            "sub_questions": ["ACME Corp total net sales 2024", "Globex Inc revenue 2024"],
        },
        "QueryList": {"queries": ["total net sales revenue 2024"]},
        "FindingsDraft": {
            "summary": "Sales figures were found.",
            "findings": [{"text": "The source reports quarterly sales.", "sources": [1]}],
        },
        "Evaluation": {"action": "synthesize", "reason": "covered", "new_subtasks": []},
        "RewriteDraft": {"claims": []},  # the citation verifier's one rewrite: drop them
        "WriteDraft": {
            "answer": "Both companies reported sales.",
            "answer_sources": [1],
            "sections": [
                {
                    "heading": "Sales",
                    "findings": [{"text": "The source reports quarterly sales.", "sources": [1]}],
                }
            ],
        },
    }
    assert name in replies, f"unexpected schema {name!r}"
    return Step(text=json.dumps(replies[name]), input_tokens=1000, output_tokens=100)


async def test_deep_run_with_a_scripted_openai_server_never_leaks_the_key(
    small_corpus: Path, tmp_path: Path
) -> None:
    async with ScriptedOpenAIServer(answer) as server:
        env = cli_env(
            tmp_path,
            {
                "OPENAI_API_KEY": FAKE_KEY,
                "OPENAI_BASE_URL": server.base_url,
                "DEEP_RESEARCH_LLM__PRICES": json.dumps(
                    {"gpt-test": {"input_per_mtok": 2.0, "output_per_mtok": 10.0}}
                ),
                # The canned sentences are about no page in particular: the citation verifier
                # still runs (its counts are checked below) but accepts any figure-free claim.
                "DEEP_RESEARCH_VERIFY__MIN_SUPPORT": "0",
            },
            drop=("OPENAI_",),
        )
        proc = await asyncio.create_subprocess_exec(
            EXE,
            "run",
            "Compare ACME Corp total net sales and Globex Inc revenue",
            "--mode",
            "deep",
            "--corpus",
            str(small_corpus),
            "--llm",
            "openai",
            "--model",
            "gpt-test",
            "--json",
            "--output-dir",
            str(tmp_path),
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out_b, err_b = await asyncio.wait_for(proc.communicate(), 300)
    out, err = out_b.decode(), err_b.decode()
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["status"] == "completed"
    assert (
        summary["providers"]["planner"] == "openai" and summary["providers"]["writer"] == "openai"
    )
    assert summary["providers"]["researcher"] == "openai"
    calls = len(server.requests)
    assert summary["usage"]["llm_calls"] == calls
    assert summary["usage"]["input_tokens"] == 1000 * calls
    assert summary["usage"]["cost_usd"] == pytest.approx(calls * (1000 * 2.0 + 100 * 10.0) / 1e6)
    assert all(r.body["model"] == "gpt-test" for r in server.requests)
    assert all(r.headers.get("Authorization") == f"Bearer {FAKE_KEY}" for r in server.requests)
    report = await asyncio.to_thread(Path(summary["report_path"]).read_text)
    assert "without a language model" not in report and "openai" in report.split("\n---\n")[-1]
    assert "Claims: " in report.split("\n---\n")[-1]  # verified on the Ray path too
    # The key is nowhere: not in any file of the run, the report, stdout or stderr.
    haystacks = [out, err, report, *await asyncio.to_thread(read_all, tmp_path / "state")]
    assert len(haystacks) > 4
    assert not [h for h in haystacks if FAKE_KEY in h or FAKE_KEY[8:20] in h]
