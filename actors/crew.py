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

import contextlib
from typing import Any

from deepresearch import __version__
from deepresearch.actors.members import crew_member
from deepresearch.cluster import runtime
from deepresearch.config.settings import Settings
from deepresearch.per_run.run_context import CrewHandles


def actor_name(settings: Settings, kind: str, index: int | None = None) -> str:
    base = f"{settings.ray.crew.name}-{__version__}-{kind}"
    return base if index is None else f"{base}-{index}"


_joined: dict[tuple[object, ...], CrewHandles] = {}  # per cluster session, crew and members


def forget() -> None:
    """Drop the handles this process keeps: the next ``join`` asks the cluster again (after a
    failed run, in case a member is gone for good)."""
    _joined.clear()


def join(
    settings: Settings, *, detached: bool, evaluator: bool = False, ledger: bool = False
) -> CrewHandles:
    """The crew's handles, creating whichever members do not exist yet (Ray must be connected).
    The evaluator and ledger are only created for the first run that needs them. A process that
    joined before (a service, for every run) reuses its handles: a restarted member keeps its
    handle, and asking the cluster costs a round trip per member and run."""
    size = settings.ray.crew
    key: tuple[object, ...] = (runtime.session(), actor_name(settings, ""), size.hosts)
    key += (size.researchers, detached, evaluator, ledger)
    if key not in _joined:
        _joined[key] = _join(settings, detached=detached, evaluator=evaluator, ledger=ledger)
    return _joined[key]


def warm(settings: Settings) -> None:
    """Create the crew's processes now and wait until they answer, with the corpus index of
    ``settings`` open in those that search or read it, and in this process (``driver.prepare``
    opens it for every run): a service does this before it listens, so no request pays for
    starting them or loading the index (nothing to do without Ray)."""
    import ray

    from deepresearch.errors import DeepResearchError
    from deepresearch.providers.assembly import from_settings as assembly
    from deepresearch.providers.search import local

    if not ray.is_initialized():
        return
    detached = True if settings.ray.crew.detached is None else settings.ray.crew.detached
    handles = join(settings, detached=detached, evaluator=True)
    opened = assembly.run_settings(settings)
    carried = (*handles.hosts, handles.gateway)  # a run's context carries these: decoded now
    ready = [m.ready.remote(opened, carried) for m in (*handles.researchers, handles.gateway)]
    ready.append(handles.evaluator.ready.remote(carried))
    spec = (*handles.researchers, handles.evaluator, handles.gateway)  # and a run's spec these
    ready += [h.ready.remote(spec) for h in handles.hosts]
    if opened.corpus.path is not None:  # not built yet: the first run builds it
        with contextlib.suppress(DeepResearchError):
            local.opened_index(opened)
    ray.get(ready)


def _join(settings: Settings, *, detached: bool, evaluator: bool, ledger: bool) -> CrewHandles:
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
