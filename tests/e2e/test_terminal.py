"""The real CLI on a pseudo-terminal, as a user's shell runs it: progress, prompts, Ctrl-C, the screen.

Every other tier runs the CLI with pipes, where the progress display is off; these catch what
only a terminal shows (the live line, its erasure, the plan-review prompts, Ctrl-C). The screen a
user is left with is rendered by a terminal emulator (pyte) from the bytes the CLI wrote.
Ray start-ups are the cost: one per CLI process that runs research, three in this file.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

import pyte
import pytest
from cli_env import EXE, cli_env

from deepresearch.config.settings import load_settings
from deepresearch.schemas import Event, Request, RunSummary
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

COLS, ROWS = 200, 50
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-2]")
LINE = re.compile(
    r"(?P<phase>[a-z]+) +[━ ]*(?P<percent>\d+%|exploring) · round (?P<round>\d+) · "
    r"researchers (?P<researchers>\d+) · sources (?P<sources>\d+) · tokens (?P<tokens>[\d,]+) · "
    r"\$(?P<cost>\d+\.\d+)"
)
QUICK = "What were ACME Corp total net sales for the quarter ended March 31, 2024?"
DEEP = "Compare ACME Corp sales, Globex Inc revenue and ACME dividend"


def env_for(cwd: Path, **extra: str) -> dict[str, str]:
    env = cli_env(cwd, {"TERM": "xterm-256color"})
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    env.update(extra)
    return env


class Terminal:
    """One CLI process whose stdin and stderr (and stdout unless ``pipe_stdout``) are a pty that
    is its controlling terminal, so Ctrl-C typed into it is a SIGINT as in a shell."""

    def __init__(self, *args: str, cwd: Path, pipe_stdout: bool = False, **env: str) -> None:
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.proc = subprocess.Popen(
            [EXE, *args],
            cwd=cwd,
            env=env_for(cwd, **env),
            stdin=slave,
            stdout=subprocess.PIPE if pipe_stdout else slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self._raw = bytearray()
        self._seen = threading.Condition()
        self._pos = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO: every process holding the pty's other end has closed it
                chunk = b""
            with self._seen:
                self._raw += chunk
                self._seen.notify_all()
            if not chunk:
                return

    @property
    def text(self) -> str:
        """Everything written so far, escapes removed, one line per redraw."""
        with self._seen:
            raw = bytes(self._raw)
        return ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r", "\n")

    def expect(self, pattern: str, timeout: float = 240) -> re.Match[str]:
        """Wait until ``pattern`` appears in the output after the previous match."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        with self._seen:
            while (found := regex.search(self.text, self._pos)) is None:
                left = deadline - time.monotonic()
                ended = self.proc.poll() is not None and not self._reader.is_alive()
                assert left > 0 and not ended, (
                    f"no {pattern!r} on the terminal; it shows:\n{self.text[-3000:]}"
                )
                self._seen.wait(min(left, 1.0))
            self._pos = found.end()
            return found

    def send(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def finish(self, timeout: float = 300) -> tuple[int, str]:
        """Exit code and stdout (when piped), once the pty has been read to the end: EIO, or a
        moment without output should a process the CLI started still hold the terminal."""
        out = self.proc.stdout.read().decode() if self.proc.stdout else ""
        code = self.proc.wait(timeout=timeout)
        with self._seen:
            while self._reader.is_alive():
                size = len(self._raw)
                self._seen.wait(1.0)
                if len(self._raw) == size:
                    break
        if not self._reader.is_alive():
            os.close(self._master)
        return code, out

    def screen(self) -> list[str]:
        """The non-blank lines a user sees once the command has returned."""
        screen = pyte.Screen(COLS, ROWS)
        stream = pyte.ByteStream(screen)
        with self._seen:
            stream.feed(bytes(self._raw))
        return [line.rstrip() for line in screen.display if line.strip()]

    def progress_lines(self) -> list[dict[str, str]]:
        return [m.groupdict() for m in LINE.finditer(self.text)]


def assert_clean_progress(term: Terminal, *, sources: bool = True) -> None:
    """The live line was drawn with every field, changed as the run went, and is gone."""
    text = term.text
    assert "Traceback" not in text and "internal error" not in text, text[-3000:]
    lines = term.progress_lines()
    assert lines, f"no progress line was drawn:\n{text[-3000:]}"
    assert len({line["phase"] for line in lines}) >= 2, {line["phase"] for line in lines}
    if sources:
        assert max(int(line["sources"]) for line in lines) > 0
    assert not [line for line in term.screen() if LINE.search(line)], term.screen()


@pytest.mark.slow
def test_quick_run_json_into_a_new_output_dir(small_corpus: Path, tmp_path: Path) -> None:
    """``run --json`` on a terminal: progress on the pty, one JSON object on stdout, and a missing
    ``--output-dir`` is created for the report."""
    term = Terminal(
        "run", QUICK, "--corpus", str(small_corpus), "--output-dir", "out/new", "--json",
        cwd=tmp_path, pipe_stdout=True,
    )  # fmt: skip
    code, out = term.finish()
    assert code == 0, term.text[-3000:]
    assert_clean_progress(term)
    summary = json.loads(out)  # stdout is exactly one JSON object
    assert summary["status"] == "completed"
    report = Path(summary["report_path"])
    assert report.parent == tmp_path / "out" / "new" and report.is_file()
    assert term.screen() == []  # stderr had only the live line, now erased


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_deep_review_plan_ctrl_c_then_resume(small_corpus: Path, tmp_path: Path) -> None:
    """``--mode Deep --review-plan`` answered through the terminal (an invalid answer is asked
    again), Ctrl-C once a researcher has finished (exit 130, resumable), then ``resume`` on the
    terminal finishes the reviewed agenda and leaves only the report path on the screen."""
    slow = {"DEEP_RESEARCH_SIMULATE__LATENCY_S": "0.4", "DEEP_RESEARCH_DEEP__MAX_PARALLEL": "1"}
    term = Terminal(
        "run", DEEP, "--mode", "Deep", "--review-plan", "--corpus", str(small_corpus), "--json",
        cwd=tmp_path, pipe_stdout=True, **slow,
    )  # fmt: skip
    # the plan leads with the whole question (researched as quick mode does), then its parts
    term.expect(r"1\. Compare ACME Corp sales, Globex Inc revenue and ACME dividend\s+\[k\]eep")
    term.send("d\r")
    term.expect(r"2\. What are ACME Corp sales\?\s+\[k\]eep, \[d\]rop or \[e\]dit")
    term.send("x\r")
    term.expect(r"Please answer k \(keep\), d \(drop\) or e \(edit\)")
    term.expect(r"\[k\]eep, \[d\]rop or \[e\]dit")  # asked again, not taken as keep
    term.send("k\r")
    term.expect(r"3\. What is Globex Inc revenue\?\s+\[k\]eep")
    term.send("d\r")
    term.expect(r"4\. What is ACME dividend\?\s+\[k\]eep")
    term.send("\r")
    term.expect(r"Add a sub-question")
    term.send("\r")
    term.expect(r"Researching:\s+1\. What are ACME Corp sales\?\s+2\. What is ACME dividend\?")
    term.expect(r"sources [1-9]")  # the first researcher is reading
    run_id = wait_for_event(tmp_path, "researcher_finished")
    term.send("\x03")  # Ctrl-C, typed
    code, out = term.finish()
    assert code == 130, term.text[-3000:]
    [said] = [line for line in term.screen() if "interrupted" in line]
    assert said.startswith("deep-research: interrupted; to continue: ")  # not an "error:"
    assert said.endswith(f"{EXE} resume {run_id}")  # the command as typed (a path off PATH)
    assert json.loads(out) == {"run_id": run_id, "status": "interrupted", "report_path": None}
    assert_clean_progress(term)

    resumed = Terminal("resume", run_id, cwd=tmp_path, **slow)
    code, _ = resumed.finish()
    assert code == 0, resumed.text[-3000:]
    assert_clean_progress(resumed)  # sources: those the checkpoint kept, though it may read none
    # From the resume on (before it, "starting" knows nothing yet), not "sources 0" again.
    first = next(line for line in resumed.progress_lines() if line["phase"] != "starting")
    assert int(first["sources"]) > 0, first
    (shown,) = resumed.screen()  # only the report path is left
    report = Path(shown)
    assert report.is_file() and report.name.startswith("deep-research-compare-acme")
    record = json.loads((tmp_path / "state" / "runs" / run_id / "run.json").read_text())
    assert record["request"]["mode"] == "deep"  # "Deep" was taken in any case
    assert record["request"]["plan"] == ["What are ACME Corp sales?", "What is ACME dividend?"]


def wait_for_event(cwd: Path, event_type: str, timeout: float = 240) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for events in (cwd / "state" / "runs").glob("*/events.jsonl"):
            if f'"type":"{event_type}"' in events.read_text().replace(" ", ""):
                return events.parent.name
        time.sleep(0.1)
    raise AssertionError(f"no {event_type} event within {timeout}s")


def test_end_of_input_in_plan_review_stops_before_research(
    small_corpus: Path, tmp_path: Path
) -> None:
    """Ctrl-D at a review prompt ends the run before anything starts: exit 2, one line."""
    term = Terminal(
        "run", DEEP, "--mode", "deep", "--review-plan", "--corpus", str(small_corpus),
        cwd=tmp_path,
    )  # fmt: skip
    term.expect(r"\[k\]eep, \[d\]rop or \[e\]dit")
    term.send("\x04")  # Ctrl-D
    code, _ = term.finish()
    assert code == 2, term.text[-3000:]
    assert "plan review ended at end of input" in term.text and "Traceback" not in term.text
    assert not (tmp_path / "state" / "runs").exists()  # nothing was started


def old_run(state: Path, run_id: str, days: float) -> None:
    created = time.time() - days * 86400
    run_dir = RunDir.create(state, run_id)
    request = Request(run_id=run_id, query="q", mode="quick", created_at=created)
    runs.write_record(run_dir, request, load_settings(env={}), state)
    run_dir.append_event(Event(seq=1, ts=created, run_id=run_id, type="run_started"))
    summary = RunSummary(run_id=run_id, status="completed", mode="quick", query="q")
    run_dir.write_text("summary.json", summary.model_dump_json())
    run_dir.close()


def test_prune_on_a_terminal_asks_before_deleting(tmp_path: Path) -> None:
    old_run(tmp_path / "state", "old-run", days=40)
    old_run(tmp_path / "state", "new-run", days=1)
    term = Terminal("runs", "prune", "--older-than", "30d", cwd=tmp_path)
    term.expect(r"Remove 1 finished run\(s\) older than 30d\? \[y/N\]")
    term.send("\r")  # the default is no
    assert term.finish()[0] == 0 and "nothing removed" in term.text
    assert (tmp_path / "state" / "runs" / "old-run").is_dir()

    term = Terminal("runs", "prune", "--older-than", "30d", cwd=tmp_path)
    term.expect(r"\[y/N\]")
    term.send("y\r")
    assert term.finish()[0] == 0 and "removed 1 run(s)" in term.text
    assert not (tmp_path / "state" / "runs" / "old-run").exists()
    assert (tmp_path / "state" / "runs" / "new-run").is_dir()
