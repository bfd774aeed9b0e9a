"""The run directory: events, checkpoints, documents read and the progressive report of one run.

A crash (power loss, ``kill -9``, a full disk) must never leave a half-written report, checkpoint or
event log that resume then trusts. Hence: whole files are written atomically (``private_files``);
events are appended one fsynced line at a time and a torn last line is dropped; checkpoints carry
a sha256 and the previous good one is kept. The run folder is 0700 and every file in it 0600.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from deepresearch.errors import CheckpointCorrupt, StorageError
from deepresearch.schemas import Event, FetchedDoc, SearchRecord
from deepresearch.storage.private_files import (
    O_NOFOLLOW,
    create_exclusive,
    make_private_dir,
    make_private_dirs,
    open_private_append,
    reason,
    write_atomic,
)

__all__ = [  # write_atomic and create_exclusive live in private_files; imported from here too
    "CHECKPOINT",
    "CHECKPOINT_PREV",
    "DOCS",
    "EVENTS",
    "SEARCHES",
    "LoadedCheckpoint",
    "RunDir",
    "create_exclusive",
    "new_run_id",
    "write_atomic",
]

EVENTS = "events.jsonl"
DOCS = "docs.jsonl"  # texts read in the run, kept for follow-up runs (never in events.jsonl)
SEARCHES = "searches.jsonl"  # sub-tasks' query plans and search results, reused by a resume
CHECKPOINT = "checkpoint.json"
CHECKPOINT_PREV = "checkpoint.prev.json"
_TAIL_BLOCK = 64 * 1024  # bytes read at a time back from a file's end to its last line break
M = TypeVar("M", bound=BaseModel)
ShapeCheck = Callable[[Mapping[str, Any]], str | None]  # why a checkpoint is unusable, or None


def _sha256_line(data: bytes, name: str) -> bytes:
    # The format of `sha256sum`, so `sha256sum -c checkpoint.json.sha256` works by hand too.
    return f"{hashlib.sha256(data).hexdigest()}  {name}\n".encode()


def new_run_id(now: float, rand: bytes) -> str:
    """A sortable run id such as ``20261122-191500-ab12cd`` (UTC time, then 3 random bytes)."""
    if len(rand) < 3:
        raise ValueError("new_run_id needs at least 3 random bytes")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return f"{stamp}-{rand[:3].hex()}"


@dataclass(frozen=True)
class LoadedCheckpoint:
    data: dict[str, Any]
    path: Path  # the file the data came from
    used_previous: bool  # True when checkpoint.json was bad and checkpoint.prev.json was used


class RunDir:
    """``<state_dir>/runs/<run_id>/``: events, checkpoints and the progressive report of one run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._events: IO[bytes] | None = None
        self._lines: dict[str, IO[bytes]] = {}  # docs.jsonl, searches.jsonl: kept open
        # lines are appended from worker threads: two first appends at once would each cut a
        # "torn" tail, one of them the line the other was writing
        self._lines_lock = threading.Lock()

    @classmethod
    def create(cls, state_dir: Path, run_id: str) -> RunDir:
        """Make the directory (and parents) and prove it is writable by writing a probe file."""
        root = state_dir / "runs" / run_id
        try:
            make_private_dirs(state_dir)
            make_private_dir(state_dir / "runs")
            make_private_dir(root)
            probe = root / f".probe-{os.getpid()}"
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_NOFOLLOW, 0o600)
            try:
                os.write(fd, b"ok")
            finally:
                os.close(fd)
            probe.unlink()
        except OSError as exc:
            raise StorageError(
                str(root), f"run directory is not writable ({reason(exc)})"
            ) from None
        return cls(root)

    @classmethod
    def existing(cls, state_dir: Path, run_id: str) -> RunDir:
        root = state_dir / "runs" / run_id
        try:
            found = root.is_dir()
        except (OSError, ValueError):  # a name too long for the filesystem, a NUL byte
            found = False
        if not found:
            shown = run_id if len(run_id) <= 64 else run_id[:64] + "..."
            raise StorageError(str(state_dir / "runs" / shown), "no such run")
        return cls(root)

    def path(self, name: str) -> Path:
        if not name or name in (".", "..") or "/" in name or "\\" in name:
            raise StorageError(str(self.root / name), "not a plain file name")
        return self.root / name

    def write_text(self, name: str, text: str) -> None:
        write_atomic(self.path(name), text.encode("utf-8"))

    # ----------------------------------------------------------------------- events

    def _open_events(self) -> IO[bytes]:
        if self._events is None:
            path = self.path(EVENTS)
            try:
                self._drop_torn_tail(path)
                self._events = open_private_append(path)  # kept open for the run
            except OSError as exc:
                raise StorageError(str(path), reason(exc)) from None
        return self._events

    @staticmethod
    def _drop_torn_tail(path: Path) -> None:
        """Cut an unfinished or unreadable last line so the next append starts on a fresh line."""
        if not path.exists():
            return
        data = path.read_bytes()
        body, last = _split_tail(data)
        if last is None:
            return
        with open(path, "r+b") as fh:
            fh.truncate(len(body))
            fh.flush()
            os.fsync(fh.fileno())

    def append_event(self, event: Event) -> None:
        """Append one JSON line and fsync it: an event that returned is on disk."""
        self.append_events([event])

    def append_events(self, events: list[Event]) -> None:
        """Append several lines with one fsync: when it returns, all of them are on disk."""
        fh = self._open_events()
        try:
            fh.write(b"".join(e.model_dump_json().encode("utf-8") + b"\n" for e in events))
            fh.flush()
            os.fsync(fh.fileno())
        except OSError as exc:
            raise StorageError(str(self.path(EVENTS)), reason(exc)) from None

    def read_events(self) -> list[Event]:
        """Every event written; a torn last line is ignored, a bad line before it is an error."""
        path = self.path(EVENTS)
        data = _read_if_exists(path)
        if data is None:
            return []
        body, _torn = _split_tail(data)
        events: list[Event] = []
        for number, line in enumerate(body.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                events.append(Event.model_validate_json(line))
            except ValidationError:
                raise StorageError(str(path), f"corrupt event on line {number}") from None
        return events

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None
        with self._lines_lock:
            for fh in self._lines.values():
                with contextlib.suppress(OSError):
                    fh.flush()
                    os.fsync(fh.fileno())
                fh.close()
            self._lines.clear()

    # ----------------------------------------------------------------------- documents

    def append_doc(self, doc: FetchedDoc) -> None:
        """Append one document as a JSON line. Flushed, not fsynced per line: losing the tail on
        a power cut only means a follow-up (or a resume) fetches those pages again. ``close``
        fsyncs."""
        self._append_line(DOCS, doc.model_dump_json())

    def append_search(self, record: SearchRecord) -> None:
        """Append one search record (``searches.jsonl``), as ``append_doc`` does a document."""
        self._append_line(SEARCHES, record.model_dump_json())

    def _append_line(self, name: str, line: str) -> None:
        path = self.path(name)
        data = line.encode("utf-8") + b"\n"
        try:
            with self._lines_lock:
                fh = self._lines.get(name)
                if fh is None:
                    self._drop_torn_doc_tail(path)
                    fh = self._lines[name] = open_private_append(path)  # kept open for the run
                fh.write(data)
                fh.flush()
        except OSError as exc:
            raise StorageError(str(path), reason(exc)) from None

    @staticmethod
    def _drop_torn_doc_tail(path: Path) -> None:
        """A crash can leave half a line: cut it so the next document starts a line of its own.
        Only the tail is read, back to the last line break (the file holds every page read)."""
        if not path.exists():
            return
        with open(path, "r+b") as fh:
            end = pos = fh.seek(0, os.SEEK_END)
            while pos > 0:
                start = max(0, pos - _TAIL_BLOCK)
                fh.seek(start)
                block = fh.read(pos - start)
                if pos == end and block.endswith(b"\n"):
                    return  # no torn line
                cut = block.rfind(b"\n")
                if cut >= 0:
                    fh.truncate(start + cut + 1)
                    return
                pos = start
            fh.truncate(0)  # one torn line and nothing before it

    def docs_size(self) -> int:
        """Bytes already kept (an upper bound on their characters): a resumed run's budget."""
        try:
            return self.path(DOCS).stat().st_size
        except OSError:
            return 0

    def read_docs(self) -> list[FetchedDoc]:
        """The documents kept by ``append_doc``; unreadable lines (a torn tail) are skipped."""
        return _read_lines(self.path(DOCS), FetchedDoc)

    def read_searches(self) -> list[SearchRecord]:
        """The records kept by ``append_search``; unreadable lines are skipped (only redone)."""
        return _read_lines(self.path(SEARCHES), SearchRecord)

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------- checkpoints

    def write_checkpoint(self, data: dict[str, Any]) -> None:
        """Write ``checkpoint.json`` + ``.sha256``, keeping the current good one as ``prev``."""
        blob = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        payload = blob.encode("utf-8")
        current = self._verified(self.path(CHECKPOINT))
        if isinstance(current, bytes):
            write_atomic(self.path(CHECKPOINT_PREV), current)
            write_atomic(
                self.path(CHECKPOINT_PREV + ".sha256"), _sha256_line(current, CHECKPOINT_PREV)
            )
        write_atomic(self.path(CHECKPOINT), payload)
        write_atomic(self.path(CHECKPOINT + ".sha256"), _sha256_line(payload, CHECKPOINT))

    def has_checkpoint(self) -> bool:
        return self.path(CHECKPOINT).exists() or self.path(CHECKPOINT_PREV).exists()

    def _verified(self, path: Path) -> bytes | str:
        """The file's bytes if its hash matches and it holds a JSON object, else why not."""
        try:
            payload = path.read_bytes()
            recorded = path.with_name(path.name + ".sha256").read_text("ascii").split()
        except FileNotFoundError:
            return "missing"
        except (OSError, UnicodeDecodeError) as exc:
            return f"unreadable ({exc})"
        if not recorded:
            return "empty hash file"
        if hashlib.sha256(payload).hexdigest() != recorded[0].lower():
            return "hash mismatch (truncated or modified)"
        try:
            parsed = json.loads(payload)
        except ValueError:
            return "not valid JSON"
        if not isinstance(parsed, dict):
            return "not a JSON object"
        return payload

    def _usable(self, path: Path, problem: ShapeCheck | None) -> bytes | str:
        """``_verified``, and the JSON passes ``problem`` (None: no complaint)."""
        payload = self._verified(path)
        if isinstance(payload, bytes) and problem is not None:
            return problem(json.loads(payload)) or payload
        return payload

    def load_checkpoint(self, problem: ShapeCheck | None = None) -> LoadedCheckpoint:
        """The newest checkpoint that verifies (and that ``problem``, the reader's schema check,
        finds nothing wrong with), saying whether the previous one had to be used."""
        main = self.path(CHECKPOINT)
        first = self._usable(main, problem)
        if isinstance(first, bytes):
            return LoadedCheckpoint(json.loads(first), main, used_previous=False)
        prev = self.path(CHECKPOINT_PREV)
        second = self._usable(prev, problem)
        if isinstance(second, bytes):
            return LoadedCheckpoint(json.loads(second), prev, used_previous=True)
        raise CheckpointCorrupt(str(main), f"{first}; previous checkpoint: {second}")

    def read_checkpoint(self, problem: ShapeCheck | None = None) -> dict[str, Any]:
        return self.load_checkpoint(problem).data


def _read_lines(path: Path, model: type[M]) -> list[M]:
    """The JSON lines of ``path`` that parse as ``model``; none when it was never written."""
    data = _read_if_exists(path)
    if data is None:
        return []
    found: list[M] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            found.append(model.model_validate_json(line))
        except ValidationError:
            continue
    return found


def _read_if_exists(path: Path) -> bytes | None:
    """A run file's bytes, None when it was never written; other I/O errors are typed."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(str(path), reason(exc)) from None


def _split_tail(data: bytes) -> tuple[bytes, bytes | None]:
    """Split a JSONL blob into its trusted body and a torn last line (None when there is none).

    A last line is torn when it has no newline (the write was cut short) or does not parse (a crash
    may leave garbage, e.g. NUL bytes, at the end of a file).
    """
    if not data:
        return data, None
    if not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        return data[:cut], data[cut:]
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    last = data[cut:].strip()
    if not last:
        return data, None
    try:
        Event.model_validate_json(last)
    except ValidationError:
        return data[:cut], data[cut:]
    return data, None
