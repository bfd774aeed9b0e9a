"""The EventLog, a plain object the run host holds for each run: the run's append-only event stream,
checkpoints and progressive report.

Every actor reports what it does here; the CLI (or a second terminal) follows the stream with a
long poll (``wait``). Writing goes through ``storage.RunDir`` so the on-disk format lives in one place.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import JsonValue

from deepresearch.config.trust import FollowUpSettings
from deepresearch.errors import StorageError
from deepresearch.policies.follow_up.reuse import doc_allowance, keep_for_follow_up
from deepresearch.schemas import Event, FetchedDoc, SearchRecord
from deepresearch.storage.run_dir import RunDir


class EventLog:
    def __init__(
        self,
        run_dir: str,
        run_id: str,
        start_seq: int = 0,
        clock: Callable[[], float] = time.time,
        doc_caps: tuple[int, int] | None = None,  # (per document, whole run) in characters
    ) -> None:
        defaults = FollowUpSettings()
        self._doc_caps = doc_caps or (defaults.doc_cap_chars, defaults.total_cap_chars)
        self._dir = RunDir(Path(run_dir))
        self._doc_chars = self._dir.docs_size()  # a resumed run continues the same budget
        self._docs_stopped = False
        self._searches_stopped = False
        self._run_id = run_id
        self._seq = start_seq
        self._last_ts = 0.0
        self._clock = clock
        self._events: list[Event] = []
        self._changed: asyncio.Condition | None = None
        self._writing: asyncio.Lock | None = None
        self._appending: asyncio.Lock | None = None

    def _condition(self) -> asyncio.Condition:
        # Created lazily so it binds to the actor's running loop, not the constructor's thread.
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def append(self, type: str, payload: dict[str, JsonValue] | None = None) -> int:
        return await self.append_many([(type, payload or {})])

    async def append_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> int:
        """Several events from one emitter in one call and one fsync, in their order (see
        ``per_run.latency_hiding``); the sequence number of the last one. Each is stamped as it
        arrives, never earlier than the one before it, so ``seq`` and ``ts`` order the log alike
        (a stamp taken by the emitter would go back in time whenever a burst arrived late).

        The write and its fsync run in a worker thread: a run host holds many runs' logs on one
        event loop, and a disk stall in one must not hold up the others. Appends take turns, and
        an event is counted (``seq``, ``wait``) only once it is on disk."""
        if self._appending is None:  # bound to the actor's running loop, like the condition
            self._appending = asyncio.Lock()
        async with self._appending:
            self._last_ts = max(self._last_ts, round(self._clock(), 3))
            batch = [
                Event(
                    seq=self._seq + k,
                    ts=self._last_ts,
                    run_id=self._run_id,
                    type=type,
                    payload=payload or {},
                )
                for k, (type, payload) in enumerate(events, start=1)
            ]
            await asyncio.to_thread(self._dir.append_events, batch)
            self._seq += len(batch)
            self._events.extend(batch)
        await self._notify()
        return batch[-1].seq if batch else self._seq

    async def _notify(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    async def wait(self, after: int, timeout_s: float = 1.0) -> list[Event]:
        """Events with ``seq > after``; waits up to ``timeout_s`` when there are none yet."""
        cond = self._condition()
        async with cond:
            if self._seq <= after:
                try:
                    await asyncio.wait_for(cond.wait_for(lambda: self._seq > after), timeout_s)
                except TimeoutError:
                    return []
        return [e for e in self._events if e.seq > after]

    async def events(self) -> list[Event]:
        return list(self._events)

    async def checkpoint(self, data: dict[str, Any]) -> None:
        """In a worker thread: a checkpoint is several fsyncs, and events keep being appended
        (researchers wait on them) while it is written. One file write at a time, in order."""
        async with self._file_lock():
            await asyncio.to_thread(self._dir.write_checkpoint, data)

    async def write_text(self, name: str, text: str) -> None:
        async with self._file_lock():
            await asyncio.to_thread(self._dir.write_text, name, text)

    def _file_lock(self) -> asyncio.Lock:
        if self._writing is None:  # bound to the actor's running loop, like the condition
            self._writing = asyncio.Lock()
        return self._writing

    async def append_docs(self, docs: list[FetchedDoc]) -> None:
        """Keep read documents for a later follow-up run (``docs.jsonl``), within the caps.

        Called by the UrlPool's sink one batch at a time (``LogDocs``); page text never goes
        into ``events.jsonl``. The writing runs in a worker thread: the run host's loop serves
        every run it holds, and a page's JSON line is kilobytes to encode and write."""
        per_doc, total = self._doc_caps
        kept: list[FetchedDoc] = []
        for doc in docs:
            if self._docs_stopped:
                break
            if not keep_for_follow_up(doc):
                continue
            allowed = doc_allowance(self._doc_chars, len(doc.text), per_doc, total)
            if allowed <= 0:  # the run's cap is used up: say so once
                self._docs_stopped = True
                await self.append("docs_cap_reached", {"total_chars": total})
                break
            if allowed < len(doc.text):
                doc = doc.model_copy(update={"text": doc.text[:allowed]})
            self._doc_chars += allowed
            kept.append(doc)
        if not kept:
            return

        def write() -> None:
            for kept_doc in kept:
                self._dir.append_doc(kept_doc)

        try:
            await asyncio.to_thread(write)
        except StorageError as exc:  # only later follow-ups lose out: this run goes on
            self._docs_stopped = True
            await self.append("docs_write_failed", {"error": exc.reason})

    async def append_searches(self, records: list[SearchRecord]) -> None:
        """Keep search records (``searches.jsonl``) for a resume of this run, written in a worker
        thread as pages are (``append_docs``). A failed write only means a resume searches
        again: said once, and the run goes on."""
        if self._searches_stopped:
            return

        def write() -> None:
            for record in records:
                self._dir.append_search(record)

        try:
            await asyncio.to_thread(write)
        except StorageError as exc:
            self._searches_stopped = True
            await self.append("searches_write_failed", {"error": exc.reason})

    async def close(self) -> None:
        self._dir.close()


class EventSink(Protocol):
    """Where actors send events: the run's EventLog (through its run host), a list in unit tests."""

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None: ...

    async def checkpoint(self, data: dict[str, Any]) -> None: ...

    async def write_text(self, name: str, text: str) -> None: ...
