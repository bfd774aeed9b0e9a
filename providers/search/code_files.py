"""``Fetcher`` for the ``code:<relpath>#L<n>`` ids the grep provider returns.

A hit names one line; the reader needs the code around it, so a small file is returned whole and
a large one as a window of lines around the hit, each line numbered so findings can cite it.
Ids are checked like corpus ids: no absolute paths, no ``..``, nothing resolving (through
symlinks) outside the code folder.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from deepresearch.errors import FetchBlocked, FetchError
from deepresearch.providers.search.corpus_store import check_relative, inside, open_regular
from deepresearch.schemas import FetchedDoc

WHOLE_FILE_LINES = 400
WINDOW_BEFORE = 60
WINDOW_AFTER = 140
MAX_FILE_BYTES = 2_000_000


def parse_code_id(url: str) -> tuple[str, int | None]:
    """``code:<relpath>[#L<n>]`` -> (relpath, line); refuse anything that could leave the folder."""
    if not url.startswith("code:"):
        raise FetchError(url, "not a code id")
    rel, _, fragment = url[5:].partition("#")
    line: int | None = None
    if fragment:
        found = re.fullmatch(r"L(\d{1,9})", fragment)
        if found is None or int(found.group(1)) < 1:
            raise FetchError(url, f"bad line reference {fragment!r}")
        line = int(found.group(1))
    check_relative(url, rel, "file", "code")
    return rel, line


def numbered(lines: list[str], first: int) -> str:
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{n:>{width}}  {text}" for n, text in enumerate(lines, start=first))


class CodeFiles:
    """Reads ``code:`` ids from one folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root.expanduser()))

    def handles(self, url: str) -> bool:
        return url.startswith("code:")

    async def fetch(self, url: str) -> FetchedDoc:
        return await asyncio.to_thread(self._read, url)

    def _read(self, url: str) -> FetchedDoc:
        rel, line = parse_code_id(url)
        path = self.root / rel
        if not inside(self.root, path):
            raise FetchBlocked(url, "path resolves outside the code folder")
        try:
            with open_regular(path) as handle:  # a FIFO or a device would block the read
                if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                    raise FetchError(url, "file is too large to read")
                data = handle.read()
        except FileNotFoundError:
            raise FetchError(url, "no such file") from None
        except OSError as exc:
            raise FetchError(url, f"cannot read ({exc.strerror})") from None
        if b"\x00" in data[:8192]:
            raise FetchError(url, "binary file")
        lines = data.decode("utf-8", "replace").splitlines()
        first = 1
        if len(lines) > WHOLE_FILE_LINES and line is not None:
            first = max(1, line - WINDOW_BEFORE)
            lines = lines[first - 1 : line + WINDOW_AFTER]
        elif len(lines) > WHOLE_FILE_LINES:
            lines = lines[: WINDOW_BEFORE + WINDOW_AFTER]
        location = f"{rel}, line {line}" if line is not None else rel
        return FetchedDoc(
            url=url,
            title=rel,
            location=location,
            text=numbered(lines, first),
            content_type="text/plain",
            provider="grep",
        )
