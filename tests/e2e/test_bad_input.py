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
# stage lines off a terminal (commands/console.py): progress, not part of the error
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


def a_folder(cwd: Path) -> str:
    folder = cwd / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "memo.txt").write_text("ACME Corp net sales were 1,234 million.\n")
    return str(folder)


DEAD_JOBS = "http://127.0.0.1:1"  # never reached: each case fails before any request

# (arguments, a word of the one line); {folder} is an existing folder, {missing} is not.
USAGE_ERRORS = {
    "serve-missing-corpus": (["serve", "--corpus", "{missing}", "--port", "0"], "does not exist"),
    "serve-missing-root": (["serve", "--corpus-root", "{missing}", "--port", "0"], "not exist"),
    "serve-address-scheme": (["serve", "--address", "ftp://x", "--port", "0"], "Ray address"),
    "mcp-missing-root": (["mcp", "--corpus-root", "{missing}"], "does not exist"),
    "run-address-scheme": (["run", QUERY, "--address", "ftp://x"], "not a Ray address"),
    "run-address-empty": (["run", QUERY, "--address", ""], "not a Ray address"),
    "run-address-jobs-url": (["run", QUERY, "--address", "http://h:8265"], "not a Ray address"),
    "run-address-port": (["run", QUERY, "--address", "h:99999"], "not a Ray address"),
    "run-env-address": (["run", QUERY, "--no-gate", "--env:ftp://x"], "ray.address"),
    "run-missing-code": (["run", QUERY, "--search", "grep", "--code", "{missing}"], "not exist"),
    "run-missing-plan": (["run", QUERY, "--mode", "deep", "--plan-file", "{missing}"], "not exist"),
    "run-follow-up-path": (["run", QUERY, "--follow-up", "../x"], "not a run id"),
    "resume-empty-id": (["resume", ""], "not a run id"),
    "resume-address": (["resume", "20260101-000000-abcdef", "--address", "ftp://x"], "address"),
    "attach-empty-id": (["attach", ""], "not a run id"),
    "runs-show-tail": (["runs", "show", "some-run", "--tail", "-3"], "-3"),
    "runs-show-tail-type": (["runs", "show", "some-run", "--tail", "ten"], "ten"),
    "runs-show-empty-id": (["runs", "show", " "], "not a run id"),
    "submit-upload": (["submit", QUERY, "--corpus", "{folder}", "--max-upload-mb", "-1"], "-1"),
    "submit-upload-zero": (["submit", QUERY, "--corpus", "{folder}", "--max-upload-mb", "0"], "0"),
    "submit-missing-corpus": (["submit", QUERY, "--corpus", "{missing}"], "does not exist"),
    "submit-parallel": (["submit", QUERY, "--max-parallel", "0"], "deep.max_parallel"),
    "submit-time": (["submit", QUERY, "--max-time", "-5"], "run.max_time_s"),
    "submit-llm": (["submit", QUERY, "--llm", "bogus"], "unknown provider"),
    "submit-search": (["submit", QUERY, "--search", "local,bogus"], "unknown provider 'bogus'"),
    "submit-empty-query": (["submit", "  "], "the query is empty"),
    "submit-upload-nan": (
        ["submit", QUERY, "--corpus", "{folder}", "--max-upload-mb", "nan"],
        "nan",
    ),
    "submit-empty-remote": (["submit", QUERY, "--remote-corpus", " "], "must not be empty"),
    "submit-pass-env-empty": (["submit", QUERY, "--pass-env", ""], "variable's name"),
    "jobs-status-empty-id": (["jobs", "status", ""], "must not be empty"),
    "jobs-logs-path-id": (["jobs", "logs", "a/b"], "slash"),
    "serve-all-addresses": (["serve", "--host", "", "--port", "0"], "all addresses without"),
    "submit-empty-python": (["submit", QUERY, "--python", ""], "ray.job_python"),
    "submit-address-scheme": (["submit", QUERY, "--address", "ftp://x"], "http(s) URL"),
    "jobs-list-address-scheme": (["jobs", "list", "--address", "ftp://x"], "http(s) URL"),
    "jobs-status-address-empty": (["jobs", "status", "j", "--address", ""], "http(s) URL"),
    "jobs-logs-address-words": (["jobs", "logs", "j", "--address", "not a url"], "http(s) URL"),
    "jobs-stop-address-port": (["jobs", "stop", "j", "--address", "http://h:0"], "http(s) URL"),
}


@pytest.mark.parametrize("case", USAGE_ERRORS, ids=list(USAGE_ERRORS))
def test_usage_errors_are_one_line_before_anything_starts(case: str, tmp_path: Path) -> None:
    args, needle = USAGE_ERRORS[case]
    env_extra = {"RAY_API_SERVER_ADDRESS": DEAD_JOBS}
    filled = []
    for arg in args:
        if arg.startswith("--env:"):  # the same rule when the value comes from the environment
            env_extra["DEEP_RESEARCH_RAY__ADDRESS"] = arg.removeprefix("--env:")
            continue
        missing = str(tmp_path / "missing")
        filled.append(arg.format(folder=a_folder(tmp_path), missing=missing))
    proc = cli(*filled, cwd=tmp_path, env_extra=env_extra, timeout=60)
    assert_one_line(proc, needle)
    assert "does not exist. This module" not in proc.stderr  # no Ray riddle
    assert proc.stdout == ""
    assert run_dirs(tmp_path) == []


def test_runs_show_json_is_one_line_and_tail_zero_shows_no_events(tmp_path: Path) -> None:
    from deepresearch.config.settings import load_settings
    from deepresearch.schemas import Event, Request
    from deepresearch.storage.run_dir import RunDir
    from deepresearch.storage.runs import write_record

    state = tmp_path / "state"
    run_dir = RunDir.create(state, "old-run")
    write_record(
        run_dir, Request(run_id="old-run", query="q", mode="quick"), load_settings(), state
    )
    for seq in (1, 2, 3):
        run_dir.append_event(Event(seq=seq, ts=1.0, run_id="old-run", type="run_started"))
    run_dir.close()
    proc = cli("runs", "show", "old-run", "--json", "--tail", "0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    shown = json.loads(line)
    assert shown["events"] == 3 and shown["tail"] == []  # --tail 0 is none, not all


@pytest.fixture()
def jobs_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback stand-in for a Ray Jobs server that knows no job: it answers the SDK's version
    check and 404s a job id, as Ray's does; any other request fails the test."""
    import http.server

    import ray

    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            if self.path == "/api/version":
                body, code = json.dumps({"version": "4", "ray_version": ray.__version__}), 200
            elif self.path.startswith("/api/jobs/"):
                job = self.path.split("/")[3]
                body, code = f"Job {job} does not exist", 404
            else:
                body, code = "unexpected", 500
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        do_POST = do_GET  # jobs stop posts to /api/jobs/ID/stop

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command", ["status", "logs", "stop", "report"])
def test_an_unknown_job_is_no_such_job(
    command: str, jobs_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, seen = jobs_server
    proc = cli("jobs", command, "nope-123", "--address", url, cwd=tmp_path, timeout=60)
    assert_one_line(proc, f"no such job nope-123 at {url}")
    assert "404" not in proc.stderr.replace(
        url, ""
    )  # the status is not shown (the port may hold 404)
    assert seen and all(p == "/api/version" or "nope-123" in p for p in seen), seen


def test_a_value_given_to_pass_env_is_never_echoed(tmp_path: Path) -> None:
    secret = "sk-live-DO-NOT-ECHO-9f2c"
    for typed in (f"OPENAI_API_KEY={secret}", secret):
        proc = cli("submit", QUERY, "--pass-env", typed, cwd=tmp_path, timeout=60)
        assert_one_line(proc, "variable's name")
        assert secret not in proc.stderr + proc.stdout


def test_a_config_path_with_a_nul_byte_starts_nothing(tmp_path: Path) -> None:
    """It used to start Ray and the run, then end in ``internal error: ValueError``."""
    config = tmp_path / "nul.yaml"
    config.write_text('run:\n  output_dir: "out\\0x"\n')
    proc = cli("run", QUERY, "--no-gate", "--config", str(config), cwd=tmp_path)
    assert_one_line(proc, "run.output_dir: a path cannot contain a NUL byte")
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
    from deepresearch.config.settings import load_settings
    from deepresearch.schemas import Request
    from deepresearch.storage import runs
    from deepresearch.storage.run_dir import RunDir

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
