"""The report directory: checked before any work, created (with parents) only when a report is saved.

A missing ``--output-dir`` is what users expect to be made for them; a path that is a file, or
whose nearest existing ancestor refuses new entries, is bad input found in milliseconds. Checking
without creating keeps a run that is refused later (bad corpus, gated query) from leaving empty
directories behind.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from deepresearch.errors import StorageError
from deepresearch.storage.private_files import make_private_dirs


def _nearest_existing(directory: Path) -> Path:
    for candidate in (directory, *directory.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(directory.anchor or ".")


def check_output_dir(directory: Path, create: bool = False) -> Path:
    """The directory (expanded) if a report can be created in it: an existing one is proven by a
    probe file, a missing one by a probe directory in its nearest existing ancestor. ``create``
    makes a missing one first (the driver does so when it writes the report). The path is made
    absolute, so the run record (and ``resume`` from another directory) and ``report_path`` name
    the same place the user meant."""
    directory = directory.expanduser().absolute()
    if create and not directory.is_dir():
        try:
            make_private_dirs(directory)  # what it creates is 0700, whatever the umask
        except OSError as exc:
            raise StorageError(
                str(directory), f"cannot create output directory ({exc.strerror or exc})"
            ) from None
    base = _nearest_existing(directory)
    if not base.is_dir():
        what = "is not a directory" if base == directory else f"cannot be created: {base} is a file"
        raise StorageError(str(directory), f"output directory {what}")
    try:
        if base == directory:
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".deep-research-probe-"):
                pass
        else:
            Path(tempfile.mkdtemp(dir=base, prefix=".deep-research-probe-")).rmdir()
    except OSError as exc:
        where = "is not writable" if base == directory else f"cannot be created in {base}"
        raise StorageError(str(directory), f"output directory {where} ({exc.strerror})") from None
    return directory
