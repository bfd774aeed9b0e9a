"""Run the actor classes in one process, without Ray: for unit tests and for measuring Ray's cost.

The same Coordinator and Researcher code runs here as on Ray; only the spawner differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from deepresearch.actors.researcher import Researcher
from deepresearch.config.settings import Settings
from deepresearch.per_run.event_log import EventSink
from deepresearch.per_run.ports import GatewayPort, PoolPort, ResearcherPort
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.providers.search.base import Fetcher


class LocalSpawner:
    def __init__(
        self,
        settings: Settings,
        gateway: GatewayPort,
        pool: PoolPort,
        sink: EventSink,
        llm: LLMProvider,
        fetchers: Sequence[Fetcher],
    ) -> None:
        self._args = (settings, gateway, pool, sink, llm, list(fetchers))
        self.spawned: list[Researcher] = []

    def acquire(self) -> ResearcherPort:
        settings, gateway, pool, sink, llm, fetchers = self._args
        r = Researcher(settings, gateway, pool, sink, llm, fetchers)
        self.spawned.append(r)
        return r

    def release(self, researcher: ResearcherPort, healthy: bool) -> None:
        """Nothing to free in-process: a fresh object per sub-task keeps tests inspectable."""

    def close(self) -> None:
        """Nothing to stop in-process."""

    def crashed(self, exc: BaseException) -> bool:
        """In-process there is no process to lose."""
        return False
