"""The ``deep-research`` command.

Exit codes: 0 report written; 2 usage, config or bad input (one line, never a traceback); 3 the run
ended honestly without an answer; 130 interrupted. Set ``DEEP_RESEARCH_DEBUG=1`` to see tracebacks
of unexpected errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from deepresearch import __version__
from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.errors import DeepResearchError

EXIT_OK, EXIT_USAGE, EXIT_NO_ANSWER, EXIT_INTERRUPTED = 0, 2, 3, 130


def _fail(message: str, code: int) -> None:
    click.echo(f"deep-research: error: {message}", err=True)
    raise SystemExit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="deep-research")
def cli() -> None:
    """A deep-research agent on Ray: plans, searches, reads sources and writes a cited report."""


@cli.command()
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["quick", "deep"]),
    default=None,
    help="quick: one researcher; deep: planner, parallel researchers.",
)
@click.option(
    "--corpus",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder of .pdf/.md/.txt/.html documents to search (local provider).",
)
@click.option(
    "--output-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Where the report file goes.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="YAML settings file.",
)
@click.option("--llm", default=None, help="LLM provider name (default: extractive, no model).")
@click.option("--model", default=None, help="Model name for the LLM provider.")
@click.option("--search", default=None, help="Search provider or comma-separated fallback chain.")
@click.option(
    "--code",
    "code_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Code folder searched by the grep provider (--search grep).",
)
@click.option("--max-parallel", type=int, default=None, help="Deep mode: researchers at once.")
@click.option("--address", default=None, help="Ray address to join (default: start a local Ray).")
def run(
    query: str,
    mode: str | None,
    corpus: Path | None,
    output_dir: Path | None,
    as_json: bool,
    config_file: Path | None,
    llm: str | None,
    model: str | None,
    search: str | None,
    code_dir: Path | None,
    max_parallel: int | None,
    address: str | None,
) -> None:
    """Research QUERY and write a cited Markdown report."""
    from deepresearch import driver
    from deepresearch.console import ProgressDisplay

    flags: dict[str, Any] = {
        "run.mode": mode,
        "corpus.path": corpus,
        "run.output_dir": output_dir,
        "llm.provider": llm,
        "llm.model": model,
        "search.providers": search,
        "search.code_dir": code_dir,
        "deep.max_parallel": max_parallel,
        "ray.address": address,
    }
    settings = load_settings(config_file, overrides_from_flags(flags))
    prep = driver.prepare(query, settings.run.mode, settings)
    with ProgressDisplay() as display:
        summary = driver.execute(prep, display.update)
    if as_json:
        click.echo(summary.model_dump_json())
    else:
        click.echo(f"Report: {summary.report_path}", err=not sys.stdout.isatty())
        if summary.report_path:
            click.echo(summary.report_path)
    if summary.status == "no_answer":
        click.echo(f"deep-research: no answer: {summary.reason}", err=True)
        raise SystemExit(EXIT_NO_ANSWER)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line on stderr and an exit code."""
    debug = os.environ.get("DEEP_RESEARCH_DEBUG") == "1"
    try:
        cli.main(args=argv, prog_name="deep-research", standalone_mode=False)
    except click.exceptions.Abort:
        _fail("interrupted", EXIT_INTERRUPTED)
    except click.ClickException as exc:
        _fail(exc.format_message(), EXIT_USAGE)
    except DeepResearchError as exc:
        if debug:
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", EXIT_INTERRUPTED)
    except Exception as exc:
        if debug:
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (set DEEP_RESEARCH_DEBUG=1 for details)",
            1,
        )
