"""The crew's shared actors as plain objects (no Ray): what they share across runs on purpose
(rate limits, breakers) and what they keep apart by run id (spending and cap, pool, log, model
and keys), and that closing a run releases it everywhere."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar
from unittest import mock

import pytest
from fake_clock import FakeClock
from pydantic import SecretStr

from deepresearch.actors.ledger import CrewLedger
from deepresearch.actors.run_host import RunHost, build_model
from deepresearch.actors.search_gateway import SearchGateway, SharedLimits
from deepresearch.config.settings import LLMRateLimit, ModelPrice, Settings
from deepresearch.errors import (
    BudgetExceeded,
    InputError,
    ProviderError,
    RateLimited,
    SearchUnavailable,
)
from deepresearch.llm_messages import LLMReply, QueriesTask, QueryList
from deepresearch.per_run.run_context import LedgerHook, LedgerTerms, RunContext, RunSpec
from deepresearch.per_run.run_models import RunModels
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.registry import LLMKeys
from deepresearch.providers.llm.router import Router
from deepresearch.providers.llm.structured import build_request
from deepresearch.providers.testing.scripted_llm import ScriptedLLM
from deepresearch.schemas import FetchedDoc, Request, RunSummary, SearchHit
from deepresearch.storage.run_dir import RunDir

PRICES = {"gpt-x": ModelPrice(input_per_mtok=1000.0, output_per_mtok=1000.0)}


def reply(tokens: int) -> LLMReply:
    return LLMReply(text="{}", provider="openai", model="gpt-x", input_tokens=tokens)


async def test_each_run_has_its_own_cost_cap_on_the_shared_ledger() -> None:
    ledger = CrewLedger()
    capped, roomy = LedgerTerms(1.0, {}, PRICES), LedgerTerms(100.0, {}, PRICES)
    for run, terms in (("a", capped), ("b", roomy)):
        await ledger.before_call(run, terms, "planner", "openai", "gpt-x", 10)
        await ledger.after_call(run, terms, "planner", reply(1500))  # 1.5 USD each
    with pytest.raises(BudgetExceeded):
        await ledger.before_call("a", capped, "writer", "openai", "gpt-x", 10)
    await ledger.before_call("b", roomy, "writer", "openai", "gpt-x", 10)  # b's spending is b's
    assert (await ledger.totals("b"))["spent_usd"] == pytest.approx(1.5)
    await ledger.release("a")
    assert await ledger.held() == ["b"]


async def test_rate_limits_are_shared_by_every_run_on_the_ledger() -> None:
    now = [0.0]
    ledger = CrewLedger(clock=lambda: now[0])
    terms = LedgerTerms(None, {"openai": LLMRateLimit(requests_per_minute=1)}, {})
    waits: list[float] = []
    for run in ("a", "b"):
        led = ledger._run(run, terms)
        led._sleep = _recording(waits)
        await ledger.before_call(run, terms, "researcher", "openai", "m", 1)
    assert waits == [pytest.approx(60.0)]  # b queued behind a's request: one bucket for both


def _recording(waits: list[float]) -> Any:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return sleep


class Down:
    name = "down"

    def __init__(self) -> None:
        self.calls = 0

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        self.calls += 1
        raise ProviderError("down", "HTTP 500", False)


def run_gateway(provider: Down, shared: SharedLimits) -> SearchGateway:
    return SearchGateway(
        [provider], BreakerConfig(2, 60.0, 1), RetryPolicy(1, 0, 0, 0), shared=shared
    )


async def test_a_breaker_opened_by_one_run_spares_every_other_run() -> None:
    shared = SharedLimits()
    first, second = Down(), Down()
    for _ in range(2):
        with pytest.raises(SearchUnavailable):
            await run_gateway(first, shared).search("q", 5)
    with pytest.raises(SearchUnavailable, match="open"):
        await run_gateway(second, shared).search("q", 5)
    assert second.calls == 0  # the other run's failures already opened the breaker
    alone = Down()
    with pytest.raises(SearchUnavailable):
        await run_gateway(alone, SharedLimits()).search("q", 5)
    assert alone.calls == 1  # without sharing it would have asked the provider again


class Handle:
    """A plain object as a Ray actor handle: ``handle.method.remote(...)`` runs the call as a
    task of its own, as Ray does whether or not anyone awaits it; calls are recorded."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._actor, name)

        def remote(*args: Any) -> asyncio.Future[Any]:
            self.calls.append((name, args))
            return asyncio.ensure_future(method(*args))

        return SimpleNamespace(remote=remote)


async def test_a_tier_one_crew_process_found_failing_is_skipped_by_another_unasked() -> None:
    """Two crew processes (each its own breaker states) and the crew ledger between them: the
    429s one gets open the tier for the other too, learnt from the ledger's reply to the call
    it makes anyway; once learnt, it is not even asked about that tier again."""
    t = FakeClock(1000.0)
    ledger = Handle(CrewLedger(clock=t))
    backup = ScriptedLLM({"researcher": ['{"queries": ["q"]}'] * 4}, name="backup")

    states: dict[str, dict[str, Any]] = {}  # each process's own breakers, by run

    def process(run_id: str, primary: ScriptedLLM, crew: bool = True) -> Router:
        return Router(
            [primary, backup],
            BreakerConfig(failure_threshold=2, reset_timeout_s=30.0, half_open_max_calls=1),
            RetryPolicy(3, 1.0, 4.0, 10.0),
            hook=LedgerHook(ledger, run_id, LedgerTerms(None, {}, {})) if crew else None,
            clock=t,
            sleep=t.sleep,
            rand=lambda: 0.5,
            breaker_states=states.setdefault(run_id, {}),  # a process of its own
        )

    request = build_request("researcher", QueriesTask(question="solar output"), QueryList)
    limited = ScriptedLLM({"researcher": [RateLimited("primary", 1.0)] * 2}, name="primary")
    healthy = ScriptedLLM({"researcher": ['{"queries": ["q"]}']}, name="primary")
    first, second = process("a", limited), process("b", healthy)
    assert (await first.complete(request)).provider == "backup"
    assert states["a"]["primary:scripted-1"].status == "open"
    for _ in range(2):
        assert (await second.complete(request)).provider == "backup"
    assert healthy.calls == []  # the other process's 429s kept it off the tier
    assert states["b"]["primary:scripted-1"].status == "open"
    asked = [args[3] for name, args in ledger.calls if name == "before_call" and args[0] == "b"]
    assert asked == ["primary", "backup", "backup"]  # learnt once, then skipped locally
    alone = ScriptedLLM({"researcher": ['{"queries": ["q"]}']}, name="primary")
    assert (await process("c", alone, crew=False).complete(request)).provider == "primary"
    assert len(alone.calls) == 1  # without the crew's board a process would call the tier


def context(run_id: str, key: str = "", **fields: Any) -> RunContext:
    keys = LLMKeys(openai_api_key=SecretStr(key)) if key else LLMKeys()
    return RunContext(run_id, Settings(), mock.MagicMock(), mock.MagicMock(), keys=keys, **fields)


def test_each_run_gets_its_own_model_built_with_its_own_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, LLMKeys]] = []
    breaker_dicts: list[Any] = []

    def build(
        settings: Settings,
        keys: LLMKeys,
        hook: Any = None,
        breakers: Any = None,
        notify: Any = None,
    ) -> Any:
        breaker_dicts.append(breakers)
        built.append(
            (str(keys.openai_api_key.get_secret_value() if keys.openai_api_key else ""), keys)
        )
        return mock.MagicMock(name=f"model-{len(built)}")

    monkeypatch.setattr("deepresearch.providers.assembly.from_settings.build_llm_provider", build)
    models = RunModels(build_model)
    a, b = context("a", "key-a"), context("b", "key-b")
    assert models.get(a) is models.get(a)  # built once per run
    assert models.get(b) is not models.get(a)
    assert [k for k, _ in built] == ["key-a", "key-b"]
    # both runs' models share this process's tier breakers (one run's 429 informs the other)
    assert breaker_dicts[0] is models.breakers and breaker_dicts[1] is models.breakers
    models.release("a")
    assert models.held() == {"b"}
    assert "key-a" not in repr(a) and "key-b" not in repr(b)


def open_spec(tmp_path: Path, run_id: str, crew: list[Any]) -> RunSpec:
    run_dir = RunDir.create(tmp_path, run_id)
    researcher, gateway = crew
    ctx = RunContext(run_id, Settings(), mock.MagicMock(), gateway, llm=mock.MagicMock())
    request = Request(run_id=run_id, query="What were ACME sales?", mode="quick", created_at=0.0)
    return RunSpec(ctx, request, str(run_dir.root), (researcher,))


async def test_the_run_host_keeps_each_runs_pool_and_log_apart_and_releases_them(
    tmp_path: Path,
) -> None:
    crew = [mock.MagicMock(name="researcher"), mock.MagicMock(name="gateway")]
    host = RunHost()
    for run_id in ("a", "b"):
        await host.open(open_spec(tmp_path, run_id, crew))
    url = "https://example.com/report"
    assert (await host.pool("a", "claim", url, "t1")).status == "claimed"
    assert (await host.pool("b", "claim", url, "t1")).status == "claimed"  # not "taken"
    doc = FetchedDoc(url=url, title="A page", location=url, text="only run a read this")
    await host.pool("a", "store_many", [doc])
    assert await host.pool("b", "get", url, 0.01) is None  # b never sees a's text
    await host.log("a", "append", "note", {"who": "a"})
    with pytest.raises(ValueError, match="not a URL pool method"):
        await host.pool("a", "_docs")
    with pytest.raises(LookupError):
        await host.log("nobody", "events")
    with pytest.raises(InputError, match="still running"):
        await host.open(open_spec(tmp_path / "again", "a", crew))

    await host.close("a")
    assert await host.held() == ["b"]
    for member in crew:
        member.release.remote.assert_called_with("a")
    lines = (tmp_path / "runs" / "a" / "events.jsonl").read_text().splitlines()
    assert [json.loads(x)["run_id"] for x in lines] == ["a"]
    assert not (tmp_path / "runs" / "b" / "events.jsonl").exists()


class Stuck:
    """A coordinator whose run goes on until it is cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self) -> Any:
        self.started.set()
        await asyncio.Event().wait()


async def test_a_run_whose_driver_died_is_stopped_released_and_left_resumable(
    tmp_path: Path,
) -> None:
    """The lease (the driver's ``hold`` result) failing with ``OwnerDiedError`` is the driver's
    death: the host stops the run, releases it in the crew and records it interrupted. A lease
    that ends because the driver closed the run records nothing."""
    from ray.exceptions import OwnerDiedError

    crew = [mock.MagicMock(name="researcher"), mock.MagicMock(name="gateway")]
    host = RunHost()
    leases: dict[str, asyncio.Future[None]] = {}
    running = {}
    for run_id in ("a", "b"):
        await host.open(open_spec(tmp_path, run_id, crew))
        stuck = host._runs[run_id].coordinator = Stuck()  # type: ignore[assignment]
        leases[run_id] = asyncio.get_running_loop().create_future()
        running[run_id] = asyncio.create_task(host.run(run_id, [leases[run_id]]))
        await stuck.started.wait()
    watch, held = host._runs["a"].watch, asyncio.create_task(host.hold("a"))
    assert watch is not None
    leases["a"].set_exception(OwnerDiedError("ab" * 28, None, ""))
    await watch
    await held  # the lease ends once the run is closed
    with pytest.raises(asyncio.CancelledError):
        await running["a"]
    assert await host.held() == ["b"]
    for member in crew:
        member.release.remote.assert_called_with("a")
    runs_dir = tmp_path / "runs"
    types = [
        json.loads(x)["type"] for x in (runs_dir / "a" / "events.jsonl").read_text().splitlines()
    ]
    assert types == ["driver_lost"]
    summary = json.loads((runs_dir / "a" / "summary.json").read_text())
    assert summary["status"] == "interrupted" and "deep-research resume a" in summary["reason"]

    await host.close("b")  # its driver closed it: no death to record
    with pytest.raises(asyncio.CancelledError):
        await running["b"]
    assert await host.held() == []
    assert not (runs_dir / "b" / "summary.json").exists()


class Done:
    """A coordinator whose run has ended: its driver has the result."""

    async def run(self) -> Any:
        return "result"


async def test_a_driver_that_died_after_writing_the_report_leaves_its_run_finished(
    tmp_path: Path,
) -> None:
    """The report and summary were on disk when the driver died, before it said
    ``run_finished``: the host says it, and the run stays completed. Without the report it is
    ``driver_lost`` and interrupted; a run its driver had said finished gets nothing more."""
    from ray.exceptions import OwnerDiedError

    crew = [mock.MagicMock(name="researcher"), mock.MagicMock(name="gateway")]
    host = RunHost()
    report = tmp_path / "report.md"
    report.write_text("# The report\n")
    for run_id, path in (("wrote", report), ("lost", tmp_path / "never-written.md")):
        await host.open(open_spec(tmp_path, run_id, crew))
        host._runs[run_id].coordinator = Done()  # type: ignore[assignment]
        summary = RunSummary(
            run_id=run_id, status="completed", mode="quick", query="q", report_path=str(path)
        )
        (tmp_path / "runs" / run_id / "summary.json").write_text(summary.model_dump_json())
    await host.open(open_spec(tmp_path, "said", crew))
    host._runs["said"].coordinator = Done()  # type: ignore[assignment]
    await host.finished("said", {"status": "completed", "sources": 1, "limited_by": None})
    for run_id in ("wrote", "lost", "said"):
        lease: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        assert await host.run(run_id, [lease]) == "result"
        watch = host._runs[run_id].watch
        lease.set_exception(OwnerDiedError("ab" * 28, None, ""))
        await watch  # type: ignore[misc]
    assert await host.held() == []

    def types(run_id: str) -> list[str]:
        lines = (tmp_path / "runs" / run_id / "events.jsonl").read_text().splitlines()
        return [json.loads(x)["type"] for x in lines]

    assert types("wrote") == types("said") == ["run_finished"]
    assert types("lost") == ["driver_lost"]


def test_a_context_is_pickled_once_and_decoded_once_per_run_until_released() -> None:
    """Every crew call carries its run's context: its settings and keys are not re-encoded per
    call, nor re-decoded by a process that already holds them; release drops them."""
    import pickle

    sent = RunContext("r-pickle", Settings(), None, None, LLMKeys(openai_api_key=SecretStr("k1")))
    first, second = pickle.loads(pickle.dumps(sent)), pickle.loads(pickle.dumps(sent))
    assert first == sent and first.keys.openai_api_key.get_secret_value() == "k1"
    assert second.settings is first.settings  # decoded once in this process
    assert pickle.dumps(first) == pickle.dumps(sent)  # passed on (to the gateway) as it came
    other = RunContext("r-other", Settings(), None, None)
    assert pickle.loads(pickle.dumps(other)).settings is not first.settings
    RunModels(build_model).release("r-pickle")  # the run ended: what was decoded of it goes
    assert pickle.loads(pickle.dumps(sent)).settings is not first.settings
    assert "k1" not in repr(first)


@dataclass(frozen=True)
class CrewHandle:
    """Stands for a crew actor's handle: counts how often one is decoded."""

    name: str
    decoded: ClassVar[list[str]] = []

    def __reduce__(self) -> tuple[Any, ...]:
        return (_decode_handle, (self.name,))


def _decode_handle(name: str) -> CrewHandle:
    CrewHandle.decoded.append(name)
    return CrewHandle(name)


def test_a_crews_handles_are_decoded_once_per_process_for_every_run() -> None:
    """Decoding a Ray actor handle is costly (the core worker registers it): the run host's
    and gateway's handles are the same in every run's context, so a crew process decodes them
    once, not once per run (32 runs at once were 96 decodings per crew process)."""
    import pickle

    from deepresearch.per_run import run_context

    run_context._crews.clear()
    CrewHandle.decoded.clear()
    sent = RunContext("r-handles", Settings(), CrewHandle("host"), CrewHandle("gateway"))
    first, second = pickle.loads(pickle.dumps(sent)), pickle.loads(pickle.dumps(sent))
    assert (first.host, first.gateway) == (CrewHandle("host"), CrewHandle("gateway"))
    assert second.host is first.host and second.gateway is first.gateway
    assert sorted(CrewHandle.decoded) == ["gateway", "host"]
    RunModels(build_model).release("r-handles")
    again = pickle.loads(pickle.dumps(sent))
    other = RunContext("r-other", Settings(), CrewHandle("host"), CrewHandle("gateway"))
    assert pickle.loads(pickle.dumps(other)).host is again.host is first.host
    assert sorted(CrewHandle.decoded) == ["gateway", "host"]
    RunModels(build_model).release("r-other")


async def test_ready_opens_the_corpus_index_a_run_will_read(tmp_path: Path) -> None:
    """A service warms its crew: the first run finds the corpus index open in the researchers
    and the gateway, with what its first search would build; a corpus with no index yet is left for the first run to report."""
    from deepresearch.actors.members import CrewGateway, CrewResearcher, fetcher_key
    from deepresearch.config.settings import load_settings
    from deepresearch.providers.assembly import from_settings as assembly
    from deepresearch.providers.search import local
    from deepresearch.run import driver

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nACME Corp net sales were $1,234 million.\n")
    flags = {"corpus": {"path": str(docs), "cache_dir": str(tmp_path / "cache")}}
    settings = assembly.run_settings(load_settings(None, flags, env={}))
    researcher, gateway = CrewResearcher(), CrewGateway()
    await researcher.ready(settings)  # nothing built yet: no error, nothing kept
    assert not researcher._fetchers
    driver.build_index(settings)
    await researcher.ready(settings)
    await gateway.ready(settings)
    assert fetcher_key(settings) in researcher._fetchers
    opened = (str(settings.corpus.path), str(settings.resolved_cache_dir()))
    assert any(k[:2] == opened for k in local._opened)
    index = next(v for k, v in local._opened.items() if k[:2] == opened)
    # line-item labels and signed pages built before the first search, which would pay for them
    assert index._labels and index._signed
