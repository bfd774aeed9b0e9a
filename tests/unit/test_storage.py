"""Run directory, atomic and exclusive writes, event log and checkpoints (real temp files)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepresearch.errors import CheckpointCorrupt, StorageError
from deepresearch.schemas import Event, FetchedDoc
from deepresearch.storage.run_dir import RunDir, create_exclusive, new_run_id, write_atomic


def _event(seq: int) -> Event:
    return Event(seq=seq, ts=float(seq), run_id="r", type="t", payload={"n": seq, "s": "a\nb"})


# --------------------------------------------------------------------------- write_atomic


def test_write_atomic_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_write_atomic_missing_dir_is_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as info:
        write_atomic(tmp_path / "nope" / "f.txt", b"x")
    assert info.value.path == str(tmp_path / "nope")


# --------------------------------------------------------------------------- create_exclusive


def test_create_exclusive_writes_new_file(tmp_path: Path) -> None:
    path = create_exclusive(tmp_path, lambda i: f"r-{i}.md", b"hello")
    assert path == tmp_path / "r-0.md"
    assert path.read_bytes() == b"hello"
    assert (path.stat().st_mode & 0o777) == 0o600  # private whatever the umask


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "r-0.md").write_text("keep")
    (tmp_path / "r-1.md").write_text("keep too")
    path = create_exclusive(tmp_path, lambda i: f"r-{i}.md", b"new")
    assert path.name == "r-2.md"
    assert (tmp_path / "r-0.md").read_text() == "keep"


def test_create_exclusive_does_not_follow_symlinks(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("secret")
    (tmp_path / "r-0.md").symlink_to(victim)
    (tmp_path / "r-1.md").symlink_to(tmp_path / "dangling")
    path = create_exclusive(tmp_path, lambda i: f"r-{i}.md", b"new")
    assert path.name == "r-2.md"
    assert victim.read_text() == "secret"
    assert not (tmp_path / "dangling").exists()


def test_create_exclusive_data_can_name_its_path(tmp_path: Path) -> None:
    (tmp_path / "r-0.md").write_text("x")
    path = create_exclusive(
        tmp_path, lambda i: f"r-{i}.md", lambda p: f"saved at {p.name}".encode()
    )
    assert path.read_text() == "saved at r-1.md"


def test_create_exclusive_gives_up(tmp_path: Path) -> None:
    (tmp_path / "same.md").write_text("x")
    with pytest.raises(StorageError, match="no free file name"):
        create_exclusive(tmp_path, lambda i: "same.md", b"y", attempts=3)


def test_create_exclusive_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(StorageError) as info:
        create_exclusive(tmp_path / "missing", lambda i: "a.md", b"x")
    assert info.value.reason == "directory does not exist"
    assert pickle.loads(pickle.dumps(info.value)).path == str(tmp_path / "missing")


def test_create_exclusive_unwritable_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # root ignores mode bits, so simulate the refusal
    with pytest.raises(StorageError, match="not writable") as info:
        create_exclusive(tmp_path, lambda i: "a.md", b"x")
    assert info.value.path == str(tmp_path)


def test_create_exclusive_target_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(StorageError):
        create_exclusive(afile, lambda i: "a.md", b"x")


# --------------------------------------------------------------------------- run ids and RunDir


def test_new_run_id_is_sortable_utc() -> None:
    assert new_run_id(0.0, b"\xab\x12\xcd\xff") == "19700101-000000-ab12cd"
    first = new_run_id(1_700_000_000.0, b"\xff\xff\xff")
    later = new_run_id(1_700_000_001.0, b"\x00\x00\x00")
    assert first < later
    with pytest.raises(ValueError):
        new_run_id(0.0, b"\x01")


def test_create_run_dir(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "state", "run-1")
    assert run.root == tmp_path / "state" / "runs" / "run-1"
    assert run.root.is_dir()
    assert list(run.root.iterdir()) == []  # the probe is gone
    assert RunDir.existing(tmp_path / "state", "run-1").root == run.root
    with pytest.raises(StorageError, match="no such run"):
        RunDir.existing(tmp_path / "state", "other")


@pytest.fixture(params=[0o000, 0o022, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_run_state_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    state = tmp_path / "state"
    with RunDir.create(state, "r") as run:
        run.append_event(_event(1))
        run.append_doc(FetchedDoc(url="https://x.example/", title="t", location="l", text="secret"))
        run.write_text("report.partial.md", "# partial\n")
        run.write_checkpoint({"step": 1})
        run.write_checkpoint({"step": 2})
    names = sorted(p.name for p in run.root.iterdir())
    assert names == [
        "checkpoint.json",
        "checkpoint.json.sha256",
        "checkpoint.prev.json",
        "checkpoint.prev.json.sha256",
        "docs.jsonl",
        "events.jsonl",
        "report.partial.md",
    ]
    assert {name: mode(run.root / name) for name in names} == dict.fromkeys(names, 0o600)
    assert [mode(d) for d in (state, state / "runs", run.root)] == [0o700] * 3
    report = create_exclusive(tmp_path, lambda n: f"report-{n}.md", b"private text")
    assert mode(report) == 0o600


def test_an_older_run_is_tightened_and_a_shared_state_dir_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "runs" / "r").mkdir(parents=True)
    for folder in (shared, shared / "runs", shared / "runs" / "r"):
        folder.chmod(0o755)
    (shared / "runs" / "r" / "events.jsonl").write_bytes(b"")
    (shared / "runs" / "r" / "events.jsonl").chmod(0o644)
    with RunDir.create(shared, "r") as run:
        run.append_event(_event(1))
    assert mode(shared) == 0o755  # the user's own folder, maybe shared on purpose
    assert [mode(shared / "runs"), mode(run.root)] == [0o700, 0o700]
    assert mode(run.path("events.jsonl")) == 0o600


def test_create_run_dir_under_a_file_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("not a dir")
    with pytest.raises(StorageError, match="not writable"):
        RunDir.create(blocker, "run-1")


def test_path_refuses_escapes(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    for bad in ("../x", "a/b", "", ".."):
        with pytest.raises(StorageError):
            run.path(bad)
    run.write_text("report.partial.md", "# partial\n")
    assert run.path("report.partial.md").read_text() == "# partial\n"


def test_events_round_trip(tmp_path: Path) -> None:
    with RunDir.create(tmp_path, "r") as run:
        for seq in range(1, 4):
            run.append_event(_event(seq))
        assert run.read_events() == [_event(1), _event(2), _event(3)]
    lines = run.path("events.jsonl").read_bytes().splitlines()
    assert len(lines) == 3
    assert json.loads(lines[0])["seq"] == 1


def test_torn_last_line_is_ignored_and_repaired(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.append_event(_event(1))
    run.append_event(_event(2))
    run.close()
    path = run.path("events.jsonl")
    full = _event(3).model_dump_json().encode()
    with open(path, "ab") as fh:
        fh.write(full[: len(full) // 2])  # crash mid-write
    assert [e.seq for e in RunDir(run.root).read_events()] == [1, 2]
    again = RunDir(run.root)
    again.append_event(_event(3))  # appending first cuts the torn tail
    assert [e.seq for e in again.read_events()] == [1, 2, 3]
    again.close()


def test_garbage_terminated_last_line_is_ignored(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.append_event(_event(1))
    run.close()
    with open(run.path("events.jsonl"), "ab") as fh:
        fh.write(b"\x00\x00\x00\n")
    assert [e.seq for e in run.read_events()] == [1]


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    path = run.path("events.jsonl")
    good = _event(1).model_dump_json()
    path.write_text(f"{good}\n{{not json\n{_event(3).model_dump_json()}\n")
    with pytest.raises(StorageError, match="line 2"):
        run.read_events()


def test_no_events_file_means_no_events(tmp_path: Path) -> None:
    assert RunDir.create(tmp_path, "r").read_events() == []


# --------------------------------------------------------------------------- checkpoints


def test_checkpoint_round_trip_and_hash_file(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint({"state": "researching", "done": ["a"], "note": "ü"})
    payload = run.path("checkpoint.json").read_bytes()
    recorded = run.path("checkpoint.json.sha256").read_text().split()
    assert recorded == [hashlib.sha256(payload).hexdigest(), "checkpoint.json"]
    loaded = run.load_checkpoint()
    assert loaded.data == {"state": "researching", "done": ["a"], "note": "ü"}
    assert not loaded.used_previous
    assert run.read_checkpoint() == loaded.data


def test_previous_checkpoint_is_kept(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint({"v": 1})
    run.write_checkpoint({"v": 2})
    assert json.loads(run.path("checkpoint.prev.json").read_bytes()) == {"v": 1}
    assert run.read_checkpoint() == {"v": 2}


def test_truncated_checkpoint_falls_back_to_previous(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint({"v": 1})
    run.write_checkpoint({"v": 2, "more": "x" * 50})
    path = run.path("checkpoint.json")
    path.write_bytes(path.read_bytes()[:10])
    loaded = run.load_checkpoint()
    assert loaded.data == {"v": 1}
    assert loaded.used_previous
    assert loaded.path == run.path("checkpoint.prev.json")


def test_bad_checkpoint_is_not_promoted_to_previous(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint({"v": 1})
    run.write_checkpoint({"v": 2})
    run.path("checkpoint.json").write_bytes(b'{"v": 666}')  # modified: hash mismatch
    run.write_checkpoint({"v": 3})
    assert json.loads(run.path("checkpoint.prev.json").read_bytes()) == {"v": 1}
    assert run.read_checkpoint() == {"v": 3}


def test_both_checkpoints_bad_raises(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint({"v": 1})
    run.path("checkpoint.json.sha256").write_text("0" * 64 + "  checkpoint.json\n")
    with pytest.raises(CheckpointCorrupt) as info:
        run.read_checkpoint()
    assert "hash mismatch" in info.value.reason
    copy = pickle.loads(pickle.dumps(info.value))
    assert isinstance(copy, CheckpointCorrupt)
    assert copy.reason == info.value.reason


def test_missing_checkpoint_raises(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    assert not run.has_checkpoint()
    with pytest.raises(CheckpointCorrupt, match="missing"):
        run.read_checkpoint()


def test_a_checkpoint_of_the_wrong_shape_is_refused_by_the_readers_schema(tmp_path: Path) -> None:
    """Good hashes, wrong content: with the schema check the previous good checkpoint is used,
    and without one a CheckpointCorrupt names the first wrong field."""
    from deepresearch.policies.lifecycle import checkpoint as checkpoint_format
    from deepresearch.policies.lifecycle import reducer as lc
    from deepresearch.schemas import Request, Usage

    good = checkpoint_format.payload(
        Request(run_id="r", query="q"), lc.initial(2, 3), [], [], Usage(), {}
    )
    run = RunDir.create(tmp_path, "r")
    run.write_checkpoint(good)
    run.write_checkpoint({**good, "lifecycle": {**good["lifecycle"], "round": "second"}})
    loaded = run.load_checkpoint(checkpoint_format.problem)
    assert loaded.used_previous and loaded.data == json.loads(json.dumps(good))
    run.write_checkpoint({"hello": [1, 2, 3]})  # the wrong-round one is now the previous
    with pytest.raises(CheckpointCorrupt) as info:
        run.load_checkpoint(checkpoint_format.problem)
    assert info.value.reason.startswith("not a checkpoint (request: Field required); previous")
    assert "previous checkpoint: not a checkpoint (lifecycle.round:" in info.value.reason


def test_folders_made_for_reports_are_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    """``--output-dir`` folders were made 0777 & ~umask (0777 under umask 000); and ``serve``'s
    state folder, made as the parent of its report folder, 0755 under umask 022."""
    from deepresearch.config.settings import load_settings
    from deepresearch.service.outcome import service_settings
    from deepresearch.storage.output_dir import check_output_dir

    made = check_output_dir(tmp_path / "reports" / "2026", create=True)
    assert [mode(made.parent), mode(made)] == [0o700, 0o700]
    settings = load_settings(None, {"state_dir": tmp_path / "state"}, env={})
    chosen = service_settings(settings).run.output_dir
    assert chosen == tmp_path / "state" / "reports"
    assert [mode(tmp_path / "state"), mode(chosen)] == [0o700, 0o700]


def test_folders_are_made_only_through_private_files() -> None:
    """One way to make a folder (``private_files.make_private_dir(s)``), so none is made with
    the umask's mode: no other module calls mkdir or makedirs."""
    import ast

    root = Path(__file__).resolve().parents[2]
    skipped = {"tests", "bench", "build"}
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in skipped and not d.startswith(".")]
        for name in files:
            path = Path(folder) / name
            if path.suffix != ".py" or name == "private_files.py":
                continue
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in ("mkdir", "makedirs"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
