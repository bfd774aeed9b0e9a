"""README stays a map: short, in short paragraphs, linking into docs/ pages whose links resolve, and
naming every command ``deep-research --help`` lists. Detail belongs in docs/, not in the README."""

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

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_LINES = 300
MAX_WORDS = 180
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows outside code fences, each as one string."""
    blocks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", _prose(text)):
        lines = paragraph.strip("\n").splitlines()
        if lines and lines[0].startswith("|"):
            blocks.extend(lines)
            continue
        blocks.extend(re.split(r"\n(?=(?:- |\d+\. ))", paragraph))
    return [b for b in blocks if b.strip()]


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", _prose(page.read_text("utf-8")), re.M)
    return {_slug(h) for h in headings}


def test_readme_is_short() -> None:
    lines = README.read_text("utf-8").count("\n")
    assert lines <= MAX_LINES, f"README has {lines} lines (at most {MAX_LINES})"


def test_no_paragraph_or_list_item_runs_long() -> None:
    for page in (README, *DOCS):
        for block in _blocks(page.read_text("utf-8")):
            words = len(block.split())
            assert words <= MAX_WORDS, f"{page.name}: {words} words in {block[:80]!r}"


def test_every_relative_link_resolves() -> None:
    assert DOCS, "docs/ has no pages"
    for page in (README, *DOCS):
        for target in LINK.findall(_prose(page.read_text("utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.exists(), f"{page.name}: {target} does not exist"
            if anchor and resolved.suffix == ".md":
                assert anchor in _anchors(resolved), f"{page.name}: no heading for {target}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {
        (ROOT / target.partition("#")[0]).resolve()
        for target in LINK.findall(_prose(README.read_text("utf-8")))
    }
    missing = [page.name for page in DOCS if page.resolve() not in linked]
    assert not missing, f"README links no docs page {missing}"


def test_every_command_help_lists_is_in_the_commands_section() -> None:
    for module in (cli_runs, cli_plan, cli_jobs, cli_mcp, cli_serve):
        module.register(cli.cli)  # as main() does before it parses
    group = cli.cli
    with click.Context(group) as ctx:
        listed = [
            name
            for name in group.list_commands(ctx)
            if (command := group.get_command(ctx, name)) is not None and not command.hidden
        ]
    assert "run" in listed and "submit" in listed
    text = README.read_text("utf-8")
    section = re.search(r"^## Commands\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README has no Commands section"
    missing = [n for n in listed if not re.search(rf"deep-research {n}\b", section.group(1))]
    assert not missing, f"README's Commands does not name {missing}"
