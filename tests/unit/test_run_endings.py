"""Every ending of a run is on disk honestly, and a run that never started leaves nothing behind.

No Ray here: the driver's Ray calls are replaced, so what is tested is the driver's own bookkeeping
(summary statuses, durations, when the run directory is created) and the start-up messages.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from report_checks import body_of

from deepresearch.actors import crew
from deepresearch.cluster import runtime
from deepresearch.config.settings import RaySettings, Settings, load_settings, overrides_from_flags
from deepresearch.errors import ClusterError, CorpusError, InputError, LLMUnavailable
from deepresearch.run import driver
from deepresearch.schemas import Finding, Report, ReportSection, Request, RunResult, Source
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir


def make_settings(tmp: Path, **flags: object) -> Settings:
    (tmp / "out").mkdir(exist_ok=True)
    base: dict[str, object] = {
        "state_dir": tmp / "state",
        "run.output_dir": tmp / "out",
        "corpus.cache_dir": tmp / "cache",
        "search.providers": "local",
    }
    base.update(flags)
    return load_settings(None, overrides_from_flags(base), env={})


def run_dirs(tmp: Path) -> list[Path]:
    root = tmp / "state" / "runs"
    return sorted(root.iterdir()) if root.is_dir() else []


def corpus(tmp: Path) -> Path:
    folder = tmp / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nACME Corp net sales were $1,234 million.\n")
    return folder


QUERY = "What were ACME Corp net sales?"


def test_a_corpus_that_is_a_file_leaves_no_run_directory(tmp_path: Path) -> None:
    file = tmp_path / "notes.md"
    file.write_text("not a folder")
    with pytest.raises(CorpusError):
        driver.prepare(QUERY, "quick", make_settings(tmp_path, **{"corpus.path": file}))
    assert run_dirs(tmp_path) == []


def test_a_missing_corpus_leaves_no_run_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(CorpusError):
        driver.prepare(QUERY, "quick", make_settings(tmp_path, **{"corpus.path": missing}))
    assert run_dirs(tmp_path) == []


def test_ctrl_c_while_indexing_leaves_no_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(tmp_path, **{"corpus.path": corpus(tmp_path)})

    def interrupted(_settings: Settings) -> tuple[tuple[str, str], ...]:
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "build_index", interrupted)
    with pytest.raises(KeyboardInterrupt):
        driver.prepare(QUERY, "quick", settings)
    assert run_dirs(tmp_path) == []


def test_a_query_that_is_not_utf8_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    undecodable = b"What were ACME \xff\xfe sales?".decode("utf-8", "surrogateescape")
    with pytest.raises(InputError, match="UTF-8"):
        driver.prepare(undecodable, "quick", make_settings(tmp_path))
    assert run_dirs(tmp_path) == []


def prepared(tmp_path: Path) -> driver.Prepared:
    return driver.prepare(
        QUERY, "quick", make_settings(tmp_path, **{"corpus.path": corpus(tmp_path)})
    )


def fake_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Actors that are never started: connect, the crew and Ray's calls are stand-ins."""
    monkeypatch.setattr(runtime, "connect", lambda _s: runtime.Connection(False, "fake"))
    monkeypatch.setattr(runtime, "disconnect", lambda _c: None)
    monkeypatch.setattr("deepresearch.actors.crew.join", lambda *a, **k: mock.MagicMock())
    monkeypatch.setattr("ray.get", lambda *a, **k: None)


def test_a_run_that_fails_on_the_model_is_listed_failed_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prep = prepared(tmp_path)
    fake_ray(monkeypatch)

    def model_down(*_args: Any) -> Any:
        raise LLMUnavailable("writer", ("openai",), "HTTP 500 from the server")

    monkeypatch.setattr(driver, "_follow", model_down)
    with pytest.raises(LLMUnavailable):
        driver.execute(prep, crew=crew)
    summary = runs.read_summary(prep.run_dir)
    assert summary is not None and summary.status == "failed"
    assert "HTTP 500" in summary.reason
    [row] = runs.list_runs(tmp_path / "state")
    assert row.status == "failed"


def test_ctrl_c_while_ray_starts_is_listed_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prep = prepared(tmp_path)

    def ctrl_c(_settings: RaySettings) -> runtime.Connection:
        raise KeyboardInterrupt

    monkeypatch.setattr(runtime, "connect", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        driver.execute(prep, crew=crew)
    summary = runs.read_summary(prep.run_dir)
    assert summary is not None and summary.status == "interrupted"
    assert f"resume {prep.request.run_id}" in summary.reason


def test_a_slow_ray_start_is_one_line_that_names_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow(**_kwargs: Any) -> None:
        raise Exception(
            "The current node timed out during startup. This could happen because some of the "
            "raylet failed to startup or the GCS has become overloaded."
        )

    monkeypatch.setattr(runtime.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(runtime.ray, "init", slow)
    with pytest.raises(ClusterError) as info:
        runtime.connect(RaySettings())
    message = str(info.value)
    assert info.value.exit_code == 2 and "\n" not in message
    assert "ray.address" in message and "DEEP_RESEARCH_RAY__ADDRESS" in message
    assert "ray.num_cpus" in message


def test_an_address_with_nothing_listening_fails_in_seconds() -> None:
    started = time.monotonic()
    with pytest.raises(ClusterError, match="cannot connect"):
        runtime.probe("127.0.0.1:1", 5.0)
    assert time.monotonic() - started < 5.0
    with pytest.raises(ClusterError, match="host:port"):
        runtime.probe("127.0.0.1:99999", 5.0)
    runtime.probe("auto", 5.0)  # found from this machine's Ray files, not probed


def test_wall_time_and_research_time_are_both_reported(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    request = Request(run_id="20260101-120000-abcdef", query=QUERY)
    run_dir = RunDir.create(tmp_path / "state", request.run_id)
    prep = driver.Prepared(
        settings, request, run_dir, tmp_path / "out", (), started=time.monotonic() - 12.0
    )
    report = Report(query=QUERY, title="ACME", answer="Sales rose.", sections=(), sources=())
    summary = driver.finish(
        prep, RunResult(request=request, status="completed", report=report), 3.0
    )
    assert summary.duration_s >= 12.0  # since the run was asked for: start-up included
    assert summary.research_s == 3.0
    text = Path(summary.report_path or "").read_text("utf-8")
    footer = text.split("\n---\n")[-1]
    assert f"Duration: {summary.duration_s:.1f} s total, research 3.0 s" in footer
    assert "Duration" not in body_of(text)  # run-varying facts stay below the final rule


@pytest.mark.parametrize("report_format", ["md", "json", "html"])
def test_a_finished_run_resolves_its_citations_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report_format: str
) -> None:
    """The report file and the run's summary share one resolution of the citations."""
    from deepresearch.policies.verification import citations
    from deepresearch.reports import export, markdown

    calls: list[str] = []

    def counted(report: Report) -> citations.ResolvedReport:
        calls.append(report.query)
        return citations.resolve(report)

    def refused(report: Report) -> citations.ResolvedReport:
        raise AssertionError("a renderer resolved the citations again")

    monkeypatch.setattr(driver, "resolve", counted)
    monkeypatch.setattr(markdown, "resolve", refused)
    monkeypatch.setattr(export, "resolve", refused)
    settings = make_settings(tmp_path).model_copy(
        update={"run": make_settings(tmp_path).run.model_copy(update={"format": report_format})}
    )
    request = Request(run_id="20260101-120000-abcdef", query=QUERY)
    prep = driver.Prepared(
        settings, request, RunDir.create(tmp_path / "state", request.run_id), tmp_path / "out", ()
    )
    source = Source(url="doc:a.md", title="a.md", location="a.md")
    finding = Finding(text="Sales rose.", citations=("doc:a.md",))
    report = Report(
        query=QUERY,
        title="ACME",
        answer="Sales rose.",
        sections=(ReportSection(heading="Sales", findings=(finding,)),),
        sources=(source,),
    )
    summary = driver.finish(
        prep, RunResult(request=request, status="completed", report=report), 1.0
    )
    assert calls == [QUERY]
    assert [entry.n for entry in summary.sources] == [1]


def test_a_process_joins_the_crew_once_and_again_after_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service runs many runs: the crew's handles are asked for once, not per run and member."""

    asked: list[str] = []
    monkeypatch.setattr(runtime, "session", lambda: "job/node")
    monkeypatch.setattr(runtime, "node_id", lambda: "")
    monkeypatch.setattr(
        runtime, "named", lambda _c, _k, name, *_a, **_o: asked.append(name) or mock.MagicMock()
    )
    crew.forget()
    settings = make_settings(tmp_path)
    first = crew.join(settings, detached=True)
    members = len(asked)
    assert members == settings.ray.crew.hosts + settings.ray.crew.researchers + 1
    assert crew.join(settings, detached=True) is first and len(asked) == members
    crew.join(settings, detached=True, evaluator=True)  # another set of members: asked
    assert len(asked) == 2 * members + 1
    monkeypatch.setattr(runtime, "session", lambda: "another-job/node")  # Ray restarted
    crew.join(settings, detached=True)
    assert len(asked) == 3 * members + 1

    prep = prepared(tmp_path)
    monkeypatch.setattr(runtime, "connect", lambda _s: runtime.Connection(False, "fake"))
    monkeypatch.setattr(runtime, "disconnect", lambda _c: None)
    monkeypatch.setattr("ray.get", lambda *a, **k: None)
    monkeypatch.setattr(driver, "_follow", mock.Mock(side_effect=LLMUnavailable("w", (), "down")))
    with pytest.raises(LLMUnavailable):
        driver.execute(prep, crew=crew)  # a failed run may have lost a member for good: ask again
    before = len(asked)
    crew.join(settings, detached=True)
    assert len(asked) == before + members
    crew.forget()


def test_a_run_nobody_watches_sends_no_event_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A service's runs are followed through events.jsonl: the host is not polled for events."""
    host = mock.MagicMock()
    waits: list[float] = []

    def wait(refs: list[Any], timeout: float) -> tuple[list[Any], list[Any]]:
        waits.append(timeout)
        return (refs, []) if len(waits) == 3 else ([], refs)

    result = mock.sentinel.result
    monkeypatch.setattr("ray.wait", wait)
    monkeypatch.setattr("ray.get", lambda ref, **_k: result)
    got, _last = driver._follow(host, "r", object(), None, lambda: False)
    assert got is result and not host.log.remote.called
    assert waits == [driver.FOLLOW_GAP_S] * 3  # it waits on the result, not in a busy loop


def test_warming_the_crew_waits_for_every_member_and_needs_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    made: dict[str, mock.MagicMock] = {}

    def named(_cls: Any, _kind: str, name: str, *_a: Any, **_k: Any) -> mock.MagicMock:
        made[name] = mock.MagicMock()
        return made[name]

    monkeypatch.setattr(runtime, "named", named)
    monkeypatch.setattr(runtime, "session", lambda: "warm/node")
    monkeypatch.setattr(runtime, "node_id", lambda: "")
    waited: list[Any] = []
    monkeypatch.setattr("ray.get", waited.extend)
    monkeypatch.setattr("ray.is_initialized", lambda: False)
    opened: list[Any] = []  # corpus indexes opened in this process (the service's)
    monkeypatch.setattr(
        "deepresearch.providers.search.local.opened_index", lambda s: opened.append(s.corpus)
    )
    crew.forget()
    (tmp_path / "docs").mkdir()
    settings = make_settings(tmp_path, **{"corpus.path": tmp_path / "docs"})
    crew.warm(settings)
    assert made == {} and opened == []  # no Ray: nothing to start (nor a Ray to start by accident)
    monkeypatch.setattr("ray.is_initialized", lambda: True)
    crew.warm(settings)
    size = settings.ray.crew
    assert len(made) == size.hosts + size.researchers + 2  # with the gateway and the evaluator
    assert any(name.endswith("-evaluator") for name in made)
    assert len(waited) == len(made)
    assert all(m.ready.remote.called for m in made.values())
    # the service prepares every run against the index: loaded now, not by the first requests
    assert [c.path for c in opened] == [(tmp_path / "docs").resolve()]
    # every member a run's context reaches (researchers, gateway, evaluator) decodes the handles
    # it carries (run hosts, gateway) now, not in the first run
    hosts = [m for name, m in made.items() if "-run_host" in name]
    gateway = next(m for name, m in made.items() if name.endswith("-search_gateway"))
    for member in made.values():
        if member not in hosts:
            assert member.ready.remote.call_args.args[-1] == (*hosts, gateway)
    # run hosts decode the handles a run's spec carries (researchers, evaluator, gateway) now
    researchers = [m for name, m in made.items() if "-researcher" in name]
    evaluator = next(m for name, m in made.items() if name.endswith("-evaluator"))
    for host in hosts:
        assert host.ready.remote.call_args.args[-1] == (*researchers, evaluator, gateway)
    crew.forget()


def test_the_report_names_the_files_that_could_not_be_read_and_why(tmp_path: Path) -> None:
    """A corrupt PDF is not searched: an Answer of "no information" must not hide that. The
    index's warnings (also the run's ``warning`` events) become lines under Gaps and limits."""
    settings = make_settings(tmp_path)
    request = Request(run_id="20260101-120000-abcdef", query=QUERY)
    reason = "not a readable PDF (Failed to load document (PDFium: Data format error).)"
    warnings = (("extract_failed", f"broken.pdf: {reason}"), ("outside_corpus", "x.md: skipped"))
    prep = driver.Prepared(
        settings,
        request,
        RunDir.create(tmp_path / "state", request.run_id),
        tmp_path / "out",
        warnings,
    )
    report = Report(
        query=QUERY, title="ACME", answer="", sections=(), sources=(), status="no_answer"
    )
    summary = driver.finish(
        prep, RunResult(request=request, status="no_answer", report=report), 1.0
    )
    body = body_of(Path(summary.report_path or "").read_text("utf-8"))
    gaps = body.split("## Gaps and limits", 1)[1]
    assert f"Not read, so not searched: broken.pdf: {reason}" in gaps
    assert "x.md" not in gaps  # a skipped link is not an unreadable file


def test_many_unreadable_files_are_counted_past_the_first_few() -> None:
    from deepresearch.policies.synthesis.synthesis import UNREAD_LISTED, unread_notes

    lines = unread_notes([("extract_failed", f"f{i}.pdf: bad") for i in range(UNREAD_LISTED + 3)])
    assert len(lines) == UNREAD_LISTED + 1
    assert lines[0] == "Not read, so not searched: f0.pdf: bad."
    assert lines[-1].startswith("3 more files could not be read")
