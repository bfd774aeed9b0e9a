"""Connect to (or start) Ray, and the one factory that turns plain actor classes into Ray actors.

Actors are plain classes so they can be unit-tested without Ray; only this module applies
``ray.remote``, with resource options decided in one table. Token authentication is decided
explicitly (``ray.auth_mode``), never inherited from whatever process ran on the machine before.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import ray

from deepresearch.config.settings import RaySettings

log = logging.getLogger(__name__)

# Coordination and I/O-bound actors take no CPU so two cores never queue them behind each other.
ACTOR_OPTIONS: dict[str, dict[str, Any]] = {
    "coordinator": {"num_cpus": 0, "max_concurrency": 64},
    "event_log": {"num_cpus": 0, "max_concurrency": 256},
    "url_pool": {"num_cpus": 0, "max_concurrency": 256},
    "search_gateway": {"num_cpus": 0, "max_concurrency": 64},
    "evaluator": {"num_cpus": 0},
    "researcher": {"num_cpus": 0, "max_concurrency": 8},
}


@dataclass(frozen=True)
class Connection:
    started_here: bool
    address: str


def connect(settings: RaySettings) -> Connection:
    """Start a local Ray with limits sized for a small box, or join ``settings.address``."""
    os.environ["RAY_AUTH_MODE"] = settings.auth_mode
    if ray.is_initialized():
        return Connection(started_here=False, address="existing")
    common: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "namespace": "deep-research",
    }
    if settings.address:
        ray.init(address=settings.address, **common)
        return Connection(started_here=False, address=settings.address)
    ray.init(
        address="local",  # always a fresh local instance, never a stale one left on the machine
        num_cpus=settings.num_cpus,
        include_dashboard=settings.include_dashboard,
        object_store_memory=settings.object_store_memory_mb * 1024 * 1024,
        **common,
    )
    return Connection(started_here=True, address="local")


def disconnect(connection: Connection) -> None:
    if connection.started_here and ray.is_initialized():
        ray.shutdown()


def spawn(cls: type[Any], kind: str, *args: Any, **overrides: Any) -> Any:
    """Create ``cls`` as a Ray actor with the options for ``kind`` (see ``ACTOR_OPTIONS``)."""
    options = {**ACTOR_OPTIONS[kind], **overrides}
    return ray.remote(**options)(cls).remote(*args)


def kill(handle: Any) -> None:
    try:
        ray.kill(handle, no_restart=True)
    except Exception as exc:  # an actor that already died is fine to forget
        log.debug("kill failed: %s", exc)
