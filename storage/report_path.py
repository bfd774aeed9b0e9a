"""Where the report file goes and what it is called (DESIGN §7).

The name carries a readable slug of the question plus a short hash, so two questions never collide
and a clash (same question, same salt) is resolved by changing the salt. The directory rules keep
reports out of the home directory and system directories, and next to a project's notes when a
research/docs folder exists. The decision is pure: the filesystem is injected.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

MAX_SLUG = 60
PREFERRED_SUBDIRS = ("research", "docs", "doc", "ref", "references", "notes")

# Refused themselves; only these exact directories.
_SYSTEM_EXACT = ("/", "/var", "/lib64", "/opt", "/System", "/Library")
# Refused together with everything below them.
_SYSTEM_TREES = ("/usr", "/etc", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib")
_WINDOWS_TREES = ("C:\\Windows", "C:\\Program Files", "C:\\Program Files (x86)", "C:\\ProgramData")
_WINDOWS_EXACT = ("C:\\", "C:\\Users")


def slugify(query: str) -> str:
    """Lower-case ``[a-z0-9-]`` slug, at most 60 chars, cut at a hyphen when possible."""
    slug = re.sub(r"[^a-z0-9]+", "-", query.lower()).strip("-")
    if len(slug) > MAX_SLUG:
        cut = slug[: MAX_SLUG + 1]
        boundary = cut.rfind("-")
        slug = cut[:boundary] if boundary > 0 else slug[:MAX_SLUG]
        slug = slug.strip("-")
    return slug or "report"


def report_name(query: str, salt: str, extension: str = "md") -> str:
    """The file name for a report; ``extension`` follows ``--format`` (md, json, html)."""
    digest = hashlib.sha256(f"{query}\0{salt}".encode()).hexdigest()[:8]
    return f"deep-research-{slugify(query)}-{digest}.{extension}"


def _is_under(path: PurePath, root: PurePath) -> bool:
    return path == root or root in path.parents


def is_system_directory(path: Path) -> bool:
    """True for the filesystem root and directories an OS owns (and the trees below some)."""
    posix = PurePosixPath(path.as_posix())
    if any(posix == PurePosixPath(p) for p in _SYSTEM_EXACT):
        return True
    if any(_is_under(posix, PurePosixPath(p)) for p in _SYSTEM_TREES):
        return True
    text = str(path)
    if len(text) >= 2 and text[1] == ":":  # a Windows drive path
        win = PureWindowsPath(text)
        if any(win == PureWindowsPath(p) for p in _WINDOWS_EXACT):
            return True
        return any(_is_under(win, PureWindowsPath(p)) for p in _WINDOWS_TREES)
    return False


def choose_directory(
    cwd: Path,
    home: Path,
    output_dir: Path | None,
    *,
    temp_dir: Path,
    is_dir: Callable[[Path], bool],
    list_dir: Callable[[Path], list[str]],
) -> Path:
    """Apply the §7 rules: explicit dir > temp (home/system cwd) > a notes-like sub-dir > cwd."""
    if output_dir is not None:
        return output_dir
    if cwd == home or is_system_directory(cwd):
        return temp_dir
    try:
        entries = list_dir(cwd)
    except OSError:
        return cwd
    ordered = sorted(entries)  # the same choice whatever order the OS lists them in
    for wanted in PREFERRED_SUBDIRS:
        for entry in ordered:
            if entry.lower() == wanted and is_dir(cwd / entry):
                return cwd / entry
    return cwd


def _list_dir(path: Path) -> list[str]:
    return [child.name for child in path.iterdir()]


def default_directory(output_dir: Path | None) -> Path:
    """``choose_directory`` over the real filesystem and the current process's cwd and home."""
    return choose_directory(
        Path.cwd().resolve(),
        Path.home().resolve(),
        output_dir,
        temp_dir=Path(tempfile.gettempdir()),
        is_dir=lambda p: p.is_dir(),
        list_dir=_list_dir,
    )
