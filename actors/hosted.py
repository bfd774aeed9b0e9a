"""Actor classes as Ray hosts them: each builds its own providers from settings in its process.

These stay plain classes (``runtime.spawn`` applies ``ray.remote``); they only add the wiring a
Ray process needs, so the policy-carrying base classes remain testable with in-process fakes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deepresearch import assembly, runtime
from deepresearch.actors.coordinator import Coordinator
from deepresearch.actors.evaluator import Evaluator
from deepresearch.actors.event_log import ActorSink
from deepresearch.actors.ledger import Ledger
from deepresearch.actors.ports import RemoteProxy, ResearcherPort
from deepresearch.actors.researcher import Researcher
from deepresearch.actors.search_gateway import SearchGateway
from deepresearch.actors.url_pool import UrlPool
from deepresearch.config.settings import Settings
from deepresearch.policies.breaker import BreakerConfig
from deepresearch.policies.retry import RetryPolicy
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.llm.registry import LLMKeys
from deepresearch.providers.search.base import SearchProvider
from deepresearch.schemas import FetchedDoc, FollowUpSeed, Request


class HostedSearchGateway(SearchGateway):
    """Providers are built on the first search, inside the actor's loop; their keys arrive only
    as ``env`` (the driver's ``assembly.search_env`` output), never from this process's env."""

    def __init__(self, settings: Settings, log: Any, env: Mapping[str, str] | None = None) -> None:
        keys = dict(env or {})

        async def build() -> list[SearchProvider]:
            return await assembly.open_search_providers(settings, keys)

        super().__init__(
            build,
            BreakerConfig.from_settings(settings.search.breaker),
            RetryPolicy.from_settings(settings.search.retry),
            sink=ActorSink(log),
            rate_limits=settings.search.rate_limits,
        )


class HostedResearcher(Researcher):
    def __init__(
        self,
        settings: Settings,
        gateway: Any,
        pool: Any,
        log: Any,
        llm: LLMProvider | None,
        keys: LLMKeys,
        ledger: Any = None,
    ) -> None:
        super().__init__(
            settings,
            RemoteProxy(gateway),
            RemoteProxy(pool),
            ActorSink(log),
            llm or assembly.build_llm_provider(settings, keys, _hook(ledger)),
            assembly.build_fetchers(settings),
        )
        self._peers = (gateway, pool, log)

    async def warm(self) -> int:
        """Ready to take work, with the round trips a first call pays done ahead of need.

        A process's first call to an actor resolves its address and opens a connection (about
        0.1 s each on a loaded two-core box), and the gateway builds its providers on its first
        search. Done here, while the planner works, instead of on every researcher's critical
        path. Returns the process id, as ``pid`` does."""
        gateway, pool, log = self._peers
        await asyncio.gather(gateway.ready.remote(), pool.ready.remote(), log.last_seq.remote())
        return await self.pid()


def _spawn_researcher(*args: Any) -> Any:
    """One researcher actor; the argument order is ``HostedResearcher``'s."""
    return runtime.spawn(HostedResearcher, "researcher", *args)


def _hook(ledger: Any) -> Any:
    """The run-wide ledger as the router's call hook (None when the run has no metered model)."""
    return RemoteProxy(ledger) if ledger is not None else None


class HostedEvaluator(Evaluator):
    """Builds its own model client in its process (a live client does not pickle)."""

    def __init__(
        self, settings: Settings, llm: LLMProvider | None, keys: LLMKeys, ledger: Any = None
    ) -> None:
        super().__init__(llm or assembly.build_llm_provider(settings, keys, _hook(ledger)))


class RaySpawner:
    """Researcher actors on Ray, started ahead of need and reused while healthy.

    Starting a Ray worker process costs about a second on a small machine, so the first wave is
    started with the coordinator (``Crew``) and adopted here, and a researcher that finished
    cleanly takes the next sub-task. One that failed (possibly a dead process) is killed and
    replaced.
    """

    def __init__(
        self,
        settings: Settings,
        gateway: Any,
        pool: Any,
        log: Any,
        llm: LLMProvider | None,
        keys: LLMKeys,
        ledger: Any = None,
    ) -> None:
        self._args = (settings, gateway, pool, log, llm, keys, ledger)
        self._idle: list[RemoteProxy] = []
        self._all: list[RemoteProxy] = []

    def adopt(self, handles: tuple[Any, ...]) -> None:
        """Researchers started ahead of the Coordinator (see ``Crew``) join the warm pool."""
        for handle in handles:
            proxy = RemoteProxy(handle)
            self._all.append(proxy)
            self._idle.append(proxy)

    def _spawn(self) -> RemoteProxy:
        proxy = RemoteProxy(_spawn_researcher(*self._args))
        self._all.append(proxy)
        return proxy

    async def ready(self) -> None:
        await asyncio.gather(*(proxy.warm() for proxy in self._idle))

    def crashed(self, exc: BaseException) -> bool:
        import ray.exceptions

        return isinstance(exc, ray.exceptions.RayActorError | ray.exceptions.ActorUnavailableError)

    def acquire(self) -> ResearcherPort:
        proxy = self._idle.pop(0) if self._idle else self._spawn()
        return proxy

    def release(self, researcher: ResearcherPort, healthy: bool) -> None:
        if not isinstance(researcher, RemoteProxy):
            return
        if healthy:
            self._idle.append(researcher)
        else:
            runtime.kill(researcher.handle)

    def close(self) -> None:
        for proxy in self._all:
            runtime.kill(proxy.handle)
        self._idle.clear()
        self._all.clear()


@dataclass(frozen=True)
class Crew:
    """The run's helper actors. The driver starts them in the same wave as the Coordinator:
    each Ray worker process takes about a second to start on a small machine, and starting them
    only once the Coordinator's own process is up would put two such waves on every run."""

    pool: Any
    gateway: Any
    researchers: tuple[Any, ...]
    ledger: Any = None
    evaluator: Any = None


def start_crew(
    settings: Settings,
    request: Request,
    log: Any,
    llm: LLMProvider | None,
    keys: LLMKeys,
    search_env: Mapping[str, str] | None,
    seed_docs: tuple[FetchedDoc, ...] = (),  # a follow-up's inherited texts: never fetched again
) -> Crew:
    ledger = None
    if llm is None and assembly.needs_ledger(settings):
        ledger = runtime.spawn(
            Ledger,
            "ledger",
            settings.llm.rate_limits,
            settings.llm.max_cost_usd,
            settings.llm.prices,
        )
    pool = runtime.spawn(UrlPool, "url_pool", seed_docs, ActorSink(log))
    gateway = runtime.spawn(HostedSearchGateway, "search_gateway", settings, log, search_env)
    warm = 1 if request.mode == "quick" else settings.deep.max_parallel
    researchers = tuple(
        _spawn_researcher(settings, gateway, pool, log, llm, keys, ledger) for _ in range(warm)
    )
    evaluator = None
    if request.mode == "deep":
        evaluator = runtime.spawn(HostedEvaluator, "evaluator", settings, llm, keys, ledger)
    return Crew(pool, gateway, researchers, ledger, evaluator)


class HostedCoordinator(Coordinator):
    """The run's root actor: drives the pool, the gateway and every researcher of the run."""

    def __init__(
        self,
        settings: Settings,
        request: Request,
        log: Any,
        llm: LLMProvider | None = None,
        resume: dict[str, Any] | None = None,
        keys: LLMKeys | None = None,
        search_env: Mapping[str, str] | None = None,
        crew: Crew | None = None,
        follow_up: FollowUpSeed | None = None,  # without its docs: those seed the UrlPool
    ) -> None:
        keys = keys or LLMKeys()
        crew = crew or start_crew(settings, request, log, llm, keys, search_env)
        spawner = RaySpawner(settings, crew.gateway, crew.pool, log, llm, keys, crew.ledger)
        spawner.adopt(crew.researchers)
        model = llm or assembly.build_llm_provider(settings, keys, _hook(crew.ledger))
        evaluator = RemoteProxy(crew.evaluator) if crew.evaluator is not None else None
        super().__init__(
            settings, request, ActorSink(log), model, spawner, evaluator, resume, follow_up
        )
        self._crew = crew
