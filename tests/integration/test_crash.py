"""A crew researcher whose process is killed (kill -9) is replaced by Ray and its sub-task is
retried once; with a crew of one researcher the retry waits for the replacement, and the run's
pool and log (on its run host) survive it and the run completes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from deepresearch.actors import crew
from deepresearch.run import driver
from deepresearch.schemas import Event

pytestmark = pytest.mark.usefixtures("ray_session")


def test_killed_researcher_is_retried_and_the_run_completes(
    small_corpus: Path, make_settings: Any, tmp_path: Path
) -> None:
    solo = {"ray.crew.name": "solo-crew", "ray.crew.researchers": 1}
    settings = make_settings(small_corpus, **{"simulate.latency_s": 0.3, **solo})
    prep = driver.prepare("What were ACME Corp total net sales in 2024?", "quick", settings)
    killed: list[int] = []

    def on_events(events: list[Event]) -> None:
        for event in events:
            pid = event.payload.get("pid")
            if event.type == "researcher_started" and not killed and isinstance(pid, int):
                assert pid != os.getpid()
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    summary = driver.execute(prep, on_events, crew=crew)
    assert killed
    assert summary.status == "completed"
    lines = (tmp_path / "state" / "runs" / summary.run_id / "events.jsonl").read_text()
    events = [json.loads(x) for x in lines.splitlines()]
    types = [e["type"] for e in events]
    failed = [e for e in events if e["type"] == "researcher_failed"]
    assert failed and failed[0]["payload"]["crashed"] is True
    assert "researcher_retry" in types
    started = [e for e in events if e["type"] == "researcher_started"]
    assert len(started) == 2 and started[1]["payload"]["pid"] != killed[0]
    assert types.index("researcher_retry") < types.index("researcher_finished")
    assert Path(summary.report_path or "").exists()
