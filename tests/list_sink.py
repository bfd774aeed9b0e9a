"""An ``EventSink`` that keeps everything in memory, for tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from deepresearch.schemas import FetchedDoc, SearchRecord


class ListSink:
    """Collects events in memory."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, JsonValue]]] = []
        self.checkpoints: list[dict[str, Any]] = []
        self.files: dict[str, str] = {}
        self.docs: list[FetchedDoc] = []
        self.searches: list[SearchRecord] = []

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        self.events.append((type, dict(payload or {})))

    async def checkpoint(self, data: dict[str, Any]) -> None:
        self.checkpoints.append(data)

    async def write_text(self, name: str, text: str) -> None:
        self.files[name] = text

    def save_docs(self, docs: Sequence[FetchedDoc]) -> None:
        self.docs.extend(docs)

    def save_searches(self, records: Sequence[SearchRecord]) -> None:
        self.searches.extend(records)

    def types(self) -> list[str]:
        return [t for t, _ in self.events]
