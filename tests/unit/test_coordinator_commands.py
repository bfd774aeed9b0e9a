"""The coordinator performs the reducer's commands in-process: the crash retry (a researcher whose
process died is retried once on a fresh one; a second death leaves the sub-task failed), and its
background writes (a progress file that cannot be written never ends the run)."""

from __future__ import annotations

from collections.abc import Sequence

from test_actors_inprocess import ExtractiveLLM, coordinator

from deepresearch.per_run.ports import ResearcherPort
from deepresearch.schemas import PriorWork, ResearcherReport, SubTask


class ProcessDied(RuntimeError):
    """Stands in for Ray's actor-died error: what ``Spawner.crashed`` recognises."""


class Dying:
    """A researcher whose process dies during the run."""

    async def run(
        self, subtask: SubTask, notes: Sequence[str] = (), prior: PriorWork | None = None
    ) -> ResearcherReport:
        raise ProcessDied("worker process exited")

    async def steer(self, note: str) -> None:
        raise ProcessDied("worker process exited")


def dying_first(spawner: object, deaths: int) -> list[str]:
    """The spawner's first ``deaths`` researchers die; returns the log of what it handed out."""
    handed: list[str] = []
    acquire = spawner.acquire  # type: ignore[attr-defined]

    def acquire_or_die() -> ResearcherPort:
        if len(handed) < deaths:
            handed.append("dying")
            return Dying()
        handed.append("healthy")
        return acquire()  # type: ignore[no-any-return]

    spawner.acquire = acquire_or_die  # type: ignore[attr-defined]
    spawner.crashed = lambda exc: isinstance(exc, ProcessDied)  # type: ignore[attr-defined]
    return handed


async def test_a_dead_researcher_is_retried_once_on_a_fresh_one() -> None:
    coord, sink, _, spawner = coordinator("quick", ExtractiveLLM(), "How many widgets in 2024?")
    handed = dying_first(spawner, 1)
    result = await coord.run()
    assert handed == ["dying", "healthy"]
    types = sink.types()
    failed = [p for t, p in sink.events if t == "researcher_failed"]
    assert failed == [{"subtask": "t1", "error": "ProcessDied", "crashed": True}]
    assert types.index("researcher_retry") < types.index("researcher_finished")
    assert result.status == "completed"
    last = sink.checkpoints[-1]["lifecycle"]
    assert list(last["retried"]) == ["t1"] and list(last["ok"]) == ["t1"]


async def test_a_second_death_of_the_same_sub_task_is_not_retried() -> None:
    coord, sink, _, spawner = coordinator("quick", ExtractiveLLM(), "How many widgets in 2024?")
    handed = dying_first(spawner, 2)
    result = await coord.run()
    assert handed == ["dying", "dying"]
    assert sink.types().count("researcher_retry") == 1
    assert result.status != "completed"  # every researcher failed: the honest stop
    assert "every researcher failed" in result.report.answer


async def test_a_progress_file_that_cannot_be_written_does_not_stop_the_run() -> None:
    """``report.partial.md`` is rendered and written in the background; its failure is an
    event, never the end of the run (a checkpoint's failure would be)."""
    coord, sink, _, _ = coordinator("quick", ExtractiveLLM(), "How many widgets in 2024?")

    async def full_disk(name: str, text: str) -> None:
        raise OSError("no space left on device")

    sink.write_text = full_disk  # type: ignore[method-assign]
    result = await coord.run()
    assert result.status == "completed"
    assert ("partial_report_failed", {"error": "OSError"}) in sink.events
