"""The only ways this package writes files: atomically, exclusively, privately.

A crash (power loss, ``kill -9``, a full disk) must never leave a half-written file that a later
run trusts, so whole files go to a temp file, are fsynced and ``os.replace``d; reports are created
with ``O_EXCL`` and ``O_NOFOLLOW`` so an existing file or a planted symlink is never overwritten.
Everything written holds the user's private text (queries, pages read, reports), so files are
created 0600 and folders 0700, set explicitly so the umask cannot widen them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from deepresearch.errors import StorageError

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def fsync_dir(directory: Path) -> None:
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


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents as 0700. Folders that already exist keep their
    mode: a state or cache folder may sit inside a place the user shares on purpose."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:
            continue  # made by another process meanwhile: not ours to change
        os.chmod(folder, PRIVATE_DIR)  # mkdir's mode is filtered by the umask
    if not path.is_dir():
        raise NotADirectoryError(f"not a folder: {path}")


def make_private_dir(path: Path) -> None:
    """``path`` (and missing parents) as a folder of this package's own: 0700, even if it exists."""
    make_private_dirs(path)
    if path.stat().st_uid == os.geteuid():
        os.chmod(path, PRIVATE_DIR)


def open_private_append(path: Path) -> IO[bytes]:
    """``open(path, "ab")`` for a file only this user can read (also tightens an older file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | O_NOFOLLOW, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


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
        raise StorageError(str(directory), reason(exc)) from None
    try:
        try:
            os.fchmod(fd, PRIVATE_FILE)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise StorageError(str(path), reason(exc)) from None
    fsync_dir(directory)


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
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW
    for attempt in range(attempts):
        path = directory / make_name(attempt)
        try:
            fd = os.open(path, flags, PRIVATE_FILE)
        except FileExistsError:
            continue
        except FileNotFoundError:
            raise StorageError(str(directory), "directory does not exist") from None
        except NotADirectoryError:
            raise StorageError(str(directory), "not a directory") from None
        except PermissionError:
            raise StorageError(str(directory), "directory is not writable") from None
        except OSError as exc:
            raise StorageError(str(directory), reason(exc)) from None
        try:
            try:
                os.fchmod(fd, PRIVATE_FILE)  # the report holds the same private text
                _write_all(fd, data(path) if callable(data) else data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise StorageError(str(path), reason(exc)) from None
        fsync_dir(directory)
        return path
    raise StorageError(str(directory), f"no free file name after {attempts} attempts")
