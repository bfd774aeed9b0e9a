"""README's Commands block and docs/http-api.md match the code: every command and flag it lists
exists, every one that exists is listed, and every ``POST /runs`` field and route is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click

from deepresearch import cli
from deepresearch.commands import jobs as cli_jobs
from deepresearch.commands import mcp as cli_mcp
from deepresearch.commands import plan as cli_plan
from deepresearch.commands import runs as cli_runs
from deepresearch.commands import serve as cli_serve
from deepresearch.service.submission import RunCreate

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
HTTP_API = (ROOT / "docs" / "http-api.md").read_text("utf-8")
PAGES = [README, *(p.read_text("utf-8") for p in sorted((ROOT / "docs").glob("*.md")))]


def _section(heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, f"README has no section {heading!r}"
    return match.group(1)


def _commands() -> dict[str, click.Command]:
    """Every visible command by its path ("run", "jobs report"), as ``main`` registers them."""
    for module in (cli_runs, cli_plan, cli_jobs, cli_mcp, cli_serve):
        module.register(cli.cli)
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name, command in group.commands.items():
            if command.hidden:
                continue
            path = f"{prefix} {name}".strip()
            if isinstance(command, click.Group):
                walk(command, path)
            else:
                found[path] = command

    walk(cli.cli, "")
    return found


def _flags(command: click.Command) -> set[str]:
    return {
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in param.opts
        if opt.startswith("--") and opt != "--help"
    }


def test_every_command_and_flag_is_listed_and_every_listed_one_exists() -> None:
    block = _section("Commands").split("```")[1]
    commands = _commands()
    existing = set().union(*(_flags(c) for c in commands.values())) | {"--version", "--help"}
    listed = set(re.findall(r"(--[a-z][a-z-]*)", block))
    assert listed - existing == set(), "README lists flags that do not exist"
    assert existing - listed == set(), "flags missing from README's Commands"
    for path in commands:
        group, _, sub = path.partition(" ")
        pattern = rf"deep-research {group}\b" + (
            rf"[^\n]*(?:\n\s+\|[^\n]*)*\b{sub}\b" if sub else ""
        )
        assert re.search(pattern, block), f"README's Commands does not list {path!r}"


def test_the_http_api_page_documents_every_route_and_field() -> None:
    api = HTTP_API
    for route in (
        "POST /runs",
        "GET /runs`",
        "GET /runs/{id}`",
        "GET /runs/{id}/events",
        "GET /runs/{id}/report",
        "DELETE /runs/{id}",
    ):
        assert route in api, route
    for field in RunCreate.model_fields:
        assert f"`{field}`" in api, field
    for code in ("202", "401", "404", "409", "410", "422", "429"):
        assert code in api, code
    assert "`end`" in api and "Last-Event-ID" in api


def test_no_paragraph_or_table_row_is_said_twice_or_cut_off() -> None:
    """Across README and the docs pages together: each thing is written once."""
    prose = re.sub(r"```.*?```", "", "\n\n".join(PAGES), flags=re.S)
    blocks = [" ".join(b.split()) for b in re.split(r"\n\s*\n|\n(?=- )", prose) if b.strip()]
    assert len(blocks) == len(set(blocks)), "a paragraph or list item appears twice"
    rows = [line.split("|")[1].strip() for line in prose.splitlines() if line.startswith("| `")]
    assert len(rows) == len(set(rows)), "a table row appears twice"
    for block in blocks:
        if block[:1] in "-0123456789" or block[:1].isalpha():
            assert not re.search(r"\b(?:the|to|a|of|and|or)$", block), f"cut off: {block[-60:]}"
