"""Deep runs on Ray with a scripted evaluator and the local corpus: overlap, injection, dedup,
delegation, the round budget, non-JSON evaluator replies, and the honest all-failed stop."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from report_checks import body_of, find_unresolved

from deepresearch.actors import crew
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.run import driver
from deepresearch.schemas import Evaluation

pytestmark = pytest.mark.usefixtures("ray_session")

QUERY = "What were ACME Corp sales, Globex Inc revenue, ACME dividend and Globex expansion?"


def events_of(run_id: str, state: Path) -> list[dict[str, Any]]:
    path = state / "runs" / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_in_emit_order(events: list[dict[str, Any]]) -> None:
    """``events.jsonl`` in the order things happened: ``seq`` strictly increasing in file order and
    ``ts`` never going back (researchers' events used to arrive late, stamped earlier)."""
    seqs = [e["seq"] for e in events]
    assert all(a < b for a, b in itertools.pairwise(seqs)), "seq out of file order"
    stamps = [(e["ts"], e["seq"], e["type"]) for e in events]
    back = [(a, b) for a, b in itertools.pairwise(stamps) if b[0] < a[0]]
    assert not back, f"ts goes back in seq order: {back[:3]}"


def delegate(*questions: str) -> str:
    return Evaluation(action="delegate", reason="gap", new_subtasks=questions).model_dump_json()


def test_parallel_researchers_injection_dedup_and_a_delegate_round(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    llm = ScriptedLLM(
        {
            "evaluator": [
                delegate("What share buyback did ACME approve?"),
                "Looks complete to me.",  # not JSON: repaired? no; retried once ...
                "Still prose, no JSON.",  # ... and still not JSON: counts as synthesize
            ]
        },
        delegate=ExtractiveLLM(),
    )
    settings = make_settings(small_corpus, **{"deep.max_parallel": 3})
    summary = driver.execute(driver.prepare(QUERY, "deep", settings), llm=llm, crew=crew)
    assert summary.status == "completed"
    events = events_of(summary.run_id, tmp_path / "state")
    assert_in_emit_order(events)
    types = [e["type"] for e in events]
    started = [e for e in events if e["type"] == "researcher_started"]
    assert len(started) >= 4
    # spawned together: the plan's first three started with no earlier report to carry (those
    # spawned after a finish carry one, below); event times tell only on an idle machine, where
    # a researcher on a small corpus does not finish before a sibling actor has started
    first = sorted((e["payload"]["subtask"] for e in started), key=lambda s: int(s[1:]))[:3]
    opening = [e["payload"]["injected"] for e in started if e["payload"]["subtask"] in first]
    assert opening == [0, 0, 0]
    # at most 3 at once
    active = peak = 0
    for e in events:
        active += {"researcher_started": 1, "researcher_finished": -1, "researcher_failed": -1}.get(
            e["type"], 0
        )
        peak = max(peak, active)
    assert peak <= 3
    # injection: researchers started after a finish carry earlier reports. With 3 slots, every
    # sub-task after the first three of the plan waits for one to finish. (Their event times do
    # not tell: a researcher's events reach the log in bursts, its last ones with its report.)
    late = [e for e in started if e["payload"]["subtask"] not in first]
    assert late and all(e["payload"]["injected"] >= 1 for e in late)
    # dedup: no document fetched twice across researchers
    read = [e["payload"]["url"] for e in events if e["type"] == "source_read"]
    assert len(read) == len(set(read))
    # the delegate round, then a non-JSON reply counted as synthesize
    evaluated = [e["payload"] for e in events if e["type"] == "evaluated"]
    assert [e["action"] for e in evaluated] == ["delegate", "synthesize"]
    assert "not valid JSON" in evaluated[1]["reason"]
    assert "round_started" in types
    assert any(e["payload"]["question"] == "What share buyback did ACME approve?" for e in started)
    report = Path(summary.report_path or "").read_text()
    assert find_unresolved(body_of(report), len(summary.sources)) == []
    # the small corpus's corrupt PDF is the one gap: nothing about limits or missing answers
    gaps = body_of(report).split("## Gaps and limits", 1)[-1].split("\n## ", 1)[0]
    gap_lines = [line for line in gaps.splitlines() if line.strip()]
    assert gap_lines and all("Not read, so not searched: broken.pdf" in ln for ln in gap_lines)


def test_round_budget_stops_an_evaluator_that_always_delegates(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    replies = [delegate(f"Follow-up question number {i} about ACME?") for i in range(6)]
    llm = ScriptedLLM({"evaluator": replies}, delegate=ExtractiveLLM(), strict=False)
    settings = make_settings(small_corpus, **{"deep.target_rounds": 1, "deep.max_parallel": 3})
    summary = driver.execute(
        driver.prepare("ACME Corp net sales and dividend", "deep", settings), llm=llm, crew=crew
    )
    assert summary.status == "completed" and summary.limited_by == "rounds"
    events = events_of(summary.run_id, tmp_path / "state")
    assert max(e["payload"]["round"] for e in events if e["type"] == "evaluated") == 3
    report = Path(summary.report_path or "").read_text()
    assert "## Gaps and limits" in report and "round budget" in report
