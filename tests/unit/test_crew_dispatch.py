"""A run host hands sub-tasks to the crew itself: one per free researcher slot, the run that has
had the fewest handed out first; a sub-task's last events land in its log before its report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from deepresearch.actors.run_host import CrewSpawner, Load
from deepresearch.config.settings import load_settings
from deepresearch.per_run.event_log import EventLog
from deepresearch.per_run.run_context import RunContext
from deepresearch.policies.lifecycle.crew_dispatch import Ticket, pick_researcher, rank
from deepresearch.schemas import ResearcherReport, SubTask


def test_the_least_busy_researcher_with_room_serves_next_and_a_replaced_one_last() -> None:
    assert pick_researcher({0: 2, 1: 1}, set(), 2, capacity=2) == 1
    assert pick_researcher({0: 2, 1: 2}, set(), 2, capacity=2) is None  # every slot taken
    assert pick_researcher({0: 0, 1: 1}, {0}, 2, capacity=2) == 1  # 0 is being replaced
    assert pick_researcher({0: 5, 1: 9}, set(), 2, capacity=0) == 0  # no limit: least busy
    assert Ticket(0, 9) < Ticket(1, 0)  # lowest rank first, then arrival


def test_a_runs_opening_fan_out_goes_in_turn_across_runs_and_later_sub_tasks_in_arrival_order() -> (
    None
):
    """With 3 in parallel, a run's first three sub-tasks rank 0, 1, 2 (every run's first
    before any run's second); the fourth and later all rank 3: served as they came, so the run
    whose opening finished first goes on first and runs do not all end at once."""
    assert [rank(handed, 3) for handed in range(6)] == [0, 1, 2, 3, 3, 3]
    assert rank(5, 0) == rank(5, 1) == 1  # one at a time: the first, then the rest as they come


class FakeResearcher:
    """A crew researcher handle: each sub-task ends when the test releases it."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.gates: dict[tuple[str, str], asyncio.Event] = {}
        self.run = SimpleNamespace(remote=self._run)

    def gate(self, run_id: str, subtask: str) -> asyncio.Event:
        return self.gates.setdefault((run_id, subtask), asyncio.Event())

    def _run(
        self, context: RunContext, subtask: SubTask, notes: list[str], prior: Any = None
    ) -> Any:
        self.started.append((context.run_id, subtask.id))
        gate = self.gate(context.run_id, subtask.id)

        async def served() -> ResearcherReport:
            await gate.wait()
            return ResearcherReport(subtask_id=subtask.id, question=subtask.question)

        return served()


def spawner(tmp_path: Path, run_id: str, crew: FakeResearcher, load: Load) -> CrewSpawner:
    context = RunContext(run_id, load_settings(None, env={}), host=None, gateway=None)
    (tmp_path / run_id).mkdir(exist_ok=True)
    log = EventLog(str(tmp_path / run_id), run_id)
    return CrewSpawner([crew], context, load, log)


async def test_a_freed_slot_goes_to_the_run_with_the_fewest_sub_tasks_handed_out(
    tmp_path: Path,
) -> None:
    """Queued at one researcher, run b's first sub-task would wait behind run a's third."""
    crew, load = FakeResearcher(), Load()
    load.capacity = 1
    a, b = spawner(tmp_path, "a", crew, load), spawner(tmp_path, "b", crew, load)
    tasks = [a.acquire() for _ in range(3)] + [b.acquire()]
    runs = [
        asyncio.ensure_future(m.run(SubTask(id=sid, question="Q?")))
        for m, sid in zip(tasks, ("t1", "t2", "t3", "t1"), strict=True)
    ]
    await asyncio.sleep(0)
    assert crew.started == [("a", "t1")]  # one slot: the others wait in the host
    for run_id, sid in [("a", "t1"), ("a", "t2"), ("a", "t3"), ("b", "t1")]:
        crew.gate(run_id, sid).set()
    await asyncio.gather(*runs)
    assert crew.started == [("a", "t1"), ("b", "t1"), ("a", "t2"), ("a", "t3")]
    assert load.busy == {0: 0}


async def test_a_sub_task_cancelled_while_it_waits_gives_its_turn_away(tmp_path: Path) -> None:
    crew, load = FakeResearcher(), Load()
    load.capacity = 1
    a = spawner(tmp_path, "a", crew, load)
    first = asyncio.ensure_future(a.acquire().run(SubTask(id="t1", question="Q?")))
    waiting = asyncio.ensure_future(a.acquire().run(SubTask(id="t2", question="Q?")))
    last = asyncio.ensure_future(a.acquire().run(SubTask(id="t3", question="Q?")))
    await asyncio.sleep(0)
    waiting.cancel()
    crew.gate("a", "t1").set()
    crew.gate("a", "t3").set()
    await asyncio.gather(first, last)
    assert crew.started == [("a", "t1"), ("a", "t3")]
    assert load.busy == {0: 0}
