"""A follow-up through the driver on Ray: the EventLog actor keeps the texts the UrlPool stored,
and the follow-up run reads none of them again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from report_checks import body_of

from deepresearch.actors import crew
from deepresearch.run import driver

pytestmark = pytest.mark.usefixtures("ray_session")


def _events(state: Path, run_id: str) -> list[dict[str, Any]]:
    path = state / "runs" / run_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _urls(events: list[dict[str, Any]], kind: str) -> set[str]:
    return {e["payload"]["url"] for e in events if e["type"] == kind}


def test_follow_up_reads_no_document_twice(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus)
    state = tmp_path / "state"
    first = driver.execute(
        driver.prepare("What were ACME Corp total net sales in 2024?", "quick", settings), crew=crew
    )
    read1 = _urls(_events(state, first.run_id), "source_read")
    kept = (state / "runs" / first.run_id / "docs.jsonl").read_text().splitlines()
    assert read1 and {json.loads(line)["url"] for line in kept} == read1

    prep = driver.prepare(
        "What was ACME Corp gross margin in 2024?", "quick", settings, follow_up_of=first.run_id
    )
    second = driver.execute(prep, crew=crew)
    events = _events(state, second.run_id)
    assert not read1 & _urls(events, "source_read")
    assert _urls(events, "source_reused")
    assert second.follow_up_of == first.run_id
    body = body_of(Path(second.report_path or "").read_text())
    assert f"(report: {Path(first.report_path or '').name})" in body


def test_a_follow_up_that_points_back_searches_the_earlier_subject(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    settings = make_settings(small_corpus)
    state = tmp_path / "state"
    first = driver.execute(
        driver.prepare(
            "What were Globex Inc revenues for the quarter ended March 31, 2024?", "quick", settings
        ),
        crew=crew,
    )
    question = "How did that compare with a year earlier?"
    second = driver.execute(
        driver.prepare(question, "quick", settings, follow_up_of=first.run_id), crew=crew
    )
    events = _events(state, second.run_id)
    started = next(e["payload"] for e in events if e["type"] == "run_started")
    assert started["query"] == question and "Globex Inc" in started["in_context"]
    researched = [e["payload"]["question"] for e in events if e["type"] == "researcher_started"]
    assert researched and all("Globex Inc revenues" in q for q in researched)
    assert second.status == "completed"
    assert any("GLOBEX" in s.url for s in second.sources)
