"""The CLI on a corpus about something else: exit 3 and a report that says it could not research."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import cli


@pytest.mark.slow
def test_an_off_topic_corpus_exits_3_with_a_could_not_research_report(
    small_corpus: Path, tmp_path: Path
) -> None:
    proc = cli(
        "run",
        "How do volcanoes form at subduction zones?",
        "--corpus",
        str(small_corpus),
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "could not research" in proc.stderr.lower()  # the one-line reason
    summary = json.loads(proc.stdout)
    assert summary["status"] == "no_answer" and summary["sources"] == []
    report = Path(summary["report_path"]).read_text()
    assert "Could not research this question" in report
    assert "What was searched" in report and "volcano" in report and "Suggestions:" in report
    assert "## Sources" in report and "[1]" not in report
