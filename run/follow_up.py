"""Load what a follow-up run inherits from an earlier run's directory (driver side, before Ray).

``deep-research run QUESTION --follow-up RUN_ID`` continues the thread of ``RUN_ID``: its completed
researcher reports (from its checkpoint) and the texts it read (its ``docs.jsonl``), plus those of
the runs it followed up in turn, nearest first, up to ``follow_up.max_chain`` runs. Only a run that
finished can be followed up: ``completed``, or ``no_answer`` (what it read is still worth reusing
when the question is put differently). Anything else is a one-line input error (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from deepresearch.config.settings import Settings
from deepresearch.errors import InputError, StorageError
from deepresearch.policies.follow_up.subject import in_context, thread_question
from deepresearch.schemas import FollowUpSeed, ResearcherReport
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

# Reuse (its text machinery) is imported by the follow-up that needs it, not by every run.
if TYPE_CHECKING:
    from deepresearch.policies.follow_up.reuse import EarlierRun

FOLLOWABLE = ("completed", "no_answer")


def _reports(run_dir: RunDir) -> tuple[ResearcherReport, ...]:
    """The researcher reports a run completed; none when it kept no (readable) checkpoint."""
    if not run_dir.has_checkpoint():
        return ()
    from deepresearch.policies.lifecycle import checkpoint as checkpoint_format  # a follow-up's

    try:
        data = run_dir.read_checkpoint(checkpoint_format.problem)
    except StorageError:
        return ()
    return tuple(ResearcherReport.model_validate(r) for r in data.get("completed", []))


def _earlier(run_dir: RunDir) -> EarlierRun:
    from deepresearch.policies.follow_up.reuse import EarlierRun

    record = runs.read_record(run_dir)
    return EarlierRun(record.request.run_id, _reports(run_dir), tuple(run_dir.read_docs()))


def thread_of(state_dir: Path, run_id: str, settings: Settings) -> list[str]:
    """The questions of ``run_id``'s thread, oldest first (nothing when it cannot be read: the
    run's own validation reports that)."""
    questions: list[str] = []
    seen: set[str] = set()
    current: str | None = run_id
    while current and current not in seen and len(questions) < settings.follow_up.max_chain:
        seen.add(current)
        try:
            request = runs.read_record(runs.open_run(state_dir, current)).request
        except (InputError, StorageError):
            break
        questions.append(request.query)
        current = request.follow_up
    return questions[::-1]


def gate_context(run_id: str | None, settings: Settings) -> tuple[str, ...]:
    """The earlier questions the intent gate judges a follow-up of ``run_id`` with (none for a
    new thread): their subject, not only the names and periods research borrows from them."""
    if run_id is None:
        return ()
    return tuple(thread_of(settings.resolved_state_dir(), run_id, settings))


def question_for(query: str, run_id: str | None, settings: Settings) -> str:
    """What a follow-up of ``run_id`` researches for ``query`` (the plan a user reviews)."""
    if run_id is None:
        return query
    return in_context(
        query, thread_question(thread_of(settings.resolved_state_dir(), run_id, settings))
    )


def load_seed(state_dir: Path, run_id: str, settings: Settings) -> FollowUpSeed:
    """The seed for a follow-up of ``run_id``; an unknown or unfinished run is an InputError."""
    from deepresearch.policies.follow_up.reuse import merge_thread

    run_dir = runs.open_run(state_dir, run_id)
    record = runs.read_record(run_dir)
    summary = runs.read_summary(run_dir)
    status = summary.status if summary is not None else runs.status_of(run_dir)
    if summary is None or status not in FOLLOWABLE:
        raise InputError(
            f"run {run_id} has not finished ({status}): only a completed or no_answer run can be "
            f"followed up (an interrupted one: deep-research resume {run_id})"
        )
    thread = [_earlier(run_dir)]
    seen = {run_id}
    parent = record.request.follow_up
    while parent and parent not in seen and len(thread) < settings.follow_up.max_chain:
        seen.add(parent)
        try:  # an ancestor pruned since is simply not inherited
            ancestor = runs.open_run(state_dir, parent)
            thread.append(_earlier(ancestor))
            parent = runs.read_record(ancestor).request.follow_up
        except (InputError, StorageError):
            break
    reports, docs = merge_thread(thread, settings.follow_up.total_cap_chars)
    path = summary.report_path or ""
    return FollowUpSeed(
        run_id=run_id,
        query=record.request.query,
        context=thread_question(thread_of(state_dir, run_id, settings)),
        report_name=Path(path).name if path else "",
        report_path=path,
        reports=reports,
        docs=docs,
    )
