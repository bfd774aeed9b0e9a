"""``deep-research mcp`` through the official MCP client over stdio: tools, progress, the report.

The server is a child process (``python -m deepresearch mcp``) that starts its own local Ray.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_env import cli_env

from deepresearch.schemas import Event
from deepresearch.service.mcp import ProgressRelay


def server_env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path, drop=("RAY_",))


@pytest.mark.slow
async def test_research_tool_returns_the_report_with_progress(
    small_corpus: Path, tmp_path: Path
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    out = tmp_path / "out"
    out.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "deepresearch",
            "mcp",
            "--output-dir",
            str(out),
            "--corpus-root",
            str(small_corpus.parent),
        ],
        env=server_env(tmp_path),
    )
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    errlog = (tmp_path / "server.err").open("w")
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        assert [tool.name for tool in tools.tools] == ["research"]
        schema = tools.tools[0].input_schema
        assert set(schema["properties"]) == {"query", "mode", "corpus"}
        result = await session.call_tool(
            "research",
            {
                "query": "What were ACME Corp total net sales for the quarter ended March 31, 2024?",
                "corpus": str(small_corpus),
            },
            progress_callback=on_progress,
        )
        assert not result.is_error, result.content
        text = result.content[0].text
        assert "1,234" in text
        assert len(list(out.glob("*.md"))) == 1

        bad = await session.call_tool("research", {"query": "   "})
        assert bad.is_error
        assert "query is empty" in bad.content[0].text

        outside = await session.call_tool("research", {"query": "What?", "corpus": "/etc"})
        assert outside.is_error and "corpus roots" in outside.content[0].text

    errlog.close()
    # the client closed stdin, waited, then SIGTERMed the server mid Ray shutdown: quietly
    server_log = (tmp_path / "server.err").read_text()
    assert "SIGTERM received" not in server_log and "Traceback" not in server_log, server_log
    # Ray joined from the tool's worker thread: no notice about the handler it could not set
    assert "SIGTERM handler" not in server_log, server_log
    assert progress, "no progress notifications arrived"
    values = [value for value, _, _ in progress]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert all(total == 100.0 for _, total, _ in progress)


def test_progress_relay_is_strictly_increasing() -> None:
    relay = ProgressRelay()
    kinds = ["run_started", "plan_ready", "researcher_started", "source_read", "source_read"]
    steps = [
        relay.feed(Event(run_id="r", seq=i + 1, ts=0.0, type=kind, payload={}))
        for i, kind in enumerate(kinds)
    ]
    values = [step[0] for step in steps if step is not None]
    assert values and values == sorted(values) and len(set(values)) == len(values)
    assert all(v <= 100 for v in values)


def test_the_tool_refuses_a_corpus_outside_the_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepresearch.config.settings import load_settings
    from deepresearch.errors import CorpusRefused
    from deepresearch.run import driver
    from deepresearch.service.mcp import run_research

    def never(*_: object, **__: object) -> None:
        raise AssertionError("a refused corpus must not reach prepare")

    monkeypatch.setattr(driver, "prepare", never)
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "private"
    secret.mkdir(mode=0o700)
    (root / "escape").symlink_to(secret, target_is_directory=True)
    closed = load_settings(None, {"state_dir": tmp_path / "state"}, env={})
    with pytest.raises(CorpusRefused, match="corpus_roots is empty"):
        run_research(closed, "What?", "quick", str(secret), lambda events: None)
    rooted = load_settings(None, {"service": {"corpus_roots": [root]}}, env={})
    for corpus in ("/etc", str(secret), str(root / "escape")):
        with pytest.raises(CorpusRefused, match="corpus roots"):
            run_research(rooted, "What?", "quick", corpus, lambda events: None)


async def test_a_corpus_path_with_a_nul_byte_is_a_clear_tool_error(tmp_path: Path) -> None:
    """It was ``internal error: ValueError: embedded null byte``; no run starts either way."""
    from mcp import Client

    from deepresearch.config.settings import load_settings
    from deepresearch.service.mcp import build_server

    root = tmp_path / "root"
    root.mkdir()
    flags = {"state_dir": tmp_path / "state", "service": {"corpus_roots": [root]}}
    server = build_server(load_settings(None, flags, env={}))
    async with Client(server) as client:
        result = await client.call_tool("research", {"query": "What?", "corpus": f"{root}/a\0b"})
    assert result.is_error
    text = result.content[0].text
    assert "cannot contain a NUL byte" in text and "internal error" not in text
    assert not (tmp_path / "state").exists()
