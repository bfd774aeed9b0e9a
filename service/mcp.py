"""The research run as a Model Context Protocol tool (``deep-research mcp``, stdio transport).

Coding agents and chat clients call ``research(query, mode, corpus)``; the run's events become MCP
progress notifications and the result is the report's Markdown. The intent gate runs first (in
``driver.prepare``): a greeting or a vague query returns the gate's reply instead of a report, a
harmful request is refused with an error result. A run is blocking Ray work, so it
runs in a worker thread while the server's loop keeps answering. The server joins Ray (or starts
a local one) on its first run and keeps that connection, so the crew (``actors/crew.py``) stays warm
for every later run; up to ``service.max_runs`` runs go at once.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from deepresearch.cluster import runtime
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError, QueryGated
from deepresearch.policies.lifecycle.progress import ProgressState, advance
from deepresearch.schemas import Event, RunSummary
from deepresearch.service.corpus_roots import check_corpus

INSTRUCTIONS = (
    "research(query) investigates a question across the configured sources (a local corpus "
    "folder, web search) and returns a cited Markdown report. mode='deep' plans sub-questions "
    "and researches them in parallel; it takes longer."
)


class ProgressRelay:
    """Turns run events into strictly increasing (progress, message) pairs out of 100."""

    def __init__(self) -> None:
        self.state = ProgressState()
        self.sent = -1.0

    def feed(self, event: Event) -> tuple[float, str] | None:
        before = self.state
        self.state = advance(self.state, event)
        percent = float(self.state.percent)
        if percent <= self.sent and self.state.phase == before.phase:
            return None
        progress = min(100.0, max(percent, self.sent + 0.01))
        if progress <= self.sent:
            return None
        self.sent = progress
        return progress, f"{self.state.phase}: {event.type}"


class RayOnce:
    """The server's one Ray connection: made on the first run (not at start-up, which would hold
    up the MCP handshake) and kept until the server exits."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._connection: runtime.Connection | None = None

    def ensure(self) -> None:
        with self._lock:
            if self._connection is None:
                self._connection = runtime.connect(self._settings.ray)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                runtime.disconnect(self._connection)
                self._connection = None


def run_research(
    settings: Settings,
    query: str,
    mode: Literal["quick", "deep"],
    corpus: str | None,
    on_events: Callable[[list[Event]], None],
    ray_once: RayOnce | None = None,
) -> tuple[RunSummary, str]:
    """One blocking run (prepare, execute) with the tool's arguments over the server's settings.

    The tool's ``corpus`` comes from whatever model drives the client, so it is held to the same
    ``service.corpus_roots`` as the HTTP service's (CorpusRefused outside them)."""
    from deepresearch.actors import crew
    from deepresearch.run import driver

    if corpus is not None:
        path = check_corpus(corpus, settings.service.corpus_roots)
        settings = settings.model_copy(
            update={"corpus": settings.corpus.model_copy(update={"path": path})}
        )
    prep = driver.prepare(query, mode, settings)
    if ray_once is not None:
        ray_once.ensure()
    summary = driver.execute(prep, on_events, crew=crew)
    report = Path(summary.report_path).read_text("utf-8") if summary.report_path else ""
    return summary, report


def build_server(settings: Settings, ray_once: RayOnce | None = None) -> MCPServer:
    """An ``MCPServer`` with the ``research`` tool bound to ``settings``."""
    server = MCPServer("deep-research", instructions=INSTRUCTIONS, log_level="WARNING")
    slots = asyncio.Semaphore(settings.service.max_runs)

    @server.tool()
    async def research(
        query: str,
        ctx: Context,
        mode: Literal["quick", "deep"] = "quick",
        corpus: str | None = None,
    ) -> str:
        """Research a question and return a cited Markdown report.

        Args:
            query: the question to research.
            mode: "quick" (one researcher) or "deep" (planner, parallel researchers, evaluator).
            corpus: a folder of documents on the server's machine to search (optional; only
                under the server's configured corpus roots).
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()

        def on_events(events: list[Event]) -> None:  # called in the run's thread
            for event in events:
                loop.call_soon_threadsafe(queue.put_nowait, event)

        async def relay() -> None:
            progress = ProgressRelay()
            while (event := await queue.get()) is not None:
                step = progress.feed(event)
                if step is not None:
                    await ctx.report_progress(step[0], 100.0, step[1])

        async with slots:
            relaying = asyncio.create_task(relay())
            try:
                summary, report = await asyncio.to_thread(
                    run_research, settings, query, mode, corpus, on_events, ray_once
                )
            except QueryGated as gated:  # no run: the gate's reply (a refusal is an error)
                if gated.outcome == "harmful":
                    raise ToolError(gated.reply) from None
                return gated.reply
            except DeepResearchError as exc:
                raise ToolError(str(exc)) from None
            except Exception as exc:  # the caller gets one line, not a generic failure
                raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from exc
            finally:
                queue.put_nowait(None)
                await relaying
        if not report:
            raise ToolError(f"no report ({summary.status}): {summary.reason}")
        return report

    return server


def serve_stdio(settings: Settings) -> None:
    ray_once = RayOnce(settings)
    try:
        build_server(settings, ray_once).run("stdio")
    finally:
        # A client that closes stdin gives the server a grace period (2 s in the official SDK),
        # then SIGTERMs its process tree. A local Ray's shutdown outlasts it, and Ray's own
        # SIGTERM handler printed a C++ stack trace on the client's log. Every run is on disk
        # by now and the tree's Ray processes go with it: a SIGTERM now ends the server quietly.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        ray_once.close()
