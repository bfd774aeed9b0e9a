"""The driver side of a run: validate everything before any work, run the actors, write the report.

Every check that can fail on bad input (query, providers, corpus, output and state directories)
happens in ``prepare`` before Ray starts, so bad input costs milliseconds and never leaves a
half-started run behind. ``execute`` then follows the EventLog's stream while the Coordinator works.
"""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepresearch import assembly, runtime
from deepresearch.config.settings import Settings
from deepresearch.errors import DeepResearchError, InputError, StorageError
from deepresearch.policies.report_path import default_directory, report_name
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.report import Footer, render, source_entries
from deepresearch.schemas import Event, Mode, Request, RunResult, RunSummary
from deepresearch.storage import RunDir, create_exclusive, new_run_id


@dataclass(frozen=True)
class Prepared:
    settings: Settings
    request: Request
    run_dir: RunDir
    output_dir: Path
    warnings: tuple[tuple[str, str], ...]


def check_query(query: str, settings: Settings) -> str:
    text = query.strip()
    if not text:
        raise InputError("the query is empty")
    limit = settings.run.max_query_chars
    if len(text) > limit:
        raise InputError(f"the query is {len(text)} characters long; the limit is {limit}")
    return text


def check_output_dir(directory: Path) -> Path:
    """The report directory must exist and accept a new file: proven by creating a probe."""
    directory = directory.expanduser()
    if not directory.is_dir():
        raise StorageError(str(directory), "output directory does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".deep-research-probe-"):
            pass
    except OSError as exc:
        raise StorageError(
            str(directory), f"output directory is not writable ({exc.strerror})"
        ) from None
    return directory


def build_index(settings: Settings) -> tuple[tuple[str, str], ...]:
    """Build (or load from cache) the corpus index in the driver; returns warnings to log."""
    if settings.corpus.path is None:
        return ()
    from deepresearch.providers.extract import ExtractionPool
    from deepresearch.providers.search.local import CorpusIndex

    warnings: list[tuple[str, str]] = []
    c = settings.corpus
    CorpusIndex.open(
        settings.corpus.path.expanduser(),
        settings.resolved_cache_dir(),
        passage_chars=c.passage_chars,
        pool_factory=lambda: ExtractionPool(
            c.extract_workers, c.extract_timeout_s, c.extract_memory_mb
        ),
        on_warning=lambda kind, text: warnings.append((kind, text)),
    )
    return tuple(warnings)


def prepare(query: str, mode: Mode, settings: Settings) -> Prepared:
    text = check_query(query, settings)
    assembly.check_search_names(settings)
    assembly.build_llm_provider(settings)  # an unknown name fails here, not inside an actor
    if settings.corpus.path is not None:
        settings = settings.model_copy(
            update={
                "corpus": settings.corpus.model_copy(
                    update={"path": Path(settings.corpus.path).expanduser().resolve()}
                )
            }
        )
    output_dir = check_output_dir(default_directory(settings.run.output_dir))
    run_id = new_run_id(time.time(), secrets.token_bytes(3))
    run_dir = RunDir.create(settings.resolved_state_dir(), run_id)
    warnings = build_index(settings)
    request = Request(run_id=run_id, query=text, mode=mode, created_at=round(time.time(), 3))
    return Prepared(settings, request, run_dir, output_dir, warnings)


def _unwrap(exc: Exception) -> Exception:
    """The DeepResearchError behind a Ray task error, so callers see our typed errors."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, DeepResearchError) else exc


def execute(
    prep: Prepared,
    on_events: Callable[[list[Event]], None] = lambda events: None,
    llm: LLMProvider | None = None,
) -> RunSummary:
    """Run the actors for ``prep`` on Ray (local or joined) and write the report file."""
    from deepresearch.actors.event_log import EventLog
    from deepresearch.actors.hosted import HostedCoordinator

    started = time.monotonic()
    connection = runtime.connect(prep.settings.ray)
    try:
        log = runtime.spawn(EventLog, "event_log", str(prep.run_dir.root), prep.request.run_id)
        for kind, text in prep.warnings:
            log.append.remote("warning", {"kind": kind, "message": text})
        coordinator = runtime.spawn(
            HostedCoordinator, "coordinator", prep.settings, prep.request, log, llm
        )
        result_ref = coordinator.run.remote()
        result, last = _follow(log, result_ref, on_events)
        summary = finish(prep, result, time.monotonic() - started)
        import ray

        ray.get(log.write_text.remote("summary.json", summary.model_dump_json(indent=2)))
        on_events(ray.get(log.wait.remote(last, 0.0)))
        ray.get(log.close.remote())
        return summary
    finally:
        runtime.disconnect(connection)


def _follow(
    log: Any, result_ref: Any, on_events: Callable[[list[Event]], None]
) -> tuple[RunResult, int]:
    import ray

    last = 0
    while True:
        events: list[Event] = ray.get(log.wait.remote(last, 0.25))
        if events:
            last = events[-1].seq
            on_events(events)
        ready, _ = ray.wait([result_ref], timeout=0)
        if ready:
            try:
                result: RunResult = ray.get(result_ref)
            except Exception as exc:
                raise _unwrap(exc) from None
            return result, last


def finish(prep: Prepared, result: RunResult, duration_s: float) -> RunSummary:
    """Render and save the report (exclusive create; a clash picks a new hash)."""
    usage = result.usage
    report = result.report

    def make_name(attempt: int) -> str:
        salt = prep.request.run_id if attempt == 0 else f"{prep.request.run_id}:{attempt}"
        return report_name(prep.request.query, salt)

    def make_data(path: Path) -> bytes:
        footer = Footer(
            saved_path=str(path),
            run_id=prep.request.run_id,
            mode=prep.request.mode,
            providers=result.providers,
            usage=usage,
            duration_s=round(duration_s, 2),
        )
        return render(report, footer).encode("utf-8")

    path = create_exclusive(prep.output_dir, make_name, make_data)
    return RunSummary(
        run_id=prep.request.run_id,
        status=result.status,
        mode=prep.request.mode,
        query=prep.request.query,
        report_path=str(path),
        sources=source_entries(report),
        usage=usage,
        duration_s=round(duration_s, 3),
        providers=result.providers,
        limited_by=result.limited_by,
        reason=result.reason,
    )
