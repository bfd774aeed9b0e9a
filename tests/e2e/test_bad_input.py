"""Bad input that used to escape as ``internal error`` (exit 1) or hang: each is exit 2 and one line.

The installed CLI as a subprocess. None of these start Ray: validation comes first, and a join
to an address where nothing answers gives up within seconds.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_env import EXE, cli_env

QUERY = "What were ACME Corp total net sales for the quarter?"
# stage lines off a terminal (console.py): progress, not part of the error
PROGRESS = re.compile(r"deep-research: (starting|planning|researching|exploring|writing|done)\b")


def cli(
    *args: str | bytes, cwd: Path, env_extra: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = cli_env(cwd, {"LC_ALL": "C.UTF-8", **(env_extra or {})}, drop=("RAY_",))
    return subprocess.run(
        [EXE, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )


def assert_one_line(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip() and not PROGRESS.match(x)]
    assert len(lines) == 1, proc.stderr
    assert needle.lower() in lines[0].lower(), lines[0]


def run_dirs(cwd: Path) -> list[Path]:
    root = cwd / "state" / "runs"
    return sorted(root.iterdir()) if root.is_dir() else []


def test_a_binary_config_file(tmp_path: Path) -> None:
    binary = tmp_path / "ls.bin"
    binary.write_bytes(Path(sys.executable).resolve().read_bytes()[:4096])
    assert_one_line(cli("run", QUERY, "--config", str(binary), cwd=tmp_path), "not a YAML text")
    assert run_dirs(tmp_path) == []


def test_a_config_nested_5000_deep(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("run: " + "[" * 5000 + "]" * 5000 + "\n")
    assert_one_line(cli("run", QUERY, "--config", str(deep), cwd=tmp_path), "nested too deeply")


def test_an_env_list_value_that_is_not_json(tmp_path: Path) -> None:
    proc = cli("run", QUERY, cwd=tmp_path, env_extra={"DEEP_RESEARCH_LLM__FALLBACK": "[not json"})
    assert_one_line(proc, "DEEP_RESEARCH_LLM__FALLBACK")


def test_serve_on_a_port_out_of_range(tmp_path: Path) -> None:
    assert_one_line(cli("serve", "--port", "70000", cwd=tmp_path), "70000")


def test_a_query_that_is_not_utf8_writes_nothing(tmp_path: Path) -> None:
    proc = cli("run", b"What were ACME \xff\xfe net sales?", "--no-gate", cwd=tmp_path)
    assert_one_line(proc, "not valid UTF-8")
    assert run_dirs(tmp_path) == []


def test_an_address_where_nothing_listens_fails_in_seconds(tmp_path: Path) -> None:
    """Ray alone retries for about ten minutes; the subprocess timeout is the bound here."""
    proc = cli("run", QUERY, "--address", "127.0.0.1:1", "--json", cwd=tmp_path, timeout=90)
    assert_one_line(proc, "cannot connect")
    ended = json.loads(proc.stdout)  # --json stays JSON when the run fails
    assert ended["status"] == "failed" and ended["report_path"] is None
    listed = cli("runs", "list", "--json", cwd=tmp_path)
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["status"] == "failed"  # not "running", then "stopped"


@pytest.fixture()
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never says a word (not a Ray GCS)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    yield int(server.getsockname()[1])
    server.close()
    for conn in accepted:
        conn.close()


def test_an_address_that_never_answers_gives_up_at_the_configured_timeout(
    tmp_path: Path, silent_port: int
) -> None:
    proc = cli(
        "run",
        QUERY,
        "--address",
        f"127.0.0.1:{silent_port}",
        cwd=tmp_path,
        env_extra={"DEEP_RESEARCH_RAY__CONNECT_TIMEOUT_S": "3"},
        timeout=90,
    )
    assert_one_line(proc, "no Ray cluster answered within 3 s")
    assert "ray.connect_timeout_s" in proc.stderr


def test_a_config_path_with_a_nul_byte_starts_nothing(tmp_path: Path) -> None:
    """It used to start Ray and the run, then end in ``internal error: ValueError``."""
    config = tmp_path / "nul.yaml"
    config.write_text('run:\n  output_dir: "out\\0x"\n')
    proc = cli("run", QUERY, "--no-gate", "--config", str(config), cwd=tmp_path)
    assert_one_line(proc, "run.output_dir: Value error, a path cannot contain a NUL byte")
    assert run_dirs(tmp_path) == []


@pytest.mark.parametrize("command", [("resume",), ("runs", "show"), ("attach",)])
def test_a_run_id_too_long_for_a_file_name(command: tuple[str, ...], tmp_path: Path) -> None:
    """ENAMETOOLONG escaped as ``internal error: OSError`` (exit 1) quoting all 5000 digits."""
    proc = cli(*command, "9" * 5000, cwd=tmp_path)
    assert_one_line(proc, "9" * 64)  # "no run 99...9..." or "./runs/99...9...: no such run"
    assert len(proc.stderr) < 300


def test_a_checkpoint_with_good_hashes_but_the_wrong_shape(
    small_corpus: Path, tmp_path: Path
) -> None:
    """Checked against the checkpoint's schema before Ray starts: it was exit 1 with a Ray
    traceback (full of terminal colour codes) from the crew restoring it."""
    from deepresearch import runs
    from deepresearch.config.settings import load_settings
    from deepresearch.schemas import Request
    from deepresearch.storage import RunDir

    run_id = "20261128-030000-abcdef"
    flags = {"corpus": {"path": small_corpus}, "search": {"providers": ["local"]}}
    settings = load_settings(None, flags, env={})
    run_dir = RunDir.create(tmp_path / "state", run_id)
    request = Request(run_id=run_id, query=QUERY, mode="deep", created_at=0.0)
    runs.write_record(run_dir, request, settings, tmp_path)
    run_dir.write_checkpoint({"hello": [1, 2, 3]})  # its .sha256 is right
    proc = cli("resume", run_id, cwd=tmp_path)
    assert_one_line(proc, "not a checkpoint (request: Field required)")
    assert "\x1b[" not in proc.stderr
