"""The run's ``EventLog`` as the sinks a run host hands out in its own process: the run's event
sink (``LocalSink``) and its URL pool's document sink (``LogDocs``), which writes page texts and
search records without holding up a claim.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from deepresearch.per_run.event_log import EventLog
from deepresearch.per_run.latency_hiding import Background
from deepresearch.schemas import FetchedDoc, SearchRecord


class LocalSink:
    """The run's ``EventLog`` object as an ``EventSink`` (and ``BatchSink``) in this process."""

    def __init__(self, events: EventLog) -> None:
        self._log = events

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        await self._log.append(type, payload or {})

    async def emit_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
        await self._log.append_many(events)

    async def checkpoint(self, data: dict[str, Any]) -> None:
        await self._log.checkpoint(data)

    async def write_text(self, name: str, text: str) -> None:
        await self._log.write_text(name, text)


class LogDocs:
    """The pool's ``DocSink``: texts go to the run's ``docs.jsonl`` (search records to its
    ``searches.jsonl``) without holding up a claim, one batch after another in the background
    (pages written in a worker thread)."""

    def __init__(self, events: EventLog) -> None:
        self._log = events
        self._out = Background(LocalSink(events))

    def save_docs(self, docs: Sequence[FetchedDoc]) -> None:
        self._out.submit(self._log.append_docs(list(docs)))

    def save_searches(self, records: Sequence[SearchRecord]) -> None:
        self._out.submit(self._log.append_searches(list(records)))

    async def flush(self) -> None:
        """Every batch saved so far is written (or failed: a follow-up only loses out)."""
        with contextlib.suppress(Exception):
            await self._out.flush()


__all__ = ["LocalSink", "LogDocs"]
