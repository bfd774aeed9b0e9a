"""What a shared crew actor needs to serve one run, and how it reaches that run's own state.

Crew actors (``actors/members.py``) serve many runs at once, so nothing about a run lives in their
constructor: every call carries the run's ``RunContext`` (its id, settings, keys, and the handles
of the run host that holds its URL pool and event log). Keys travel as ``SecretStr`` and are
only unwrapped where a provider is built; a context never reaches an event, a log or a file.
The crew's handles (``CrewHandles``) and what opening a run takes (``RunSpec``) are plain data
here too: the driver builds them without importing an actor (``run/driver.py``).
"""

from __future__ import annotations

import asyncio
import pickle
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import JsonValue, SecretStr

from deepresearch.config.settings import LLMRateLimit, ModelPrice, Settings
from deepresearch.llm_messages import LLMReply
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.registry import LLMKeys
from deepresearch.schemas import (
    FetchedDoc,
    FollowUpSeed,
    PriorWork,
    Request,
    Role,
    SearchRecord,
    SearchResult,
)

# What a run host answers for a run's log and pool (nothing else is reachable by name).
LOG_METHODS = frozenset({"append", "append_many", "checkpoint", "write_text", "wait", "events"})
POOL_METHODS = frozenset(
    {
        "claim",
        "claim_many",
        "handshake",
        "store_many",
        "keep_searches",
        "fail",
        "get",
        "taken_by_others",
        "stats",
    }
)


@dataclass(frozen=True)
class RunContext:
    run_id: str
    settings: Settings
    host: Any  # the RunHost actor holding this run's URL pool and event log
    gateway: Any  # the crew's search gateway
    keys: LLMKeys = field(default_factory=LLMKeys)
    search_keys: tuple[tuple[str, SecretStr], ...] = ()  # only the variables the chain reads
    ledger: Any = None  # the crew's ledger, when some tier is a metered model
    llm: LLMProvider | None = None  # a test's scripted model; else built from settings and keys

    @staticmethod
    def secret_env(env: Mapping[str, str]) -> tuple[tuple[str, SecretStr], ...]:
        return tuple((name, SecretStr(value)) for name, value in sorted(env.items()))

    def search_env(self) -> dict[str, str]:
        return {name: value.get_secret_value() for name, value in self.search_keys}

    def __repr__(self) -> str:  # nothing of the settings or keys in a traceback or log line
        return f"RunContext(run_id={self.run_id!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """A context goes with every crew call: its settings, keys and crew handles travel as
        bytes pickled once per context, and a receiver decodes a run's bytes once (``_revive``),
        the crew's handles (the same for every run) once per process. Decoding a Ray actor
        handle costs about a millisecond (the core worker registers it), twice per search
        otherwise, and three per run and crew process."""
        blobs = self.__dict__.get("_blob")
        if blobs is None:
            run = pickle.dumps((self.settings, self.keys, self.search_keys))
            blobs = (run, pickle.dumps((self.host, self.gateway, self.ledger)))
            object.__setattr__(self, "_blob", blobs)
        return (_revive, (self.run_id, *blobs, self.llm))


@dataclass(frozen=True)
class CrewHandles:
    """The crew's actor handles, as ``actors/crew.py`` joins them."""

    hosts: tuple[Any, ...]
    researchers: tuple[Any, ...]
    gateway: Any
    evaluator: Any = None
    ledger: Any = None

    def host_for(self, run_id: str) -> Any:
        """A run's host, fixed by its id (stable across drivers, e.g. a resume)."""
        return self.hosts[zlib.crc32(run_id.encode()) % len(self.hosts)]


@dataclass(frozen=True)
class RunSpec:
    """Everything a run host needs to open one run (built by the driver)."""

    context: RunContext
    request: Request
    run_dir: str
    researchers: tuple[Any, ...]  # the crew's researcher actors
    evaluator: Any = None  # the crew's evaluator (deep mode)
    start_seq: int = 0  # events already in events.jsonl (a resumed run appends after them)
    doc_caps: tuple[int, int] | None = None
    warnings: tuple[tuple[str, str], ...] = ()
    resume: dict[str, Any] | None = None
    follow_up: FollowUpSeed | None = None  # without its docs: those seed the pool
    seed_docs: tuple[FetchedDoc, ...] = ()  # a follow-up's earlier texts, a resume's own
    prior: dict[str, PriorWork] = field(default_factory=dict)  # a resume's unfinished sub-tasks

    def crew(self) -> list[Any]:
        """Every crew actor that may keep something of this run."""
        c = self.context
        members = [*self.researchers, c.gateway, self.evaluator, c.ledger]
        return [m for m in members if m is not None]


KEPT_CONTEXTS = 512  # decoded contexts a process keeps at most
KEPT_CREWS = 8  # decoded crew handles (host, gateway, ledger) a process keeps at most
_decoded: dict[str, tuple[tuple[bytes, bytes], RunContext]] = {}  # by run id, until forget
_crews: dict[bytes, tuple[Any, Any, Any]] = {}  # by their bytes: every run of a crew shares them


def _crew_handles(blob: bytes) -> tuple[Any, Any, Any]:
    handles = _crews.get(blob)
    if handles is None:
        handles = _crews[blob] = pickle.loads(blob)  # our own bytes
        while len(_crews) > KEPT_CREWS:
            _crews.pop(next(iter(_crews)))
    return handles


def _revive(run_id: str, blob: bytes, crew: bytes, llm: LLMProvider | None) -> RunContext:
    held = _decoded.get(run_id)
    blobs = (blob, crew)
    if held is None or held[0] != blobs:
        settings, keys, search_keys = pickle.loads(blob)  # our own bytes
        host, gateway, ledger = _crew_handles(crew)
        context = RunContext(run_id, settings, host, gateway, keys, search_keys, ledger)
        object.__setattr__(context, "_blob", blobs)  # passed on (researcher to gateway) as it came
        held = _decoded[run_id] = (blobs, context)
        while len(_decoded) > KEPT_CONTEXTS:  # a run whose end was never said
            _decoded.pop(next(iter(_decoded)))
    context = held[1]
    if llm is not None:  # a test's scripted model travels as it is
        context = replace(context, llm=llm)
        object.__setattr__(context, "_blob", blobs)
    return context


def forget(run_id: str) -> None:
    """Drop what this process decoded of a run's context (its keys among it): the run ended."""
    _decoded.pop(run_id, None)


Burst = list[tuple[str, dict[str, JsonValue]]]  # (type, payload) of one sender's events


class HostMail:
    """Event bursts of every run this process serves, to one run host: one call in flight, the
    bursts that arrive meanwhile (from any run) go together in the next (``RunHost.log_many``).

    A crew process serves dozens of runs at once; one call per researcher burst would pay Ray's
    per-call cost on both sides for each. A sender still waits until its own burst has landed and
    learns only its own failure; the host appends each run's bursts in the order they came."""

    def __init__(self, host: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._host = host
        self.loop = loop
        self._waiting: list[tuple[str, Burst, asyncio.Future[None]]] = []
        self._pump: asyncio.Task[None] | None = None

    async def send(self, run_id: str, events: Burst) -> None:
        """Deliver ``events`` to ``run_id``'s log; raises what appending them raised."""
        landed: asyncio.Future[None] = self.loop.create_future()
        self._waiting.append((run_id, events, landed))
        if self._pump is None or self._pump.done():
            self._pump = self.loop.create_task(self._run())
        await landed

    async def _run(self) -> None:
        batch: list[tuple[str, Burst, asyncio.Future[None]]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                outcomes: list[BaseException | None]
                try:
                    outcomes = await self._host.log_many.remote([(r, e) for r, e, _ in batch])
                except Exception as exc:  # the call itself failed: every sender in it learns so
                    outcomes = [exc] * len(batch)
                for (_, _, landed), outcome in zip(batch, outcomes, strict=True):
                    if landed.done():  # its sender was cancelled meanwhile
                        continue
                    if outcome is None:
                        landed.set_result(None)
                    else:
                        landed.set_exception(outcome)
        finally:  # the pump itself cancelled (the process stopping): nobody waits forever
            for _, _, landed in (*batch, *self._waiting):
                if not landed.done():
                    landed.cancel()


_mail: dict[Any, HostMail] = {}  # by run host handle (equal handles name the same actor)


def mail_for(host: Any) -> HostMail:
    """This process's mail to ``host``, bound to the running event loop."""
    loop = asyncio.get_running_loop()
    mail = _mail.get(host)
    if mail is None or mail.loop is not loop:
        mail = _mail[host] = HostMail(host, loop)
    return mail


class RunSink:
    """The run's event log, held by its run host: an ``EventSink`` (and ``BatchSink``)."""

    def __init__(self, host: Any, run_id: str) -> None:
        self._host = host
        self._run_id = run_id

    async def emit(self, type: str, payload: dict[str, JsonValue] | None = None) -> None:
        await self._host.log.remote(self._run_id, "append", type, payload or {})

    async def emit_many(self, events: list[tuple[str, dict[str, JsonValue]]]) -> None:
        """A burst (type, payload), as ``per_run.latency_hiding.Background`` sends them; the log stamps each as
        it arrives. Bursts of every run this process serves share calls (``HostMail``)."""
        await mail_for(self._host).send(self._run_id, events)

    async def checkpoint(self, data: dict[str, Any]) -> None:
        await self._host.log.remote(self._run_id, "checkpoint", data)

    async def write_text(self, name: str, text: str) -> None:
        await self._host.log.remote(self._run_id, "write_text", name, text)


class RunPool:
    """The run's URL pool, held by its run host: a ``PoolPort``."""

    def __init__(self, host: Any, run_id: str) -> None:
        self._host = host
        self._run_id = run_id

    async def _call(self, method: str, *args: Any) -> Any:
        return await self._host.pool.remote(self._run_id, method, *args)

    async def claim(self, url: str, owner: str) -> Any:
        return await self._call("claim", url, owner)

    async def claim_many(
        self, urls: list[str], owner: str, stored: Sequence[FetchedDoc] = ()
    ) -> Any:
        return await self._call("claim_many", urls, owner, list(stored))

    async def handshake(self, candidates: list[str], owner: str, batch: list[str]) -> Any:
        return await self._call("handshake", candidates, owner, batch)

    async def store_many(self, docs: Sequence[FetchedDoc]) -> None:
        await self._call("store_many", list(docs))

    async def keep_searches(self, records: Sequence[SearchRecord]) -> None:
        await self._call("keep_searches", list(records))

    async def fail(self, url: str, reason: str) -> None:
        await self._call("fail", url, reason)

    async def get(self, url: str, timeout_s: float = 30.0) -> FetchedDoc | None:
        doc: FetchedDoc | None = await self._call("get", url, timeout_s)
        return doc


class RunGateway:
    """The crew's search gateway as this run's ``GatewayPort``."""

    def __init__(self, context: RunContext) -> None:
        self._context = context

    async def search(self, query: str, limit: int) -> SearchResult:
        result: SearchResult = await self._context.gateway.search.remote(
            self._context, query, limit
        )
        return result


@dataclass(frozen=True)
class LedgerTerms:
    """One run's side of the crew ledger: its cost cap, the rate limits it asks for, prices."""

    max_cost_usd: float | None
    rate_limits: Mapping[str, LLMRateLimit]
    prices: Mapping[str, ModelPrice]

    @staticmethod
    def of(settings: Settings) -> LedgerTerms:
        llm = settings.llm
        return LedgerTerms(llm.max_cost_usd, dict(llm.rate_limits), dict(llm.prices))


class LedgerHook:
    """The router's ``CallHook`` for one run: the crew ledger, keyed by the run id; also its
    ``BreakerBoard``, so model-tier breakers are shared by every crew process."""

    def __init__(self, ledger: Any, run_id: str, terms: LedgerTerms) -> None:
        self._ledger = ledger
        self._run_id = run_id
        self._terms = terms

    async def before_call(
        self, role: Role, provider: str, model: str, input_tokens: int
    ) -> dict[str, float]:
        crew: dict[str, float] = await self._ledger.before_call.remote(
            self._run_id, self._terms, role, provider, model, input_tokens
        )
        return crew  # the tiers other crew processes found failing

    def breaker_changed(self, key: str, open_s: float) -> None:
        """Tell the crew a tier's breaker opened or closed here (a ``BreakerBoard``)."""
        self._ledger.breaker_changed.remote(key, open_s)  # nobody waits for it

    async def after_call(self, role: Role, reply: LLMReply) -> None:
        await self._ledger.after_call.remote(self._run_id, self._terms, role, reply)
