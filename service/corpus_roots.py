"""Which corpus folders a remote client (HTTP ``POST /runs``, MCP ``research``) may name.

A client's ``corpus`` is read with the server's permissions, so without a check any folder the
server can read (``/etc``, another user's 0700 folder) would be indexed and quoted in a report.
Only folders under a root the operator configured (``service.corpus_roots``) are accepted, compared
after every symlink is resolved: a link inside a root that points out of it is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from deepresearch.errors import CorpusError, CorpusRefused


def _resolved_roots(roots: Iterable[Path]) -> list[Path]:
    out = []
    for root in roots:
        try:
            out.append(Path(root).expanduser().resolve(strict=True))
        except (OSError, RuntimeError):
            continue  # a missing root admits nothing
    return out


def check_corpus(requested: str, roots: Iterable[Path]) -> Path:
    """The real path of ``requested`` if it lies under a root (CorpusRefused otherwise)."""
    allowed = _resolved_roots(roots)
    if not allowed:
        raise CorpusRefused(
            requested, "this server accepts no corpus from clients (service.corpus_roots is empty)"
        )
    if "\x00" in requested:  # in no file name; every os call would raise ValueError on it
        raise CorpusError(requested.replace("\x00", "\\x00"), "a path cannot contain a NUL byte")
    path = Path(requested)
    if not path.is_absolute():
        raise CorpusRefused(requested, "give an absolute path under one of the corpus roots")
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        # Missing and forbidden look alike, so a client cannot probe the server's folders.
        raise CorpusRefused(requested, "not a folder under the corpus roots") from None
    if not any(real == root or real.is_relative_to(root) for root in allowed):
        raise CorpusRefused(requested, "not a folder under the corpus roots")
    if not real.is_dir():
        raise CorpusError(requested, "not a folder")
    return real
