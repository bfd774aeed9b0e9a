"""The on-disk side of the local corpus: safe file listing, content hashes and the extraction cache.

Everything written here goes through a temp file and ``os.replace``, so a crash leaves either the
old file or the new one, never a half-written cache that a later open would trust.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from deepresearch.errors import CorpusError, FetchBlocked, FetchError
from deepresearch.providers.documents.extract import (
    SUPPORTED_SUFFIXES,
    ExtractionPool,
    kind_of,
)
from deepresearch.providers.documents.extracted_doc import ExtractedDoc
from deepresearch.storage.private_files import PRIVATE_FILE, make_private_dirs

EXTRACT_VERSION = 15  # bump when extraction output changes, so cached text is re-extracted
# 15: extraction artefacts out (hyphens, running matter, anchors, link syntax), terms kept
# 12: each document's domain in meta.json; 11: docs.json beside meta.json; 10: a page-end
# caption names only the table overleaf; 8: Snowball
INDEX_VERSION = 12
Warn = Callable[[str, str], None]


@dataclass(frozen=True)
class CorpusFile:
    relpath: str  # forward slashes, relative to the corpus root
    path: Path
    size: int
    mtime_ns: int

    @property
    def kind(self) -> str:
        return kind_of(self.path)


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` resolves (symlinks followed) to a place inside the resolved ``root``."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(root)
    except (OSError, ValueError):
        return False


def check_relative(url: str, rel: str, what: str, folder: str) -> None:
    """Refuse the path of a ``doc:`` or ``code:`` id that could leave its folder (``folder``
    names it in the error; ``what`` names the path): empty, absolute, odd characters, dot parts."""
    if not rel:
        raise FetchError(url, f"empty {what} path")
    if "\x00" in rel or "\\" in rel:
        raise FetchBlocked(url, f"invalid characters in {what} path")
    if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        raise FetchBlocked(url, "absolute paths are not allowed")
    if any(part in ("..", ".", "") for part in rel.split("/")):
        raise FetchBlocked(url, f"path escapes the {folder} folder")


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for the skip warning)."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: Path) -> BinaryIO:
    """Open ``path`` for reading only if it is (or links to) a regular file.

    Opening a FIFO blocks until a writer appears and a device can block or never end, so the open
    is non-blocking and the type is checked on the opened descriptor (no swap between check and
    read); anything else raises ``OSError`` with a readable ``strerror``.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{file_kind(mode)}, not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def scan_corpus(corpus_dir: Path, skip: Path | None, warn: Warn) -> tuple[Path, list[CorpusFile]]:
    """The resolved root and its supported files, sorted; refuse a folder we cannot use."""
    if not corpus_dir.exists():
        raise CorpusError(str(corpus_dir), "no such folder")
    if not corpus_dir.is_dir():
        raise CorpusError(str(corpus_dir), "not a folder")
    root = corpus_dir.resolve()
    if not os.access(root, os.R_OK | os.X_OK):
        raise CorpusError(str(corpus_dir), "folder is not readable")
    files: list[CorpusFile] = []
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and (skip is None or here / d != skip)
        )
        for name in filenames:
            path = here / name
            if name.startswith(".") or path.suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            relpath = path.relative_to(root).as_posix()
            if not inside(root, path):
                warn("outside_corpus", f"{relpath}: links outside the corpus folder, skipped")
                continue
            try:
                info = path.stat()  # follows a link (inside the corpus) to what it names
            except OSError as exc:
                warn("extract_failed", f"{relpath}: cannot read ({exc.strerror})")
                continue
            if not stat.S_ISREG(info.st_mode):  # reading a FIFO or a device would block
                warn("not_regular_file", f"{relpath}: {file_kind(info.st_mode)}, skipped")
                continue
            files.append(CorpusFile(relpath, path, info.st_size, info.st_mtime_ns))
    if errors and errors[0].filename and Path(errors[0].filename) == root:
        raise CorpusError(str(corpus_dir), f"folder is not readable ({errors[0].strerror})")
    if not files:
        kinds = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise CorpusError(str(corpus_dir), f"no supported files ({kinds})")
    files.sort(key=lambda f: f.relpath)
    return root, files


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` whole; 0600 in 0700 folders (the cache holds the corpus's private text)."""
    make_private_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, PRIVATE_FILE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> Any:
    """The parsed file, or ``None`` when missing or unreadable (a cache miss, not an error)."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def index_fingerprint(hashes: dict[str, str], passage_chars: int) -> str:
    """The index's cache key: its files, its passage size and both versions. The extraction's
    too: an index of the old text would point at pages the new cache does not hold, and every
    run after an upgrade would find nothing it could read."""
    key = {
        "v": INDEX_VERSION,
        "extract": EXTRACT_VERSION,
        "chars": passage_chars,
        "files": sorted(hashes.items()),
    }
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


class CorpusCache:
    """Extracted pages keyed by content hash, and a per-corpus manifest of (size, mtime) -> hash."""

    def __init__(self, cache_dir: Path) -> None:
        self.dir = cache_dir

    def _manifest_path(self, root: Path) -> Path:
        key = hashlib.sha256(str(root).encode()).hexdigest()[:24]
        return self.dir / "manifests" / f"{key}.json"

    def load_manifest(self, root: Path) -> dict[str, tuple[int, int, str]]:
        data = read_json(self._manifest_path(root))
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            return {}
        out: dict[str, tuple[int, int, str]] = {}
        for rel, entry in data["files"].items():
            if isinstance(entry, list) and len(entry) == 3:
                out[str(rel)] = (int(entry[0]), int(entry[1]), str(entry[2]))
        return out

    def save_manifest(self, root: Path, files: dict[str, tuple[int, int, str]]) -> None:
        payload = {"root": str(root), "files": {k: list(v) for k, v in sorted(files.items())}}
        atomic_write(self._manifest_path(root), json.dumps(payload).encode())

    def hashes(self, root: Path, files: list[CorpusFile], warn: Warn) -> dict[str, str]:
        """relpath -> sha256, re-hashing only files whose size or mtime changed."""
        manifest = self.load_manifest(root)
        fresh: dict[str, tuple[int, int, str]] = {}
        out: dict[str, str] = {}
        for f in files:
            known = manifest.get(f.relpath)
            if known is not None and known[:2] == (f.size, f.mtime_ns):
                sha = known[2]
            else:
                try:
                    sha = sha256_file(f.path)
                except OSError as exc:
                    warn("extract_failed", f"{f.relpath}: cannot read ({exc.strerror})")
                    continue
            fresh[f.relpath] = (f.size, f.mtime_ns, sha)
            out[f.relpath] = sha
        if fresh != manifest:
            with contextlib.suppress(OSError):
                self.save_manifest(root, fresh)
        return out

    def index_dir(self, hashes: dict[str, str], passage_chars: int) -> Path:
        """Where the index of exactly these files (``hashes``) is published."""
        return self.dir / "bm25" / index_fingerprint(hashes, passage_chars)

    def failures(
        self, files: list[CorpusFile], hashes: dict[str, str], indexed: AbstractSet[str]
    ) -> list[tuple[str, str]]:
        """(relpath, reason) of each file left out of an index (``indexed``: its relpaths)
        because its extraction failed, as the cache remembers it."""
        out = []
        for f in files:
            if f.relpath in hashes and f.relpath not in indexed:
                cached = self.load_doc(hashes[f.relpath], f.kind)
                if isinstance(cached, str):
                    out.append((f.relpath, cached))
        return out

    def _doc_path(self, sha: str, kind: str) -> Path:
        return self.dir / "docs" / sha[:2] / f"{sha}.{kind}.v{EXTRACT_VERSION}.json"

    def load_doc(self, sha: str, kind: str) -> ExtractedDoc | str | None:
        """The cached pages, the cached failure reason, or ``None`` when not cached."""
        data = read_json(self._doc_path(sha, kind))
        if not isinstance(data, dict):
            return None
        if isinstance(data.get("error"), str):
            return str(data["error"])
        pages = data.get("pages")
        if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
            return None
        return ExtractedDoc(
            title=str(data.get("title", "")),
            pages=tuple(pages),
            content_type=str(data.get("content_type", "text/plain")),
        )

    def save_doc(self, sha: str, kind: str, doc: ExtractedDoc | str) -> None:
        if isinstance(doc, str):
            payload: dict[str, Any] = {"error": doc}
        else:
            payload = {"title": doc.title, "content_type": doc.content_type, "pages": doc.pages}
        atomic_write(self._doc_path(sha, kind), json.dumps(payload).encode())


_TRANSIENT = ("timed out", "extraction worker crashed", "over the memory limit")


def gather_documents(
    files: list[CorpusFile],
    hashes: dict[str, str],
    cache: CorpusCache,
    pool_factory: Callable[[], ExtractionPool],
    warn: Warn,
) -> list[tuple[CorpusFile, str, ExtractedDoc]]:
    """Every readable document: from the cache, else extracted in the pool (and then cached)."""
    found: dict[str, ExtractedDoc | str] = {}
    todo: dict[Path, CorpusFile] = {}
    for f in files:
        if f.relpath not in hashes:
            continue
        cached = cache.load_doc(hashes[f.relpath], f.kind)
        if cached is None:
            todo[f.path] = f
        else:
            found[f.relpath] = cached
    if todo:
        with pool_factory() as pool:
            results = pool.extract_many(list(todo))
        for path, result in results.items():
            f = todo[path]
            outcome = result if isinstance(result, ExtractedDoc) else result.reason
            found[f.relpath] = outcome
            if isinstance(outcome, ExtractedDoc) or not outcome.startswith(_TRANSIENT):
                with contextlib.suppress(OSError):
                    cache.save_doc(hashes[f.relpath], f.kind, outcome)
    docs = []
    for f in files:
        got = found.get(f.relpath)
        if isinstance(got, str):
            warn("extract_failed", f"{f.relpath}: {got}")
        elif got is not None:
            docs.append((f, hashes[f.relpath], got))
    return docs


def index_is_fresh(corpus_dir: Path, cache_dir: Path, passage_chars: int, warn: Warn) -> bool:
    """Whether the cache holds the index of the corpus as it is now, checked without loading it:
    a driver only needs to know (the crew's processes search it), and loading it costs the
    driver bm25s, numpy and the whole passage table. Warns as opening it would: of files it
    skips, and of each document whose extraction failed (from the index's ``docs.json``)."""
    cache = CorpusCache(cache_dir.expanduser().resolve())
    root, files = scan_corpus(corpus_dir, cache.dir, warn)
    hashes = cache.hashes(root, files, warn)
    where = cache.index_dir(hashes, passage_chars)
    docs = read_json(where / "docs.json")
    if not isinstance(docs, list) or not (where / "meta.json").is_file():
        return False
    indexed = {str(entry[0]) for entry in docs if isinstance(entry, list) and entry}
    for rel, reason in cache.failures(files, hashes, indexed):
        warn("extract_failed", f"{rel}: {reason}")
    return True
