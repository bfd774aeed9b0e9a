"""``deep-research mcp``: serve the research run as an MCP tool over stdio."""

from __future__ import annotations

from pathlib import Path

import click

from deepresearch.commands.options import RayAddress, config_option, folder


@click.command("mcp")
@config_option()
@click.option(
    "--address", type=RayAddress(), default=None, help="Ray address to join (default: a local Ray)."
)
@click.option("--output-dir", type=click.Path(path_type=Path), default=None)
@click.option(
    "--corpus-root",
    "corpus_roots",
    multiple=True,
    type=folder(),
    help="A folder under which the tool's corpus argument may lie (repeatable; none: refused).",
)
def mcp_cmd(
    config_file: Path | None,
    address: str | None,
    output_dir: Path | None,
    corpus_roots: tuple[Path, ...],
) -> None:
    """Serve a `research` tool over stdio for MCP clients (coding agents, chat apps)."""
    from deepresearch.config.settings import load_settings, overrides_from_flags
    from deepresearch.service.mcp import serve_stdio

    flags = {
        "ray.address": address,
        "run.output_dir": output_dir,
        "service.corpus_roots": corpus_roots or None,
    }
    serve_stdio(load_settings(config_file, overrides_from_flags(flags)))


def register(group: click.Group) -> None:
    if "mcp" not in group.commands:
        group.add_command(mcp_cmd)
