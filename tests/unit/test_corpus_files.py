"""Only regular files are read from a corpus or a code folder: a FIFO, a socket or a device named
``*.txt`` is skipped and reported, never opened in a way that could block the run forever."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from inline_pool import InlinePool

from deepresearch.errors import ExtractionError, FetchError
from deepresearch.providers.documents.extract import extract_path
from deepresearch.providers.search.code_files import CodeFiles
from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.corpus_store import open_regular, scan_corpus
from deepresearch.providers.search.grep import python_scan

T = TypeVar("T")
DEADLINE_S = 60.0  # generous: the guarded calls take milliseconds when nothing blocks


def finishes(fifos: list[Path], call: Callable[[], T]) -> T:
    """``call()``'s result; fails (after unblocking any reader stuck on a FIFO) if it hangs."""
    done = threading.Event()
    box: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(DEADLINE_S):
        for fifo in fifos:  # give the stuck open() a writer so the thread can end
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        pytest.fail(f"blocked on a FIFO for {DEADLINE_S:.0f} s")
    if errors:
        raise errors[0]
    return box[0]


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[tuple[Path, list[Path]]]:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "notes.md").write_text("Widget production doubled in 2023 at the plant.\n")
    fifo = root / "pipe.txt"
    os.mkfifo(fifo)
    (root / "sub" / "to-pipe.md").symlink_to(fifo)  # a link inside the corpus to the FIFO
    (root / "zero.txt").symlink_to("/dev/zero")  # a device, and outside the corpus
    yield root, [fifo]


def test_index_build_skips_a_fifo_and_reports_it(
    corpus: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    root, fifos = corpus
    warnings: list[tuple[str, str]] = []
    index = finishes(
        fifos,
        lambda: CorpusIndex.open(
            root,
            tmp_path / "cache",
            passage_chars=400,
            pool_factory=InlinePool,
            on_warning=lambda kind, msg: warnings.append((kind, msg)),
        ),
    )
    assert index.documents == 1
    assert [h.url for h in index.search("widget production", 5)] == ["doc:notes.md"]
    assert ("not_regular_file", "pipe.txt: a FIFO, skipped") in warnings
    assert ("not_regular_file", "sub/to-pipe.md: a FIFO, skipped") in warnings
    assert ("outside_corpus", "zero.txt: links outside the corpus folder, skipped") in warnings
    with pytest.raises(FetchError, match="no such document"):
        index.page_text("doc:pipe.txt")


def test_scan_lists_only_regular_files(corpus: tuple[Path, list[Path]], tmp_path: Path) -> None:
    root, _ = corpus
    warnings: list[tuple[str, str]] = []
    _, files = scan_corpus(root, None, lambda kind, msg: warnings.append((kind, msg)))
    assert [f.relpath for f in files] == ["notes.md"]
    assert [k for k, _ in warnings].count("not_regular_file") == 2


def test_open_regular_refuses_without_blocking(corpus: tuple[Path, list[Path]]) -> None:
    root, fifos = corpus
    with pytest.raises(OSError, match="a FIFO, not a regular file"):
        finishes(fifos, lambda: open_regular(root / "pipe.txt"))
    with pytest.raises(OSError, match="a character device, not a regular file"):
        open_regular(Path("/dev/null"))
    with open_regular(root / "notes.md") as handle:
        assert handle.read().startswith(b"Widget")
    with pytest.raises(ExtractionError, match="not a regular file"):
        finishes(fifos, lambda: extract_path(root / "pipe.txt"))


def test_code_folder_fifo_is_neither_searched_nor_fetched(tmp_path: Path) -> None:
    root = tmp_path / "code"
    root.mkdir()
    (root / "retry.py").write_text("def retry_after(value):\n    return value\n")
    fifo = root / "queue.py"
    os.mkfifo(fifo)
    matches = finishes([fifo], lambda: python_scan(root, ["retry"]))
    assert [m.relpath for m in matches] == ["retry.py"]
    files = CodeFiles(root)
    with pytest.raises(FetchError, match="a FIFO, not a regular file"):
        finishes([fifo], lambda: _fetch_sync(files, "code:queue.py"))


def _fetch_sync(files: CodeFiles, url: str) -> object:
    import asyncio

    return asyncio.run(files.fetch(url))


def test_the_index_cache_is_private(corpus: tuple[Path, list[Path]], tmp_path: Path) -> None:
    root, fifos = corpus
    old = os.umask(0o022)
    try:
        finishes(
            fifos,
            lambda: CorpusIndex.open(
                root, tmp_path / "cache", passage_chars=400, pool_factory=InlinePool
            ),
        )
    finally:
        os.umask(old)
    cache = tmp_path / "cache"
    found = [cache, *cache.rglob("*")]
    assert len(found) > 5  # manifest, extracted text, the bm25 index files
    loose = [
        f"{p.relative_to(cache)} {stat.S_IMODE(p.lstat().st_mode):o}"
        for p in found
        if stat.S_IMODE(p.lstat().st_mode) != (0o700 if p.is_dir() else 0o600)
    ]
    assert loose == []
