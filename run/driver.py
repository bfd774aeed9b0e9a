"""The driver side of a run: validate everything before any work, run the actors, write the report.

Every check that can fail on bad input (query, providers, corpus, output and state directories)
happens in ``prepare`` before Ray starts, so bad input costs milliseconds and never leaves a
half-started run behind. ``execute`` then opens the run on the crew and follows its event stream
while the Coordinator works. The crew (``actors/crew.py``) is passed in by whoever starts the run
(CLI, service, MCP, a Ray job): the driver sees it only as a ``Crew`` and imports no actor, so the
actors' machinery is not a floor beneath every run's driver.
"""

from __future__ import annotations

import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import JsonValue

from deepresearch.cluster import runtime
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError, InputError, RunInterrupted
from deepresearch.per_run.run_context import CrewHandles, RunContext, RunSpec
from deepresearch.policies.gate.intent import Intent
from deepresearch.policies.lifecycle.prior_work import ResumeWork, resume_work
from deepresearch.policies.synthesis import synthesis
from deepresearch.policies.verification.citations import resolve
from deepresearch.providers.assembly import from_settings as assembly
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.registry import LLMKeys, check_router, keys_from_env
from deepresearch.reports.export import EXTENSIONS, render_as
from deepresearch.reports.markdown import Footer, source_entries
from deepresearch.run import follow_up, intent_gate
from deepresearch.schemas import Event, FollowUpSeed, Mode, Request, RunResult, RunSummary
from deepresearch.storage import runs
from deepresearch.storage.output_dir import check_output_dir
from deepresearch.storage.report_path import default_directory, report_name
from deepresearch.storage.run_dir import RunDir, create_exclusive, new_run_id


class Crew(Protocol):
    """The crew as the driver uses it: ``actors/crew.py`` (the module itself) in every program."""

    def join(
        self, settings: Settings, *, detached: bool, evaluator: bool = ..., ledger: bool = ...
    ) -> CrewHandles: ...

    def forget(self) -> None: ...


@dataclass(frozen=True)
class Prepared:
    settings: Settings
    request: Request
    run_dir: RunDir
    output_dir: Path
    warnings: tuple[tuple[str, str], ...]
    keys: LLMKeys = field(default_factory=LLMKeys)
    search_keys: Mapping[str, str] = field(default_factory=dict)  # only what the chain reads
    resume: dict[str, Any] | None = None  # the checkpoint to continue from
    start_seq: int = 0  # events already in events.jsonl (a resumed run appends after them)
    seed: FollowUpSeed | None = None  # what a follow-up run inherits from its earlier run
    # time.monotonic() when the run was asked for: the wall time reported counts from here
    started: float = field(default_factory=time.monotonic)
    work: ResumeWork = field(default_factory=ResumeWork)  # what a resumed run had read, searched


def check_query(query: str, settings: Settings) -> str:
    text = query.strip()
    if not text:
        raise InputError("the query is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable argv bytes arrive as lone surrogates
        raise InputError("the query is not valid UTF-8 text") from None
    limit = settings.run.max_query_chars
    if len(text) > limit:
        raise InputError(f"the query is {len(text)} characters long; the limit is {limit}")
    return text


def build_index(settings: Settings) -> tuple[tuple[str, str], ...]:
    """Build the corpus index in the driver unless the cache already holds it; returns warnings
    to log. A fresh index is only checked, not loaded: the crew's processes search it."""
    c = settings.corpus
    if c.path is None:
        return ()
    from deepresearch.providers.search.corpus_store import index_is_fresh

    corpus, cache = c.path.expanduser(), settings.resolved_cache_dir()
    checked: list[tuple[str, str]] = []
    if index_is_fresh(
        corpus, cache, c.passage_chars, lambda kind, text: checked.append((kind, text))
    ):
        return tuple(checked)
    from deepresearch.providers.documents.extract import ExtractionPool
    from deepresearch.providers.search.local import CorpusIndex

    warnings: list[tuple[str, str]] = []  # opening warns again of what the check saw
    CorpusIndex.open(
        corpus,
        cache,
        passage_chars=c.passage_chars,
        pool_factory=lambda: ExtractionPool(
            c.extract_workers, c.extract_timeout_s, c.extract_memory_mb
        ),
        on_warning=lambda kind, text: warnings.append((kind, text)),
    )
    return tuple(warnings)


def prepare(
    query: str,
    mode: Mode,
    settings: Settings,
    run_id: str | None = None,
    follow_up_of: str | None = None,
    *,
    plan: tuple[str, ...] = (),
    llm: LLMProvider | None = None,
    intent: Intent | None = None,
) -> Prepared:
    """Validate everything and create the run directory; ``run_id`` lets a submitter choose it,
    ``follow_up_of`` names a finished run whose sources and reports this one builds on, ``plan``
    is a reviewed deep-mode agenda researched instead of planning.

    The intent gate runs here, first, for every entry point: a greeting, a harmful request or a
    query with no topic raises ``QueryGated`` before anything exists. ``llm`` is the model it may
    ask (default: the configured one); ``intent`` is a verdict the caller already obtained (the
    CLI gates before a plan is reviewed)."""
    begun = time.monotonic()
    text = check_query(query, settings)
    if intent is None:  # a follow-up is judged with the earlier questions' subject
        intent_gate.screen(text, settings, llm, follow_up.gate_context(follow_up_of, settings))
    else:
        intent_gate.enforce(intent)
    seed = None
    if follow_up_of is not None:
        seed = follow_up.load_seed(settings.resolved_state_dir(), follow_up_of, settings)
    settings = assembly.run_settings(settings)
    search_keys = assembly.search_env(settings, os.environ)
    assembly.check_search_names(settings, search_keys)
    keys = keys_from_env(os.environ)
    check_router(settings, keys)  # an unknown name or missing key fails here; the crew builds
    output_dir = check_output_dir(default_directory(settings.run.output_dir))
    # The index is built (or a bad corpus refused, or Ctrl-C'd) before the run directory exists,
    # so a run that never started leaves nothing behind.
    warnings = build_index(settings)
    run_id = run_id or new_run_id(time.time(), secrets.token_bytes(3))
    run_dir = RunDir.create(settings.resolved_state_dir(), run_id)
    request = Request(
        run_id=run_id,
        query=text,
        mode=mode,
        created_at=round(time.time(), 3),
        follow_up=follow_up_of,
        plan=plan,
    )
    runs.write_record(run_dir, request, settings, output_dir)
    return Prepared(
        settings,
        request,
        run_dir,
        output_dir,
        warnings,
        keys,
        search_keys,
        seed=seed,
        started=begun,
    )


def prepare_resume(run_id: str, state_dir: Path) -> Prepared:
    """Everything needed to continue ``run_id``: its settings, request and verified checkpoint."""
    from deepresearch.policies.lifecycle import (
        checkpoint as checkpoint_format,  # a resume's, not a run's
    )

    begun = time.monotonic()
    run_dir = RunDir.existing(state_dir, run_id)
    record = runs.read_record(run_dir)
    summary = runs.read_summary(run_dir)
    if summary is not None and summary.status in ("completed", "no_answer"):
        raise InputError(f"run {run_id} already finished ({summary.status}): {summary.report_path}")
    settings = record.settings
    keys = keys_from_env(os.environ)
    check_router(settings, keys)
    search_keys = assembly.search_env(settings, os.environ)
    assembly.check_search_names(settings, search_keys)
    output_dir = check_output_dir(record.output_dir)
    seed = None
    if record.request.follow_up is not None:  # the seed is reloaded from the earlier run
        seed = follow_up.load_seed(state_dir, record.request.follow_up, settings)
    checkpoint: dict[str, Any] | None = None
    warnings: tuple[tuple[str, str], ...] = ()
    if run_dir.has_checkpoint():  # checked before the index: a bad checkpoint fails fast
        # a bad hash or shape with no good previous one: exit 2, before the crew sees it
        loaded = run_dir.load_checkpoint(checkpoint_format.problem)
        checkpoint = loaded.data
        if loaded.used_previous:
            warnings += (
                ("checkpoint_fallback", "latest checkpoint was damaged; used the previous one"),
            )
    warnings += build_index(settings)
    events = run_dir.read_events()
    start_seq = events[-1].seq if events else 0
    completed = checkpoint_format.completed_ids(checkpoint)
    cap = settings.follow_up.doc_cap_chars  # its unfinished sub-tasks' searches and pages
    work = resume_work(run_dir.read_docs(), run_dir.read_searches(), completed, cap)
    return Prepared(
        settings,
        record.request,
        run_dir,
        output_dir,
        warnings,
        keys,
        search_keys,
        checkpoint,
        start_seq,
        seed,
        begun,
        work,
    )


def run_spec(prep: Prepared, handles: CrewHandles, llm: LLMProvider | None) -> RunSpec:
    """What the run's host needs to open it: the prepared run and the crew's handles; keys
    travel as ``SecretStr`` in the run's context."""
    seed = prep.seed
    fu = prep.settings.follow_up
    context = RunContext(
        run_id=prep.request.run_id,
        settings=prep.settings,
        host=handles.host_for(prep.request.run_id),
        gateway=handles.gateway,
        keys=prep.keys,
        search_keys=RunContext.secret_env(prep.search_keys),
        ledger=handles.ledger,
        llm=llm,
    )
    return RunSpec(
        context=context,
        request=prep.request,
        run_dir=str(prep.run_dir.root),
        researchers=handles.researchers,
        evaluator=handles.evaluator,
        start_seq=prep.start_seq,
        doc_caps=(fu.doc_cap_chars, fu.total_cap_chars),
        warnings=prep.warnings,
        resume=prep.resume,
        follow_up=seed.model_copy(update={"docs": ()}) if seed is not None else None,
        seed_docs=(seed.docs if seed is not None else ()) + prep.work.docs,
        prior=dict(prep.work.prior),
    )


def _unwrap(exc: Exception) -> Exception:
    """The DeepResearchError behind a Ray task error, so callers see our typed errors."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, DeepResearchError) else exc


def execute(
    prep: Prepared,
    on_events: Callable[[list[Event]], None] | None = None,
    llm: LLMProvider | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    *,
    crew: Crew,
) -> RunSummary:
    """Run ``prep`` on the cluster's ``crew`` (local or joined Ray) and write the report file.

    The run's own state (coordinator, URL pool, event log) is opened on a crew run host and
    closed at the end; the crew itself stays for the next run (``actors/crew.py``). Without
    ``on_events`` (a service: its streams read ``events.jsonl``) no event travels back here.
    ``should_stop`` is polled a few times a second; when it says so (a service cancelling a run),
    the run stops exactly as on Ctrl-C: ``RunInterrupted``, checkpoint kept, resumable.
    Every ending writes ``summary.json`` with an honest status (a failure is ``failed``)."""
    connection: runtime.Connection | None = None
    host: Any = None
    run_id = prep.request.run_id
    try:
        connection = runtime.connect(prep.settings.ray)
        import ray

        detached = prep.settings.ray.crew.detached
        handles = crew.join(
            prep.settings,
            detached=not connection.started_here if detached is None else detached,
            evaluator=prep.request.mode == "deep",
            ledger=llm is None and assembly.needs_ledger(prep.settings),
        )
        try:
            ray.get(handles.host_for(run_id).open.remote(run_spec(prep, handles, llm)))
        except Exception as exc:  # e.g. still open there (not ours to close): one line
            raise _unwrap(exc) from None
        host = handles.host_for(run_id)
        research_started = time.monotonic()
        # This process owns the lease: if it dies, the host stops the run (per_run/lease.py).
        lease = host.hold.remote(run_id)
        result_ref = host.run.remote(run_id, [lease])
        try:
            result, last = _follow(host, run_id, result_ref, on_events, should_stop)
        except KeyboardInterrupt:
            _interrupted(prep, host)
            host = None
            raise RunInterrupted(run_id) from None
        summary = finish(prep, result, time.monotonic() - research_started)
        text = summary.model_dump_json(indent=2)
        ray.get(host.log.remote(run_id, "write_text", "summary.json", text))
        # Said only now, with the report and summary on disk: a driver that dies before this
        # leaves a run its host records as interrupted (``driver_lost``), never as completed.
        ray.get(host.finished.remote(run_id, finished_event(result)))
        if on_events is not None:
            on_events(ray.get(host.log.remote(run_id, "wait", last, 0.0)))
        ray.get(host.close.remote(run_id))
        host = None
        return summary
    except BaseException as exc:
        crew.forget()
        runs.record_ending(prep.run_dir, prep.request, time.monotonic() - prep.started, exc)
        raise
    finally:
        if host is not None:  # a failed run still releases what the crew keeps for it
            _close_quietly(host, run_id)
        if connection is not None:
            runtime.disconnect(connection)


def finished_event(result: RunResult) -> dict[str, JsonValue]:
    """``run_finished``'s payload: the run's ending, once its report is on disk."""
    return {
        "status": result.status,
        "sources": len(result.report.sources),
        "limited_by": result.limited_by,
    }


def _close_quietly(host: Any, run_id: str, timeout_s: float = 70.0) -> None:
    import ray

    try:
        ray.get(host.close.remote(run_id), timeout=timeout_s)
    except Exception:  # the host is gone or busy: it closes the run itself later
        return


def _interrupted(prep: Prepared, host: Any) -> None:
    """Stop the run on its host and record the interruption; the last checkpoint stands for
    ``resume``. A second Ctrl-C during this exits at once."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    _close_quietly(host, prep.request.run_id)
    summary = RunSummary(
        run_id=prep.request.run_id,
        status="interrupted",
        mode=prep.request.mode,
        query=prep.request.query,
        duration_s=round(time.monotonic() - prep.started, 3),
        reason="interrupted; continue with: deep-research resume " + prep.request.run_id,
    )
    prep.run_dir.write_text("summary.json", summary.model_dump_json(indent=2))


FOLLOW_GAP_S = 0.25  # progress refreshes at most four times a second


def _follow(
    host: Any,
    run_id: str,
    result_ref: Any,
    on_events: Callable[[list[Event]], None] | None,
    should_stop: Callable[[], bool],
) -> tuple[RunResult, int]:
    import ray

    last = 0
    while True:
        if should_stop():
            raise KeyboardInterrupt  # the same path as Ctrl-C: the run stopped, checkpoint kept
        events: list[Event] = []
        if on_events is not None:
            events = ray.get(host.log.remote(run_id, "wait", last, 0.25))
            if events:
                last = events[-1].seq
                on_events(events)
        # After a batch, let the next one gather for a moment (the run's end still returns at
        # once): one poll per event burst would wake the host and this process for every
        # researcher's step, on the same two cores the run needs. With nobody to show events
        # to, only the result (and ``should_stop``) is waited for.
        quiet = on_events is None or bool(events)
        ready, _ = ray.wait([result_ref], timeout=FOLLOW_GAP_S if quiet else 0)
        if ready:
            try:
                result: RunResult = ray.get(result_ref)
            except Exception as exc:
                raise _unwrap(exc) from None
            return result, last


def finish(prep: Prepared, result: RunResult, research_s: float) -> RunSummary:
    """Render and save the report (exclusive create; a clash picks a new hash).

    ``duration_s`` is the wall time since the run was asked for (imports, index, Ray start-up
    included); ``research_s`` only the actors' work, from the coordinator's start to its result."""
    usage = result.usage
    report = result.report
    unread = synthesis.unread_notes(prep.warnings)  # said in the report, not only in the events
    if unread:
        report = report.model_copy(update={"limits": (*report.limits, *unread)})
    resolved = resolve(report)  # once: the file (any format) and the summary share its numbers
    wall_s = round(time.monotonic() - prep.started, 2)

    def make_name(attempt: int) -> str:
        salt = prep.request.run_id if attempt == 0 else f"{prep.request.run_id}:{attempt}"
        return report_name(prep.request.query, salt, EXTENSIONS[prep.settings.run.format])

    def make_data(path: Path) -> bytes:
        footer = Footer(
            saved_path=str(path),
            run_id=prep.request.run_id,
            mode=prep.request.mode,
            providers=result.providers,
            usage=usage,
            duration_s=wall_s,
            research_s=round(research_s, 2),
            notes=_follow_up_footer(prep.seed),
        )
        return render_as(prep.settings.run.format, report, footer, resolved).encode("utf-8")

    path = create_exclusive(check_output_dir(prep.output_dir, create=True), make_name, make_data)
    return RunSummary(
        run_id=prep.request.run_id,
        status=result.status,
        mode=prep.request.mode,
        query=prep.request.query,
        report_path=str(path),
        sources=source_entries(report, resolved),
        usage=usage,
        duration_s=wall_s,
        research_s=round(research_s, 2),
        providers=result.providers,
        limited_by=result.limited_by,
        reason=result.reason,
        follow_up_of=prep.request.follow_up,
    )


def _follow_up_footer(seed: FollowUpSeed | None) -> tuple[str, ...]:
    """The run-varying half of the follow-up link (the body names the earlier report's file)."""
    if seed is None:
        return ()
    where = f": {seed.report_path}" if seed.report_path else ""
    return (f"Follow-up of run {seed.run_id}{where}",)
