"""``deep-research runs list|show|prune`` and ``attach``: past and running runs, from their files."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deepresearch.commands.options import RunId, config_option
from deepresearch.errors import InputError
from deepresearch.text.terminal import printable

if TYPE_CHECKING:  # run files and settings load inside the commands: --help answers at once
    from deepresearch.schemas import Event


def _state_dir(config_file: Path | None) -> Path:
    from deepresearch.config.settings import load_settings

    return load_settings(config_file).resolved_state_dir()


_config = config_option("YAML settings file (for the state directory).")


@click.group("runs")
def runs_group() -> None:
    """Past and running runs: their status, report paths and events."""


@runs_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@_config
def list_cmd(as_json: bool, config_file: Path | None) -> None:
    from deepresearch.storage import runs

    rows = runs.list_runs(_state_dir(config_file))
    for row in rows:
        if as_json:
            click.echo(json.dumps(row.__dict__))
            continue
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.started))
        query = printable(row.query)  # a "\r" in a query must not rewrite the line
        query = query if len(query) <= 50 else query[:49] + "…"
        click.echo(
            printable(
                f"{row.run_id}  {started}  {row.mode:<5}  {row.status:<11}  {query}  "
                f"{row.report_path or '-'}"
            )
        )
    if not rows and not as_json:
        click.echo("no runs yet", err=True)


@runs_group.command("show")
@click.argument("run_id", type=RunId())
@click.option(
    "--tail",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many of the last events to show.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on one line.")
@_config
def show_cmd(run_id: str, tail: int, as_json: bool, config_file: Path | None) -> None:
    """A run's status, summary and last events, as JSON (indented for reading; ``--json``: one
    line, like the other commands' ``--json``)."""
    from deepresearch.storage import runs

    shown = runs.show(_state_dir(config_file), run_id, tail)
    click.echo(json.dumps(shown) if as_json else json.dumps(shown, indent=2))


@runs_group.command("prune")
@click.option(
    "--older-than", required=True, help="Age: a number and s, min, h, d or w (90min, 12h, 30d)."
)
@click.option("--dry-run", is_flag=True, help="List the runs that would go; delete nothing.")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@_config
def prune_cmd(older_than: str, dry_run: bool, yes: bool, config_file: Path | None) -> None:
    """Delete finished runs older than the given age (running runs are kept).

    On a terminal the count is shown and confirmation asked first; off a terminal (scripts,
    cron) nothing is deleted without --yes: the count is printed and the exit code is 2.
    --dry-run lists the runs that would go.
    """
    from deepresearch.storage import runs

    state_dir = _state_dir(config_file)
    rows = runs.prunable(state_dir, runs.parse_age(older_than), time.time())
    if not rows:
        click.echo(f"no finished runs older than {older_than}", err=True)
        return
    count = f"{len(rows)} finished run(s) older than {older_than}"
    if dry_run:
        click.echo(f"would remove {count}:", err=True)
        for row in rows:
            click.echo(row.run_id)
        return
    if not yes:
        if not _interactive():
            raise InputError(f"{count} would be removed; pass --yes to delete them off a terminal")
        if not click.confirm(f"Remove {count}?", default=False, err=True):
            click.echo("nothing removed", err=True)
            return
    runs.remove(state_dir, [row.run_id for row in rows])
    click.echo(f"removed {len(rows)} run(s)", err=True)
    for row in rows:
        click.echo(row.run_id)


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _print_event(event: Event) -> None:
    payload = printable(json.dumps(event.payload, ensure_ascii=False))  # C1 and bidi stay raw
    if len(payload) > 160:
        payload = payload[:159] + "…"
    click.echo(f"{event.seq:>5}  {event.type:<20} {payload}")


@click.command("attach")
@click.argument("run_id", type=RunId())
@_config
def attach_cmd(run_id: str, config_file: Path | None) -> None:
    """Follow a run's events from another terminal until it ends."""
    from deepresearch.storage import runs

    status = runs.follow(_state_dir(config_file), run_id, _print_event)
    click.echo(f"run {run_id}: {status}", err=True)


def register(group: click.Group) -> None:
    if "runs" not in group.commands:
        group.add_command(runs_group)
        group.add_command(attach_cmd)
