"""Actor classes as Ray hosts them: each builds its own providers from settings in its process.

These stay plain classes (``runtime.spawn`` applies ``ray.remote``); they only add the wiring a
Ray process needs, so the policy-carrying base classes remain testable with in-process fakes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepresearch import assembly, runtime
from deepresearch.actors.coordinator import Coordinator, ResearcherPort
from deepresearch.actors.event_log import ActorSink
from deepresearch.actors.ports import RemoteProxy
from deepresearch.actors.researcher import Researcher
from deepresearch.actors.search_gateway import SearchGateway
from deepresearch.actors.url_pool import UrlPool
from deepresearch.config.settings import Settings
from deepresearch.policies.breaker import BreakerConfig
from deepresearch.policies.retry import RetryPolicy
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import Request, SubTask


class HostedSearchGateway(SearchGateway):
    def __init__(self, settings: Settings, log: Any) -> None:
        super().__init__(
            assembly.build_search_providers(settings),
            BreakerConfig.from_settings(settings.search.breaker),
            RetryPolicy.from_settings(settings.search.retry),
            sink=ActorSink(log),
        )


class HostedResearcher(Researcher):
    def __init__(
        self,
        settings: Settings,
        subtask: SubTask,
        gateway: Any,
        pool: Any,
        log: Any,
        llm: LLMProvider | None,
        notes: Sequence[str],
    ) -> None:
        super().__init__(
            settings,
            subtask,
            RemoteProxy(gateway),
            RemoteProxy(pool),
            ActorSink(log),
            llm or assembly.build_llm_provider(settings),
            assembly.build_fetchers(settings),
            notes,
        )


class RaySpawner:
    """Creates researcher actors on Ray and kills them when they are done."""

    def __init__(
        self, settings: Settings, gateway: Any, pool: Any, log: Any, llm: LLMProvider | None
    ) -> None:
        self._args = (settings, gateway, pool, log, llm)
        self._settings = settings

    def researcher(self, subtask: SubTask, notes: Sequence[str]) -> ResearcherPort:
        settings, gateway, pool, log, llm = self._args
        handle = runtime.spawn(
            HostedResearcher, "researcher", settings, subtask, gateway, pool, log, llm, list(notes)
        )
        return RemoteProxy(handle)  # type: ignore[return-value,unused-ignore]

    def release(self, researcher: ResearcherPort) -> None:
        if isinstance(researcher, RemoteProxy):
            runtime.kill(researcher.handle)


class HostedCoordinator(Coordinator):
    """The run's root actor: owns the pool, the gateway and every researcher it spawns."""

    def __init__(
        self, settings: Settings, request: Request, log: Any, llm: LLMProvider | None = None
    ) -> None:
        pool = runtime.spawn(UrlPool, "url_pool")
        gateway = runtime.spawn(HostedSearchGateway, "search_gateway", settings, log)
        super().__init__(
            settings,
            request,
            ActorSink(log),
            llm or assembly.build_llm_provider(settings),
            RaySpawner(settings, gateway, pool, log, llm),
        )
        self._children = (pool, gateway)
