"""Search a code folder (``--code DIR``) for the query's terms: ripgrep when present, else Python.

Questions about a code base are answered from its lines, so hits are single lines, named
``code:<relpath>#L<n>`` (the ``code_files`` fetcher resolves them), ranked by how many distinct
query terms a line holds, with at most ``PER_FILE`` hits per file so one big file cannot fill the
list. ``rg --json`` runs as an async subprocess (respecting .gitignore, skipping hidden and binary
files, never following symlinks) under a deadline; the pure-Python scan applies the same rules
minus .gitignore. Any path that resolves outside the folder is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from deepresearch.errors import ProviderError
from deepresearch.providers.search.corpus_store import inside, open_regular
from deepresearch.schemas import SearchHit

NAME = "grep"
PER_FILE = 3
MAX_TERMS = 8
MAX_MATCHES = 5000  # lines collected before the scan stops (rg is killed)
MAX_FILE_BYTES = 1_000_000
SNIPPET_CHARS = 300
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "build", "dist", "target"})
_TOKEN = re.compile(r"[A-Za-z_][\w.:-]*[\w]|[A-Za-z_]\w?")
_PHRASE = re.compile(r"\"([^\"]{2,})\"")
# Not ``text.terms.STOPWORDS``: in code "after", "all", "find", "list" are identifiers.
_CODE_QUERY_STOPWORDS = frozenset(
    str.split(
        """a an the of in on at for to with by from about into and or not is are was were be how what
    which who why when where does do did that this it its code function file files"""
    )
)


@dataclass(frozen=True)
class LineMatch:
    relpath: str
    line: int
    text: str


def query_terms(query: str) -> list[str]:
    """Quoted phrases first, then identifiers/words (stopwords dropped), at most ``MAX_TERMS``."""
    phrases = [p.strip() for p in _PHRASE.findall(query) if p.strip()]
    words = [
        w for w in _TOKEN.findall(_PHRASE.sub(" ", query)) if w.lower() not in _CODE_QUERY_STOPWORDS
    ]
    if not phrases and not words:
        words = _TOKEN.findall(query)
    unique = list(dict.fromkeys(t.lower() for t in [*phrases, *words]))
    return unique[:MAX_TERMS]


def rank_matches(
    matches: list[LineMatch], terms: list[str], query: str, limit: int
) -> list[SearchHit]:
    """Lines ranked by distinct terms held (+1 for the whole query), then by how many distinct
    terms the whole file holds, then path and line; at most ``PER_FILE`` per file."""
    phrase = " ".join(query.lower().split())
    file_terms: dict[str, set[str]] = {}
    scored: list[tuple[int, LineMatch]] = []
    for m in matches:
        lowered = m.text.lower()
        held = {t for t in terms if t in lowered}
        if not held:
            continue
        file_terms.setdefault(m.relpath, set()).update(held)
        scored.append((len(held) + (1 if len(phrase) > 2 and phrase in lowered else 0), m))
    scored.sort(key=lambda s: (-s[0], -len(file_terms[s[1].relpath]), s[1].relpath, s[1].line))
    hits: list[SearchHit] = []
    per_file: dict[str, int] = {}
    for _, m in scored:
        if len(hits) >= limit:
            break
        if per_file.get(m.relpath, 0) >= PER_FILE:
            continue
        per_file[m.relpath] = per_file.get(m.relpath, 0) + 1
        text = " ".join(m.text.split())
        if len(text) > SNIPPET_CHARS:
            text = text[: SNIPPET_CHARS - 1] + "…"
        hits.append(
            SearchHit(
                url=f"code:{m.relpath}#L{m.line}",
                title=f"{m.relpath}:{m.line}",
                snippet=text,
                provider=NAME,
                rank=len(hits) + 1,
                location=f"{m.relpath}, line {m.line}",
            )
        )
    return hits


class GrepSearch:
    """``SearchProvider`` over the files of one folder."""

    name = NAME

    def __init__(self, root: Path, *, timeout_s: float = 20.0) -> None:
        resolved = Path(os.path.realpath(root.expanduser()))
        if not resolved.is_dir():
            raise ProviderError(NAME, f"code folder {root} is not a directory", False)
        self.root = resolved
        self._timeout_s = timeout_s

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        rg = shutil.which("rg")
        if rg is not None:
            matches = await self._ripgrep(rg, terms)
        else:
            matches = await asyncio.to_thread(python_scan, self.root, terms)
        return rank_matches(matches, terms, query, limit)

    def _relpath(self, raw: str) -> str | None:
        path = self.root / raw
        if not inside(self.root, path):
            return None
        rel = Path(os.path.relpath(path, self.root)).as_posix()
        return None if rel.startswith("../") or rel == ".." else rel

    async def _ripgrep(self, rg: str, terms: list[str]) -> list[LineMatch]:
        args = [rg, "--json", "--ignore-case", "--fixed-strings", "--no-follow"]
        args += ["--max-filesize", str(MAX_FILE_BYTES), "--max-count", "200"]
        for term in terms:
            args += ["-e", term]
        args += ["--", "."]
        try:
            proc = await asyncio.create_subprocess_exec(
                *args,
                cwd=self.root,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise ProviderError(NAME, f"cannot run ripgrep ({exc.strerror})", False) from None
        assert proc.stderr is not None
        errors = asyncio.create_task(proc.stderr.read())  # drained alongside: never blocks rg
        matches: list[LineMatch] = []
        try:
            await asyncio.wait_for(self._read_rg(proc, matches), self._timeout_s)
        except TimeoutError:
            pass  # keep what was found before the deadline
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            await proc.wait()
            stderr = await errors
        if proc.returncode == 2 and not matches and stderr.strip():
            first = stderr.decode("utf-8", "replace").strip().splitlines()[0][:200]
            raise ProviderError(NAME, f"ripgrep failed: {first}", False)
        return matches

    async def _read_rg(self, proc: asyncio.subprocess.Process, out: list[LineMatch]) -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            match = self._parse_rg_line(raw)
            if match is not None:
                out.append(match)
                if len(out) >= MAX_MATCHES:
                    return
        await proc.wait()

    def _parse_rg_line(self, raw: bytes) -> LineMatch | None:
        try:
            event = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(event, dict) or event.get("type") != "match":
            return None
        data = event.get("data") or {}
        path = (data.get("path") or {}).get("text")
        text = (data.get("lines") or {}).get("text")
        line = data.get("line_number")
        if not isinstance(path, str) or not isinstance(text, str) or not isinstance(line, int):
            return None  # non-UTF-8 names and lines come as base64 "bytes": skipped
        rel = self._relpath(path)
        return LineMatch(rel, line, text.rstrip("\n")) if rel is not None else None


def python_scan(root: Path, terms: list[str]) -> list[LineMatch]:
    """The fallback: walk ``root`` (no symlinks, no hidden or build folders, no binary or large
    files) and keep lines holding any term, case-insensitively."""
    matches: list[LineMatch] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            path = Path(dirpath) / filename
            if path.is_symlink() or not inside(root, path):
                continue
            rel = path.relative_to(root).as_posix()
            for number, line in _matching_lines(path, terms):
                matches.append(LineMatch(rel, number, line))
                if len(matches) >= MAX_MATCHES:
                    return matches
    return matches


def _matching_lines(path: Path, terms: list[str]) -> list[tuple[int, str]]:
    try:
        with open_regular(path) as handle:  # a FIFO or a device would block the read
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                return []
            data = handle.read()
    except OSError:
        return []
    if b"\x00" in data[:8192]:
        return []
    found = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        lowered = line.lower()
        if any(t in lowered for t in terms):
            found.append((number, line))
    return found
