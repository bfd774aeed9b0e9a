"""The research crew on a Ray cluster: long-lived named actors that every run shares.

Starting an actor process costs about a second on a small machine, and a run used to start
eight of them. The crew (run hosts, researchers, the search gateway, and the evaluator and
ledger when a run needs them) is created once per cluster and namespace under names derived
from ``ray.crew.name`` and the package version; later runs, from any driver, find it with Ray's
``get_if_exists``. When this process joined a cluster (``--address``, ``serve``, ``mcp``, jobs)
the crew is detached and outlives the driver; a local Ray started for one ``run`` takes it down
with it. Ray restarts a crew actor that dies (``ray.crew.max_restarts``); the coordinator
retries the sub-tasks it was serving once, as for any crashed researcher.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from deepresearch import __version__, runtime
from deepresearch.actors.hosted import crew_member
from deepresearch.config.settings import Settings


def actor_name(settings: Settings, kind: str, index: int | None = None) -> str:
    base = f"{settings.ray.crew.name}-{__version__}-{kind}"
    return base if index is None else f"{base}-{index}"


@dataclass(frozen=True)
class CrewHandles:
    hosts: tuple[Any, ...]
    researchers: tuple[Any, ...]
    gateway: Any
    evaluator: Any = None
    ledger: Any = None

    def host_for(self, run_id: str) -> Any:
        """A run's host, fixed by its id (stable across drivers, e.g. a resume)."""
        return self.hosts[zlib.crc32(run_id.encode()) % len(self.hosts)]


def join(
    settings: Settings, *, detached: bool, evaluator: bool = False, ledger: bool = False
) -> CrewHandles:
    """The crew's handles, creating whichever members do not exist yet (Ray must be connected).
    The evaluator and ledger are only created for the first run that needs them."""
    size = settings.ray.crew

    def get(kind: str, index: int | None = None, **overrides: Any) -> Any:
        name = actor_name(settings, kind, index)
        return runtime.named(
            crew_member(kind), kind, name, settings, detached=detached, **overrides
        )

    here: dict[str, Any] = {}
    node = runtime.node_id()
    if node:  # run hosts write the runs' files: on the node of the driver that made them
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=True)
    return CrewHandles(
        hosts=tuple(get("run_host", i, **here) for i in range(size.hosts)),
        researchers=tuple(
            get("researcher", i, max_concurrency=size.concurrency) for i in range(size.researchers)
        ),
        gateway=get("search_gateway"),
        evaluator=get("evaluator") if evaluator else None,
        ledger=get("ledger") if ledger else None,
    )
