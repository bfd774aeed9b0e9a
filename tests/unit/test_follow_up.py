"""Follow-up runs in-process: the earlier run's texts are kept on disk and never fetched again,
answered sub-questions are not researched again, the new report links the earlier one, resume
works, and a bad ``--follow-up`` is a one-line exit 2."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

import pytest
from report_checks import body_of
from test_actors_inprocess import PAGES, EvaluatorScript, FakeFetcher, FakeGateway, settings

from deepresearch import cli
from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.inprocess import LocalSpawner
from deepresearch.config.settings import Settings
from deepresearch.errors import InputError
from deepresearch.per_run.coordinator import Coordinator
from deepresearch.per_run.event_log import EventLog
from deepresearch.per_run.url_pool import UrlPool
from deepresearch.policies.follow_up import reuse
from deepresearch.run import driver, follow_up
from deepresearch.schemas import (
    FetchedDoc,
    Finding,
    Request,
    ResearcherReport,
    RunResult,
    RunSummary,
    SearchHit,
    SearchResult,
)
from deepresearch.storage import runs
from deepresearch.storage.run_dir import RunDir

URLS = list(PAGES)


class ListGateway(FakeGateway):
    """Every query finds the same given pages: run 1 and its follow-up overlap by design."""

    def __init__(self, urls: list[str]) -> None:
        super().__init__()
        self.urls = urls

    async def search(self, query: str, limit: int) -> SearchResult:
        self.queries.append(query)
        hits = tuple(
            SearchHit(url=u, title=u[-3:], provider="fake", rank=i + 1)
            for i, u in enumerate(self.urls[:limit])
        )
        return SearchResult(query=query, hits=hits, provider="fake")


class DiskSink:
    """The EventLog actor's methods in-process: events, checkpoints and docs.jsonl on disk."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.pending: list[asyncio.Future[None]] = []
        self.checkpoints: list[dict[str, Any]] = []

    async def emit(self, type: str, payload: dict[str, Any] | None = None) -> None:
        await self.log.append(type, payload)

    def checkpoint(self, data: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Noted when the coordinator takes it, even if a newer one supersedes it before it is
        written (any of them is what a crash at that moment would leave to resume from)."""
        self.checkpoints.append(json.loads(json.dumps(data)))
        return self.log.checkpoint(data)

    async def write_text(self, name: str, text: str) -> None:
        await self.log.write_text(name, text)

    def save_docs(self, docs: Sequence[FetchedDoc]) -> None:  # fire-and-forget, as LogDocs
        self.pending.append(asyncio.ensure_future(self.log.append_docs(list(docs))))


async def run_once(
    tmp: Path,
    run_id: str,
    query: str,
    mode: str,
    urls: list[str],
    follow_up_of: str | None = None,
    resume: dict[str, Any] | None = None,
    gateway: ListGateway | None = None,
) -> tuple[RunSummary, list[dict[str, Any]], FakeFetcher, list[dict[str, Any]]]:
    """One run as the driver does it (record, seed, actors, report file, summary), without Ray."""
    s: Settings = settings(**{"state_dir": tmp / "state", "deep.max_parallel": 2})
    state = s.resolved_state_dir()
    seed = follow_up.load_seed(state, follow_up_of, s) if follow_up_of else None
    run_dir = RunDir.create(state, run_id) if resume is None else RunDir.existing(state, run_id)
    request = Request(run_id=run_id, query=query, mode=mode, follow_up=follow_up_of)  # type: ignore[arg-type]
    if resume is None:
        runs.write_record(run_dir, request, s, tmp)
    start = run_dir.read_events()
    log = EventLog(str(run_dir.root), run_id, start[-1].seq if start else 0)
    sink = DiskSink(log)
    fetcher = FakeFetcher()
    pool = UrlPool(seed.docs if seed else (), sink)
    llm = EvaluatorScript(['{"action": "synthesize"}'] * 3)
    spawner = LocalSpawner(s, gateway or ListGateway(urls), pool, sink, llm, [fetcher])
    evaluator = Evaluator(llm) if mode == "deep" else None
    coord = Coordinator(s, request, sink, llm, spawner, evaluator, resume, seed)
    result: RunResult = await coord.run()
    await asyncio.gather(*sink.pending)
    await log.close()
    prep = driver.Prepared(s, request, run_dir, tmp, (), seed=seed)
    summary = driver.finish(prep, result, 0.5)
    run_dir.write_text(runs.SUMMARY, summary.model_dump_json())
    events = [e.model_dump(mode="json") for e in run_dir.read_events()[len(start) :]]
    return summary, events, fetcher, sink.checkpoints


def read(path: str | None) -> str:
    return Path(path or "").read_text()


def urls_of(events: list[dict[str, Any]], kind: str) -> set[str]:
    return {str(e["payload"]["url"]) for e in events if e["type"] == kind}


async def test_quick_follow_up_reuses_texts_and_links_the_earlier_report(tmp_path: Path) -> None:
    first, ev1, fetch1, _ = await run_once(
        tmp_path, "r1", "How many widget units were sold in 2024?", "quick", URLS[:6]
    )
    kept = RunDir.existing(tmp_path / "state", "r1").read_docs()
    assert {d.url for d in kept} == set(fetch1.fetched) == urls_of(ev1, "source_read")
    page_text = next(iter(PAGES.values()))[:60]
    assert page_text not in (tmp_path / "state/runs/r1/events.jsonl").read_text()

    second, ev2, fetch2, _ = await run_once(
        tmp_path, "r2", "Which plant makes gadgets?", "quick", URLS[2:10], follow_up_of="r1"
    )
    # No document is fetched in both runs: the overlap is reused from the earlier run's texts.
    assert not set(fetch1.fetched) & set(fetch2.fetched)
    assert urls_of(ev2, "source_reused") == set(URLS[2:6])
    assert urls_of(ev2, "source_read") == set(URLS[6:10]) == set(fetch2.fetched)
    started = [e["payload"] for e in ev2 if e["type"] == "researcher_started"]
    assert started[0]["injected"] == 1  # the earlier report, as a note
    # The new report links the earlier one: its file name in the body, run id below the rule.
    report = read(second.report_path)
    earlier_name = Path(first.report_path or "").name
    link = f'Follow-up to: "How many widget units were sold in 2024?" (report: {earlier_name})'
    assert link in body_of(report)
    assert "r1" not in body_of(report).replace(earlier_name, "")
    assert "Follow-up of run r1" in report[len(body_of(report)) :]
    assert second.follow_up_of == "r1" and first.follow_up_of is None
    # A follow-up of the follow-up inherits the whole thread: nothing of either run is refetched.
    seed = follow_up.load_seed(tmp_path / "state", "r2", settings())
    assert {d.url for d in seed.docs} == set(URLS[:10])
    assert len(seed.reports) == 2


async def test_deep_follow_up_researches_only_new_sub_questions(tmp_path: Path) -> None:
    _, _, fetch1, _ = await run_once(
        tmp_path, "d1", "What were Widget sales and gadget output in 2024?", "deep", URLS[:8]
    )
    query = "What were Widget sales and plant count in 2024?"
    second, ev2, fetch2, checkpoints = await run_once(
        tmp_path, "d2", query, "deep", URLS[:8], follow_up_of="d1"
    )
    reused = [e["payload"] for e in ev2 if e["type"] == "subtask_reused"]
    assert [(r["question"], r["earlier_subtask"]) for r in reused] == [
        ("What were Widget sales in 2024?", "t2")  # t1 was the first run's whole question
    ]
    researched = [e["payload"]["question"] for e in ev2 if e["type"] == "researcher_started"]
    assert researched == [query, "What was plant count in 2024?"]
    assert fetch1.fetched and not fetch2.fetched  # every page was read by the first run
    report = read(second.report_path)
    # The reused report's findings are in the new report (the pages never give a plant count,
    # so source scoring leaves the new sub-question without findings of its own).
    assert re.search(
        r"Widget sales reached 101 million units in 2024 at plant 1\.[^\n]*\[1\]", report
    )
    assert second.status == "completed"

    # Resume of the follow-up from its first checkpoint while researching: the seed is reloaded
    # from the earlier run, the reused sub-task is reused again, and the report body is the same.
    cp = next(c for c in checkpoints if c["lifecycle"]["status"] == "researching")
    assert cp["lifecycle"]["running"] == ["t1", "t2"]
    resumed, ev3, fetch3, _ = await run_once(
        tmp_path, "d2", query, "deep", URLS[:8], follow_up_of="d1", resume=cp
    )
    assert "run_resumed" in [e["type"] for e in ev3] and not fetch3.fetched
    assert [e["payload"]["subtask"] for e in ev3 if e["type"] == "subtask_reused"] == ["t2"]
    assert resumed.report_path != second.report_path
    assert body_of(read(resumed.report_path)) == body_of(report)


@pytest.mark.parametrize("mode", ["quick", "deep"])
async def test_a_follow_up_that_points_back_is_searched_with_the_earlier_subject(
    tmp_path: Path, mode: str
) -> None:
    """ "How did that compare ...?" names nothing: its plan and every search carry the earlier
    question's subject (who, what, when); the report still shows the user's own question."""
    earlier = "How many widget units did Kestrel Foods sell in the quarter ended March 31, 2024?"
    await run_once(tmp_path, "s1", earlier, "quick", URLS[:4])
    gateway = ListGateway(URLS[:4])
    question = "How did that compare with the same quarter a year earlier?"
    summary, events, _, _ = await run_once(
        tmp_path, "s2", question, mode, URLS[:4], follow_up_of="s1", gateway=gateway
    )
    started = next(e["payload"] for e in events if e["type"] == "run_started")
    assert started["query"] == question
    assert str(started["in_context"]).startswith(question)
    researched = [e["payload"]["question"] for e in events if e["type"] == "researcher_started"]
    assert researched and all("Kestrel Foods" in q for q in researched)
    assert gateway.queries
    for query in gateway.queries:  # every search names who, what and when
        assert "Kestrel Foods" in query and "widget" in query.lower(), query
        assert "March 31, 2024" in query, query
    assert read(summary.report_path).startswith(f"# {question}")


async def test_a_follow_up_that_names_its_own_subject_keeps_it(tmp_path: Path) -> None:
    await run_once(tmp_path, "o1", "How many widget units were sold in 2024?", "quick", URLS[:4])
    gateway = ListGateway(URLS[:4])
    own = "Which plant of Kestrel Foods makes gadgets?"
    _, events, _, _ = await run_once(
        tmp_path, "o2", own, "quick", URLS[:4], follow_up_of="o1", gateway=gateway
    )
    started = next(e["payload"] for e in events if e["type"] == "run_started")
    assert "in_context" not in started
    researched = [e["payload"]["question"] for e in events if e["type"] == "researcher_started"]
    assert researched == [own]
    # Its own search leads; the earlier findings only steer (a note), as for any follow-up.
    assert "Kestrel Foods" in gateway.queries[0] and "widget" not in gateway.queries[0].lower()


def test_the_subject_is_resolved_through_the_whole_thread(tmp_path: Path) -> None:
    """A follow-up of a follow-up: the seed carries the first question's subject along."""
    s = settings(**{"state_dir": tmp_path / "state"})
    thread = [
        ("t1", "What was Kestrel Foods's gross margin in fiscal 2023?", None),
        ("t2", "How did that change the year after?", "t1"),
    ]
    for run_id, query, parent in thread:
        run_dir = RunDir.create(tmp_path / "state", run_id)
        runs.write_record(
            run_dir, Request(run_id=run_id, query=query, follow_up=parent), s, tmp_path
        )
        run_dir.write_text(
            runs.SUMMARY,
            RunSummary(
                run_id=run_id, status="completed", mode="quick", query=query
            ).model_dump_json(),
        )
    seed = follow_up.load_seed(tmp_path / "state", "t2", s)
    assert seed.query == "How did that change the year after?"
    assert "Kestrel Foods's gross margin in fiscal 2023" in seed.context
    third = reuse.research_question("And the year before?", seed)
    assert third.startswith("And the year before?") and "Kestrel Foods" in third
    assert follow_up.question_for("Why?", "t2", s) == reuse.research_question("Why?", seed)


# --------------------------------------------------------------------------- pure rules


def test_matching_is_conservative() -> None:
    ok = ResearcherReport(
        subtask_id="t1",
        question="What was Widget sales in 2024?",
        findings=(Finding(text="x", citations=("u",)),),
    )
    assert reuse.matching_report("what was widget sales in 2024", [ok], 0.9) == ok
    assert reuse.matching_report("What were the widget sales in 2024?", [ok], 0.9) == ok
    assert reuse.matching_report("What was Widget sales in 2023?", [ok], 0.9) is None
    assert reuse.matching_report("What was gadget output in 2024?", [ok], 0.9) is None
    empty = ok.model_copy(update={"findings": ()})
    assert reuse.matching_report("What was Widget sales in 2024?", [empty], 0.9) is None


def test_kept_documents_are_capped(tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "c1")
    log = EventLog(str(run_dir.root), "c1", 0, doc_caps=(1000, 2500))

    def doc(i: int, n: int, kind: str = "text/plain") -> FetchedDoc:
        return FetchedDoc(
            url=f"https://e.org/{i}", title="t", location="l", text="x" * n, content_type=kind
        )

    async def store() -> None:
        await log.append_docs([doc(0, 5000)])  # cut to the per-document cap
        await log.append_docs([doc(1, 800, reuse.SNIPPET_TYPE)])  # a snippet stand-in: not kept
        await log.append_docs([doc(2, 900)])
        await log.append_docs([doc(3, 900)])  # cut to what is left of the run's cap
        await log.append_docs([doc(4, 900)])  # nothing left: said once
        await log.append_docs([doc(5, 900)])
        await log.close()

    asyncio.run(store())
    kept = run_dir.read_docs()
    assert [(d.url[-1], len(d.text)) for d in kept] == [("0", 1000), ("2", 900), ("3", 600)]
    assert [e.type for e in run_dir.read_events()] == ["docs_cap_reached"]
    with open(run_dir.path("docs.jsonl"), "ab") as fh:
        fh.write(b'{"url": "torn')  # a crash mid-line: ignored on read, cut on the next append
    assert len(run_dir.read_docs()) == 3


# --------------------------------------------------------------------------- bad input


def test_unknown_or_unfinished_run_is_an_input_error(tmp_path: Path) -> None:
    s = settings(**{"state_dir": tmp_path / "state"})
    with pytest.raises(InputError, match="no run nosuchrun"):
        driver.prepare("What changed?", "quick", s, follow_up_of="nosuchrun")
    run_dir = RunDir.create(tmp_path / "state", "u1")
    runs.write_record(run_dir, Request(run_id="u1", query="q"), s, tmp_path)
    with pytest.raises(InputError, match="u1 has not finished"):
        driver.prepare("What changed?", "quick", s, follow_up_of="u1")
    assert [p.name for p in (tmp_path / "state" / "runs").iterdir()] == ["u1"]  # nothing created


def test_cli_follow_up_of_unknown_run_exits_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "What changed since?", "--follow-up", "nosuchrun"])
    assert exit_info.value.code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "no run nosuchrun" in err[0]


def test_the_gate_reads_a_follow_up_with_its_subject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "How did it do?" alone asks what to research (exit 2); as a follow-up it is researched."""
    monkeypatch.setenv("DEEP_RESEARCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path))
    s = settings(**{"state_dir": tmp_path / "state"})
    earlier = "What was Kestrel Foods's gross margin in fiscal 2023?"
    run_dir = RunDir.create(tmp_path / "state", "g1")
    runs.write_record(run_dir, Request(run_id="g1", query=earlier), s, tmp_path)
    done = RunSummary(run_id="g1", status="completed", mode="quick", query=earlier)
    run_dir.write_text(runs.SUMMARY, done.model_dump_json())
    started: list[driver.Prepared] = []
    monkeypatch.setattr(cli, "_execute", lambda prep, as_json: started.append(prep))
    argv = ["run", "How did it do?", "--output-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2 and not started
    assert "What would you like me to research?" in capsys.readouterr().err
    cli.main([*argv, "--follow-up", "g1"])
    assert [p.request.query for p in started] == ["How did it do?"]
    assert started[0].seed is not None and started[0].seed.query == earlier
