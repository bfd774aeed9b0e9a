"""The run directory's line files (``docs.jsonl``): a torn tail is cut reading only the tail,
and lines appended from many worker threads at once are all kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deepresearch.schemas import FetchedDoc
from deepresearch.storage.run_dir import RunDir


def _doc(n: int) -> FetchedDoc:
    return FetchedDoc(
        url=f"https://example.com/{n}", title=f"Page {n}", location="", text="solar " * 40
    )


@pytest.mark.parametrize("torn", [b'{"url": "torn', b'{"text": "' + b"x" * 200_000])
def test_a_torn_doc_tail_of_a_large_file_is_cut_reading_only_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torn: bytes
) -> None:
    """Megabytes of documents kept, then half a line (short, or longer than one read back
    from the end): the next append cuts only the half line, and reads no more than it."""
    run = RunDir.create(tmp_path, "r")
    for n in range(6_000):
        run.append_doc(_doc(n))
    run.close()
    path = run.path("docs.jsonl")
    intact = path.stat().st_size
    assert intact > 1_000_000
    with open(path, "ab") as fh:
        fh.write(torn)
    read = 0
    real_open = open

    class Counted:
        def __init__(self, fh: Any) -> None:
            self.fh = fh

        def read(self, size: int = -1) -> bytes:
            nonlocal read
            data: bytes = self.fh.read(size)
            read += len(data)
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(self.fh, name)

        def __enter__(self) -> Counted:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

    monkeypatch.setattr(
        "deepresearch.storage.run_dir.open",
        lambda *a, **k: Counted(real_open(*a, **k)),
        raising=False,
    )
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read the whole file"))
    again = RunDir(run.root)
    again.append_doc(_doc(6_000))
    again.close()
    monkeypatch.undo()
    assert read <= len(torn) + 2 * 64 * 1024
    docs = RunDir(run.root).read_docs()
    assert [d.url for d in docs] == [f"https://example.com/{n}" for n in range(6_001)]
    assert path.stat().st_size > intact


def test_an_intact_doc_file_is_left_as_it_is(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.append_doc(_doc(1))
    run.close()
    before = run.path("docs.jsonl").read_bytes()
    again = RunDir(run.root)
    again.append_doc(_doc(2))
    again.close()
    assert run.path("docs.jsonl").read_bytes().startswith(before)
    assert [d.url for d in RunDir(run.root).read_docs()] == [
        "https://example.com/1",
        "https://example.com/2",
    ]


def test_documents_appended_from_many_threads_at_once_are_all_kept(tmp_path: Path) -> None:
    """Pages are written from worker threads; the first appends of two batches at once must
    not cut each other's line as a "torn" tail."""
    import threading

    for trial in range(20):
        run = RunDir.create(tmp_path / "state", f"run-{trial}")
        start = threading.Barrier(8)

        def write(n: int, run: RunDir = run, start: threading.Barrier = start) -> None:
            start.wait()
            run.append_doc(
                FetchedDoc(
                    url=f"https://x.example/{n}", title="t", location="l", text="w" * 300_000
                )
            )

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        run.close()
        assert len(run.read_docs()) == 8, trial
