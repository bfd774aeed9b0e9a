"""Connect to (or start) Ray, and the one factory that turns plain actor classes into Ray actors.

Actors are plain classes so they can be unit-tested without Ray; only this module applies
``ray.remote``, with resource options decided in one table. Token authentication is decided
explicitly (``ray.auth_mode``), never inherited from whatever process ran on the machine before.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ray

from deepresearch.config.settings import ActorPlacement, RaySettings, Settings
from deepresearch.errors import ClusterError

log = logging.getLogger(__name__)

# Coordination and I/O-bound actors take no CPU so two cores never queue them behind each other.
# Crew actors serve many runs at once; a researcher's concurrency comes from ``ray.crew``.
# Calls whose body may run again (a search, an evaluation, a ledger step) are resubmitted by Ray
# once a dead actor is back; a researcher's sub-task is retried by the coordinator instead.
ACTOR_OPTIONS: dict[str, dict[str, Any]] = {
    "run_host": {"num_cpus": 0, "max_concurrency": 4096},
    "search_gateway": {"num_cpus": 0, "max_concurrency": 1024, "max_task_retries": 3},
    "evaluator": {"num_cpus": 0, "max_concurrency": 256, "max_task_retries": 2},
    "ledger": {"num_cpus": 0, "max_concurrency": 1024, "max_task_retries": 2},
    "researcher": {"num_cpus": 0, "max_concurrency": 16},
}


@dataclass(frozen=True)
class Connection:
    started_here: bool
    address: str


_joined: set[str] = set()  # clusters ``connect`` joined in this process (kept across runs)


class _NoThreadSignalNotice(logging.Filter):
    """Drops Ray's "SIGTERM handler is not set because current thread is not the main thread":
    the service and the MCP server join Ray from a worker thread (their event loop keeps
    answering) and handle SIGTERM themselves, so the notice only alarms their users."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


logging.getLogger("ray._private.worker").addFilter(_NoThreadSignalNotice())


def connect(settings: RaySettings) -> Connection:
    """Start a local Ray sized for a small box (no address), or join one.

    ``auto`` joins a ``ray start --head`` on this machine; ``ray://host:10001`` uses Ray Client.
    A failure to join becomes one ``ClusterError`` line that says whether a token is the cause.
    """
    if ray.is_initialized():  # the running Ray's auth mode is already decided
        return Connection(started_here=False, address="existing")
    set_auth_mode(settings.auth_mode)
    with _keeping_sigterm():
        return _connect(settings)


@contextlib.contextmanager
def _keeping_sigterm() -> Iterator[None]:
    """Keep the process's own SIGTERM handler across ``ray.init``. Ray replaces it with
    ``sys.exit`` and its core worker with a C++ failure handler that dumps stacks ("*** SIGTERM
    received ... PC: @") and exits 1 or 134; the CLI's handler stops a run as Ctrl-C does (exit
    130, the resume line). A process without a handler of its own keeps Ray's."""
    on_main = threading.current_thread() is threading.main_thread()
    own = signal.getsignal(signal.SIGTERM) if on_main else None
    try:
        yield
    finally:
        if callable(own):
            signal.signal(signal.SIGTERM, own)


def _connect(settings: RaySettings) -> Connection:
    common: dict[str, Any] = {
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        "namespace": "deep-research",
    }
    address = settings.address
    if address:
        # Ray Client forwards only what it knows; the namespace is what matters for a joined run.
        kwargs = {"namespace": common["namespace"]} if address.startswith("ray://") else common
        probe(address, settings.connect_timeout_s)
        try:
            _bounded(lambda: ray.init(address=address, **kwargs), settings.connect_timeout_s)
        except TimeoutError:
            raise ClusterError(
                address,
                f"no Ray cluster answered within {settings.connect_timeout_s:g} s (is it a Ray "
                "GCS address? raise ray.connect_timeout_s if the cluster is just slow)",
            ) from None
        except Exception as exc:
            raise ClusterError(address, explain_join_failure(exc, settings.auth_mode)) from None
        _joined.add(address)
        return Connection(started_here=False, address=address)
    try:
        ray.init(
            address="local",  # always a fresh local instance, never a stale one on the machine
            num_cpus=settings.num_cpus,
            include_dashboard=settings.include_dashboard,
            object_store_memory=settings.object_store_memory_mb * 1024 * 1024,
            **common,
        )
    except Exception as exc:
        if "timed out during startup" not in str(exc):
            raise
        raise ClusterError("", START_TIMEOUT) from None
    return Connection(started_here=True, address="local")


# Ray 2.x gives a starting node a fixed 30 s to register; no setting of ours or Ray's raises it,
# so the message names what does help: a lighter start, or one long-lived Ray that runs join.
START_TIMEOUT = (
    "the local Ray did not start within Ray's 30 s limit (the machine is busy or short of "
    "memory): try again, lower ray.num_cpus or ray.object_store_memory_mb, or start Ray once "
    "with `ray start --head` and join it with --address auto (ray.address, "
    "DEEP_RESEARCH_RAY__ADDRESS=auto)"
)


def probe(address: str, timeout_s: float) -> None:
    """Fail in seconds when nothing listens at ``host:port`` (Ray itself retries for minutes)."""
    target = address.removeprefix("ray://")
    if address == "auto" or "://" in target or ":" not in target:
        return  # "auto" is found from this machine's Ray files; a Jobs URL is not joined here
    host, _, port_text = target.rpartition(":")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ClusterError(address, "not a host:port address (e.g. 10.0.0.5:6379 or auto)")
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout_s):
            return
    except TimeoutError:
        reason = f"no answer within {timeout_s:g} s (ray.connect_timeout_s)"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    raise ClusterError(address, f"cannot connect ({reason}): is the Ray head running there?")


def _not_main_thread_note(record: logging.LogRecord) -> bool:
    """Ray's note that it left SIGTERM alone off the main thread: wanted (ours stays), not news."""
    return "SIGTERM handler is not set" not in record.getMessage()


def _bounded(action: Any, timeout_s: float) -> None:
    """Run ``action`` in a daemon thread; ``TimeoutError`` if it has not returned in time."""
    outcome: list[BaseException | None] = []

    def work() -> None:
        try:
            action()
            outcome.append(None)
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    thread = threading.Thread(target=work, name="ray-join", daemon=True)
    worker_log = logging.getLogger("ray._private.worker")
    worker_log.addFilter(_not_main_thread_note)
    try:
        thread.start()
        thread.join(timeout_s)
    finally:
        worker_log.removeFilter(_not_main_thread_note)
    if not outcome:
        raise TimeoutError
    if outcome[0] is not None:
        raise outcome[0]


def set_auth_mode(mode: str) -> None:
    """Make ``mode`` this process's Ray token-auth mode, even after ``ray`` was imported.

    Ray reads ``RAY_AUTH_MODE`` into a cached C++ config (and caches the token it loads), so
    setting the env var alone is ignored once ``ray._raylet`` is loaded: re-read both, as Ray
    itself does when it turns token auth on. Children (job drivers, workers) inherit the env var.
    """
    os.environ["RAY_AUTH_MODE"] = mode
    raylet: Any = importlib.import_module("ray._raylet")  # compiled, without type stubs
    modes = raylet.AuthenticationMode
    wanted = modes.TOKEN if mode == "token" else modes.DISABLED
    # Re-reading the config also drops any _system_config, so only when the mode must change.
    if raylet.get_authentication_mode() != wanted:
        raylet.Config.initialize("")
        raylet.AuthenticationTokenLoader.instance().reset_cache()


_AUTH_WORDS = ("authentication", "auth token", "unauthenticated", "unauthorized", "401", "403")


def explain_join_failure(exc: BaseException, auth_mode: str) -> str:
    """One line for a failed join; names the token setting when authentication is the cause."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if any(word in text.lower() for word in _AUTH_WORDS):
        if auth_mode != "token":
            return (
                "the cluster requires token authentication: pass --auth-mode token (or set "
                "ray.auth_mode: token / DEEP_RESEARCH_RAY__AUTH_MODE=token) and provide the "
                "cluster's token in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token"
            )
        return (
            "token authentication failed: the token in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
            "~/.ray/auth_token is missing or does not match the cluster's"
        )
    first = text if len(text) <= 300 else text[:299] + "…"
    return f"cannot join ({first})"


def disconnect(connection: Connection) -> None:
    if connection.started_here and ray.is_initialized():
        ray.shutdown()


def leave() -> None:
    """End the connection ``connect`` made to a cluster, now (a command about to exit).

    ``disconnect`` keeps a joined cluster's connection for the process's next run; left to
    Ray's exit hook, it is ended only after a half-second sleep meant for driver logs we never
    forward (``log_to_driver=False``): every ``run --address`` paid it. A Ray this module did
    not join (a test's, an embedding program's) is not ours to end."""
    if _joined and ray.is_initialized():
        ray.shutdown()
    _joined.clear()


def placement(settings: Settings, kind: str) -> dict[str, Any]:
    """Ray options from ``settings.ray.<kind>`` (CPUs, custom resources, node labels), if any."""
    config = getattr(settings.ray, kind, None)
    if not isinstance(config, ActorPlacement):
        return {}
    options: dict[str, Any] = {}
    if config.num_cpus is not None:
        options["num_cpus"] = config.num_cpus
    if config.resources:
        options["resources"] = dict(config.resources)
    if config.label_selector:
        options["label_selector"] = dict(config.label_selector)
    return options


def spawn(cls: type[Any], kind: str, *args: Any, **overrides: Any) -> Any:
    """Create ``cls`` as a Ray actor with the options for ``kind`` (see ``ACTOR_OPTIONS``).

    An actor built from ``Settings`` also gets that settings' placement for ``kind``, so the
    config alone decides which nodes researchers land on; explicit ``overrides`` win."""
    settings = next((a for a in args if isinstance(a, Settings)), None)
    placed = placement(settings, kind) if settings is not None else {}
    options = {**ACTOR_OPTIONS[kind], **placed, **overrides}
    return ray.remote(**options)(cls).remote(*args)


def named(
    cls: type[Any], kind: str, name: str, settings: Settings, *, detached: bool, **overrides: Any
) -> Any:
    """The actor called ``name`` in this job's namespace, created (with ``spawn``'s options) only
    if it does not exist yet: Ray's ``get_if_exists`` settles a race between two drivers. A
    detached actor outlives the driver that created it; Ray restarts it (``max_restarts``)."""
    options = {
        **ACTOR_OPTIONS[kind],
        **placement(settings, kind),
        "max_restarts": settings.ray.crew.max_restarts,
        **overrides,
        "name": name,
        "get_if_exists": True,
    }
    if detached:
        options["lifetime"] = "detached"
    return ray.remote(**options)(cls).remote()


def kill(handle: Any) -> None:
    try:
        ray.kill(handle, no_restart=True)
    except Exception as exc:  # an actor that already died is fine to forget
        log.debug("kill failed: %s", exc)


def session() -> str:
    """This process's Ray session (job and node ids): handles from another session are stale."""
    if not ray.is_initialized():
        return ""
    context = ray.get_runtime_context()
    return f"{context.get_job_id()}/{node_id()}"


def node_id() -> str:
    """The Ray node this process runs on, or "" outside Ray (in-process runs and unit tests)."""
    if not ray.is_initialized():
        return ""
    try:
        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # a driver without a worker context
        return ""
