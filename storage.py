"""The run directory and the only ways this package writes files.

A crash (power loss, ``kill -9``, a full disk) must never leave a half-written report, checkpoint or
event log that resume then trusts. Hence: whole files are written to a temp file, fsynced and
``os.replace``d; events are appended one fsynced line at a time and a torn last line is dropped;
checkpoints carry a sha256 and the previous good one is kept; reports are created with ``O_EXCL``
and ``O_NOFOLLOW`` so an existing file or a planted symlink is never overwritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from deepresearch.errors import CheckpointCorrupt, StorageError
from deepresearch.schemas import Event, FetchedDoc

EVENTS = "events.jsonl"
DOCS = "docs.jsonl"  # texts read in the run, kept for follow-up runs (never in events.jsonl)
CHECKPOINT = "checkpoint.json"
CHECKPOINT_PREV = "checkpoint.prev.json"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def _fsync_dir(directory: Path) -> None:
    """Make a rename or create durable; not every platform can open a directory, which is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old bytes or the new ones, never a mix."""
    directory = path.parent
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise StorageError(str(directory), _reason(exc)) from None
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StorageError(str(path), _reason(exc)) from None
    _fsync_dir(directory)


def create_exclusive(
    directory: Path,
    make_name: Callable[[int], str],
    data: bytes | Callable[[Path], bytes],
    attempts: int = 20,
) -> Path:
    """Create a new file named ``make_name(0)`` (then 1, 2, ... on a clash) and write ``data``.

    ``data`` may be a function of the final path, so a report can name the file it is saved in.
    Never follows or overwrites anything that already exists at the name.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW
    for attempt in range(attempts):
        path = directory / make_name(attempt)
        try:
            fd = os.open(path, flags, 0o600)  # a report quotes private sources: owner only
        except FileExistsError:
            continue
        except FileNotFoundError:
            raise StorageError(str(directory), "directory does not exist") from None
        except NotADirectoryError:
            raise StorageError(str(directory), "not a directory") from None
        except PermissionError:
            raise StorageError(str(directory), "directory is not writable") from None
        except OSError as exc:
            raise StorageError(str(directory), _reason(exc)) from None
        try:
            try:
                _write_all(fd, data(path) if callable(data) else data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise StorageError(str(path), _reason(exc)) from None
        _fsync_dir(directory)
        return path
    raise StorageError(str(directory), f"no free file name after {attempts} attempts")


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
        self._docs: IO[bytes] | None = None

    @classmethod
    def create(cls, state_dir: Path, run_id: str) -> RunDir:
        """Make the directory (and parents) and prove it is writable by writing a probe file."""
        root = state_dir / "runs" / run_id
        try:
            root.mkdir(parents=True, exist_ok=True)
            probe = root / f".probe-{os.getpid()}"
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _O_NOFOLLOW, 0o600)
            try:
                os.write(fd, b"ok")
            finally:
                os.close(fd)
            probe.unlink()
        except OSError as exc:
            raise StorageError(
                str(root), f"run directory is not writable ({_reason(exc)})"
            ) from None
        return cls(root)

    @classmethod
    def existing(cls, state_dir: Path, run_id: str) -> RunDir:
        root = state_dir / "runs" / run_id
        if not root.is_dir():
            raise StorageError(str(root), "no such run")
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
                self._events = open(path, "ab")  # noqa: SIM115 - kept open for the run
            except OSError as exc:
                raise StorageError(str(path), _reason(exc)) from None
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
            raise StorageError(str(self.path(EVENTS)), _reason(exc)) from None

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
        if self._docs is not None:
            with contextlib.suppress(OSError):
                self._docs.flush()
                os.fsync(self._docs.fileno())
            self._docs.close()
            self._docs = None

    # ----------------------------------------------------------------------- documents

    def append_doc(self, doc: FetchedDoc) -> None:
        """Append one document as a JSON line. Flushed, not fsynced per line: losing the tail on
        a power cut only means a follow-up fetches those pages again. ``close`` fsyncs."""
        path = self.path(DOCS)
        try:
            if self._docs is None:
                self._drop_torn_doc_tail(path)
                self._docs = open(path, "ab")  # noqa: SIM115 - kept open for the run
            self._docs.write(doc.model_dump_json().encode("utf-8") + b"\n")
            self._docs.flush()
        except OSError as exc:
            raise StorageError(str(path), _reason(exc)) from None

    @staticmethod
    def _drop_torn_doc_tail(path: Path) -> None:
        """A crash can leave half a line: cut it so the next document starts a line of its own."""
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(path, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)

    def docs_size(self) -> int:
        """Bytes already kept (an upper bound on their characters): a resumed run's budget."""
        try:
            return self.path(DOCS).stat().st_size
        except OSError:
            return 0

    def read_docs(self) -> list[FetchedDoc]:
        """The documents kept by ``append_doc``; unreadable lines (a torn tail) are skipped."""
        path = self.path(DOCS)
        data = _read_if_exists(path)
        if data is None:
            return []
        docs: list[FetchedDoc] = []
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                docs.append(FetchedDoc.model_validate_json(line))
            except ValidationError:
                continue
        return docs

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

    def load_checkpoint(self) -> LoadedCheckpoint:
        """The newest checkpoint that verifies, saying whether the previous one had to be used."""
        main = self.path(CHECKPOINT)
        first = self._verified(main)
        if isinstance(first, bytes):
            return LoadedCheckpoint(json.loads(first), main, used_previous=False)
        prev = self.path(CHECKPOINT_PREV)
        second = self._verified(prev)
        if isinstance(second, bytes):
            return LoadedCheckpoint(json.loads(second), prev, used_previous=True)
        raise CheckpointCorrupt(str(main), f"{first}; previous checkpoint: {second}")

    def read_checkpoint(self) -> dict[str, Any]:
        return self.load_checkpoint().data


def _read_if_exists(path: Path) -> bytes | None:
    """A run file's bytes, None when it was never written; other I/O errors are typed."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(str(path), _reason(exc)) from None


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
