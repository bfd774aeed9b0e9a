"""A quick run through the real actors on Ray over a small corpus made in the test."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from report_checks import body_of, find_unresolved

from deepresearch.actors import crew
from deepresearch.llm_messages import (
    DraftFinding,
    DraftSection,
    FindingsDraft,
    QueryList,
    WriteDraft,
)
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.run import driver
from deepresearch.schemas import Event

pytestmark = pytest.mark.usefixtures("ray_session")


def _events(summary_run_id: str, state: Path) -> list[dict[str, Any]]:
    path = state / "runs" / summary_run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_quick_run_writes_a_cited_report(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus)
    prep = driver.prepare(
        "What were ACME Corp total net sales in the quarter ended March 31, 2024?",
        "quick",
        settings,
    )
    assert "extract_failed" in {k for k, _ in prep.warnings}  # broken.pdf skipped, run goes on
    seen: list[Event] = []
    summary = driver.execute(prep, seen.extend, crew=crew)

    assert summary.status == "completed"
    report = Path(summary.report_path or "").read_text()
    assert "$1,234 million" in report or "1,234" in report  # figures kept verbatim
    assert "without a language model" in report
    n_sources = len(summary.sources)
    assert n_sources >= 1
    assert find_unresolved(body_of(report), n_sources) == []
    gaps = body_of(report).split("## Gaps and limits", 1)[-1]
    assert "Not read, so not searched: broken.pdf: " in gaps  # and why, as the warning says
    assert all(s.title.endswith((".pdf", ".md", ".html", ".txt")) for s in summary.sources)

    events = _events(summary.run_id, tmp_path / "state")
    types = [e["type"] for e in events]
    for expected in (
        "warning",
        "run_started",
        "plan_ready",
        "researcher_started",
        "handshake",
        "source_read",
        "researcher_finished",
        "writing",
        "run_finished",
    ):
        assert expected in types, expected
    assert (
        types.index("run_started") < types.index("researcher_started") < types.index("run_finished")
    )
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    read = {e["payload"]["url"] for e in events if e["type"] == "source_read"}
    # Every listed source was actually read in this run.
    assert {s.url for s in summary.sources} <= read
    assert summary.usage.fetches == len(read)
    # extractive: its steps are counted apart from model calls (there are none)
    assert summary.usage.search_calls >= 1 and summary.usage.extractive_steps >= 2
    # The CLI's stream saw the same events the file holds.
    assert [e.seq for e in seen] == [e["seq"] for e in events]
    saved = json.loads((tmp_path / "state" / "runs" / summary.run_id / "summary.json").read_text())
    assert saved["report_path"] == summary.report_path
    # private text (queries, pages read, the report) is readable by this user only
    assert (tmp_path / "state" / "runs" / summary.run_id / "docs.jsonl").exists()
    assert loose_modes(tmp_path / "state") == loose_modes(tmp_path / "cache") == []
    assert stat.S_IMODE(os.stat(summary.report_path or "").st_mode) == 0o600


def loose_modes(root: Path) -> list[str]:
    """Every folder under ``root`` (itself included) not 0700 and every file not 0600."""
    loose = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode != (0o700 if path.is_dir() else 0o600):
            loose.append(f"{path.relative_to(root)} {mode:o}")
    return loose


def test_invented_citations_never_reach_the_report(small_corpus: Path, make_settings: Any) -> None:
    """A model that cites sources it never read (numbers 7 and 42): those citations are dropped."""
    findings = FindingsDraft(
        summary="ACME sales.",
        findings=(
            DraftFinding(text="ACME Corp total net sales were $1,234 million.", sources=(1, 42)),
            DraftFinding(text="A claim with only an invented source.", sources=(7,)),
        ),
    )
    write = WriteDraft(
        answer="ACME sold $1,234 million.",
        sections=(
            DraftSection(
                heading="ACME",
                findings=(
                    DraftFinding(
                        text="ACME Corp total net sales were $1,234 million.", sources=(1, 9)
                    ),
                ),
            ),
        ),
        answer_sources=(1, 5),
    )
    llm = ScriptedLLM(
        {
            "researcher": [
                QueryList(queries=("ACME total net sales",)).model_dump_json(),
                findings.model_dump_json(),
            ],
            "writer": [write.model_dump_json()],
        }
    )
    prep = driver.prepare("ACME Corp total net sales?", "quick", make_settings(small_corpus))
    summary = driver.execute(prep, llm=llm, crew=crew)
    report = Path(summary.report_path or "").read_text()
    assert summary.status == "completed"
    assert len(summary.sources) == 1
    assert "invented source" not in report
    assert find_unresolved(body_of(report), 1) == []
    assert "[2]" not in report and "[42]" not in report


def test_deep_run_uses_parallel_researchers_and_shares_the_pool(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus)
    prep = driver.prepare(
        "Compare ACME Corp total net sales and Globex Inc revenue in 2024", "deep", settings
    )
    summary = driver.execute(prep, crew=crew)
    assert summary.status == "completed"
    events = _events(summary.run_id, tmp_path / "state")
    started = [e for e in events if e["type"] == "researcher_started"]
    assert len(started) >= 2
    # Spawned together: two researchers or more started with no earlier report to carry (one
    # spawned after another finished carries its report: ``injected``). Event times tell only
    # on an idle machine: on a small corpus a researcher can finish before a sibling actor has
    # started, which says nothing of the coordinator.
    assert sum(e["payload"]["injected"] == 0 for e in started) >= 2
    read = [e["payload"]["url"] for e in events if e["type"] == "source_read"]
    assert len(read) == len(set(read))  # no document fetched twice across researchers
    assert any(e["type"] == "evaluated" for e in events)
    report = Path(summary.report_path or "").read_text()
    assert find_unresolved(body_of(report), len(summary.sources)) == []
