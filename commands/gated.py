"""How every command answers a query the intent gate stopped (``run``, ``plan``, ``job-run``):
a greeting answered (exit 0), a harmful request refused (3), a vague query questioned (2)."""

from __future__ import annotations

import click

from deepresearch.errors import QueryGated
from deepresearch.text.terminal import printable


def answer_gated(gated: QueryGated, query: str, as_json: bool) -> None:
    """Print the gate's reply (or its JSON summary) and exit with its code: no run started."""
    from deepresearch.run.intent_gate import exit_code, gate_summary  # not at --help's start

    if as_json:
        click.echo(gate_summary(gated, query).model_dump_json())
    if gated.outcome == "chitchat":
        if not as_json:
            click.echo(gated.reply)
        raise SystemExit(0)
    click.echo(printable(f"deep-research: {gated.reply}"), err=True)
    raise SystemExit(exit_code(gated))
