"""``deep-research serve``: the research service (HTTP API + web page) on this machine's Ray.

Refuses to listen beyond loopback without ``DEEP_RESEARCH_API_TOKEN``: anyone who can reach the
port could otherwise start runs (spending provider money) and read every report. Connections are
capped and timed (``service.max_connections``, ``service.request_timeout_s``) so slow or idle
clients cannot use up the file descriptors that runs need.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deepresearch.commands.options import RayAddress, config_option, folder

if TYPE_CHECKING:  # pydantic's models, the service and Ray load when `serve` runs, not for --help
    from pydantic import SecretStr

    from deepresearch.config.settings import Settings

TOKEN_ENV = "DEEP_RESEARCH_API_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


async def serve(
    settings: Settings,
    host: str,
    port: int,
    token: SecretStr | None,
    on_listening: Any = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Join Ray, listen, and serve until ``stop`` is set (or SIGINT/SIGTERM)."""
    from aiohttp import web

    from deepresearch.actors import crew
    from deepresearch.cluster import runtime
    from deepresearch.service.app import ACCESS_LOGGER, create_app
    from deepresearch.service.connections import (
        ConnectionGate,
        calm_accept_errors,
        quiet_repeats,
        restore_handler,
        unquiet,
    )

    connection = await asyncio.to_thread(runtime.connect, settings.ray)
    await asyncio.to_thread(crew.warm, settings)  # before listening: no request waits for it
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Outside the main thread (tests) this fails and the caller sets ``stop`` instead.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
    limits = settings.service
    runner = web.AppRunner(
        create_app(settings, token, hosts=(host,)),
        access_log_class=ACCESS_LOGGER,
        keepalive_timeout=limits.request_timeout_s,
    )
    await runner.setup()
    repeats = quiet_repeats()
    handler = calm_accept_errors(loop)
    server: asyncio.Server | None = None
    try:
        assert runner.server is not None
        gate = ConnectionGate(runner.server, limits.max_connections, limits.request_timeout_s)
        server = await loop.create_server(gate, host, port, reuse_address=True)
        bound = server.sockets[0].getsockname()
        url = f"http://{host}:{bound[1]}"
        (on_listening or (lambda u: click.echo(f"deep-research: serving on {u}", err=True)))(url)
        await stop.wait()
    finally:
        if server is not None:
            server.close()
        await runner.cleanup()  # stops running runs first: checkpoints kept, status interrupted
        unquiet(repeats)
        restore_handler(loop, handler)
        runtime.disconnect(connection)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port (0: any free).",
)
@config_option()
@click.option(
    "--corpus",
    type=folder(),
    default=None,
    help="Default corpus folder for runs that do not name one.",
)
@click.option(
    "--corpus-root",
    "corpus_roots",
    multiple=True,
    type=folder(),
    help="A folder under which clients may name a corpus (repeatable; none: clients may not).",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    help="A Host name to answer besides loopback and --host (repeatable; e.g. a proxy's name).",
)
@click.option("--max-runs", type=int, default=None, help="Runs at once; more get HTTP 429.")
@click.option(
    "--address",
    type=RayAddress(),
    default=None,
    help="Ray address to join (default: start a local Ray).",
)
def serve_cmd(
    host: str,
    port: int,
    config_file: Path | None,
    corpus: Path | None,
    corpus_roots: tuple[Path, ...],
    allowed_hosts: tuple[str, ...],
    max_runs: int | None,
    address: str | None,
) -> None:
    """Serve the research API and web page (bearer token from DEEP_RESEARCH_API_TOKEN)."""
    from pydantic import SecretStr

    from deepresearch.config.settings import load_settings, overrides_from_flags

    secret = os.environ.get(TOKEN_ENV, "").strip()
    token = SecretStr(secret) if secret else None
    if token is None and not is_loopback(host):
        raise click.UsageError(
            f"refusing to listen on {host or 'all addresses'} without {TOKEN_ENV} set "
            "(anyone could start runs)"
        )
    flags = {
        "corpus.path": corpus,
        "service.corpus_roots": corpus_roots or None,
        "service.allowed_hosts": allowed_hosts or None,
        "service.max_runs": max_runs,
        "ray.address": address,
    }
    settings = load_settings(config_file, overrides_from_flags(flags))
    if host in ("0.0.0.0", "::", "") and not settings.service.allowed_hosts:
        click.echo(
            f"deep-research: listening on {host or 'all addresses'}, but only loopback names are "
            "answered; add the names clients use with --allow-host (service.allowed_hosts)",
            err=True,
        )
    asyncio.run(serve(settings, host, port, token))


def register(group: click.Group) -> None:
    if "serve" not in group.commands:
        group.add_command(serve_cmd)
