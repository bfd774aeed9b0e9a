"""The ``deep-research`` command.

Exit codes: 0 report written; 2 usage, config or bad input (one line, never a traceback); 3 the run
ended honestly without an answer; 130 interrupted. Set ``DEEP_RESEARCH_DEBUG=1`` to see tracebacks
of unexpected errors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deepresearch import STARTED_AT, __version__
from deepresearch.commands import plan as cli_plan
from deepresearch.commands.gated import answer_gated
from deepresearch.commands.options import RayAddress, RunId, choice, config_option, folder
from deepresearch.errors import DeepResearchError, QueryGated, RunInterrupted
from deepresearch.text.terminal import printable

# Ray, the providers and the text machinery are imported inside the commands that use them:
# --help, --version and a usage error answer at once (tests/unit/test_cli_imports.py).
if TYPE_CHECKING:
    from deepresearch.run import driver
    from deepresearch.schemas import RunSummary

EXIT_OK, EXIT_USAGE, EXIT_NO_ANSWER, EXIT_INTERRUPTED = 0, 2, 3, 130


def _fail(message: str, code: int) -> None:
    click.echo(printable(f"deep-research: error: {message}"), err=True)
    raise SystemExit(code)


def _stopped(message: str) -> None:
    """Ctrl-C is the user's own doing, not an error: exit 130 with the line unlabelled."""
    click.echo(printable(f"deep-research: {message}"), err=True)
    raise SystemExit(EXIT_INTERRUPTED)


def command_as_typed(
    argv0: str, orig_argv: list[str], which: Callable[[str], str | None] = shutil.which
) -> str:
    """How the user started this program, to name in a line they can copy: ``deep-research``
    when that name on PATH is this program, else the path they typed, or ``python -m``."""
    if Path(argv0).name == "__main__.py":  # python -m deepresearch: the interpreter as typed
        python = orig_argv[0] if orig_argv else "python"
        return f"{shlex.quote(python)} -m deepresearch"
    name = Path(argv0).name
    found = which(name)
    if found is not None and Path(found).resolve() == Path(argv0).resolve():
        return name
    return shlex.quote(argv0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="deep-research")
def cli() -> None:
    """A deep-research agent on Ray: plans, searches, reads sources and writes a cited report."""


def _report(summary: RunSummary, as_json: bool) -> None:
    """Print the outcome; exit 3 for an honest no-answer."""
    if as_json:
        click.echo(summary.model_dump_json())
    elif summary.report_path:
        click.echo(summary.report_path)
    if summary.status == "no_answer":
        click.echo(printable(f"deep-research: no answer: {summary.reason}"), err=True)
        raise SystemExit(EXIT_NO_ANSWER)


def _execute(prep: driver.Prepared, as_json: bool) -> None:
    from deepresearch.actors import crew
    from deepresearch.commands.console import ProgressDisplay
    from deepresearch.run import driver
    from deepresearch.storage import runs

    try:
        with ProgressDisplay() as display:
            summary = driver.execute(prep, display.update, crew=crew)
    except RunInterrupted:
        if as_json:
            row = {"run_id": prep.request.run_id, "status": "interrupted", "report_path": None}
            click.echo(json.dumps(row))
        raise
    except Exception:
        ended = runs.read_summary(prep.run_dir) if as_json else None
        if ended is not None:  # --json stays JSON: the failed run's summary, then the error line
            click.echo(ended.model_dump_json())
        raise
    _report(summary, as_json)


ROLES = ("planner", "researcher", "evaluator", "writer")


@cli.command()
@click.argument("query")
@click.option(
    "--mode",
    type=choice("quick", "deep"),
    default=None,
    help="quick: one researcher; deep: planner, parallel researchers, evaluator rounds.",
)
@click.option(
    "--corpus",
    type=folder(),
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
@config_option()
@click.option(
    "--llm", default=None, help="LLM provider: extractive (default, no model), openai, gemini."
)
@click.option("--model", default=None, help="Model name for the LLM provider.")
@click.option("--planner-model", default=None, help="Model for the planner role.")
@click.option("--researcher-model", default=None, help="Model for the researcher role.")
@click.option("--evaluator-model", default=None, help="Model for the evaluator role.")
@click.option("--writer-model", default=None, help="Model for the writer role.")
@click.option("--search", default=None, help="Search provider or comma-separated fallback chain.")
@click.option(
    "--code",
    "code_dir",
    type=folder(),
    default=None,
    help="Code folder searched by the grep provider (--search grep).",
)
@click.option("--max-parallel", type=int, default=None, help="Deep mode: researchers at once.")
@click.option(
    "--max-time", type=float, default=None, help="Seconds before the run synthesizes what it has."
)
@click.option(
    "--max-cost",
    type=float,
    default=None,
    help="USD of LLM cost before the run synthesizes what it has.",
)
@click.option(
    "--allow-private-urls",
    is_flag=True,
    default=None,
    help="Let the fetcher reach private/loopback addresses (intranets, tests).",
)
@click.option(
    "--address",
    type=RayAddress(),
    default=None,
    help="Ray address to join (default: start a local Ray).",
)
@click.option(
    "--follow-up",
    "follow_up",
    type=RunId(),
    default=None,
    help="Build on a finished run: reuse its sources and reports, research only what is new.",
)
@click.option(
    "--format",
    "report_format",
    type=choice("md", "json", "html"),
    default=None,
    help="Report file format: md (default), json (structured) or html (standalone page).",
)
@click.option(
    "--no-gate", is_flag=True, help="Skip the intent gate (greetings, harmful or vague queries)."
)
@click.option(
    "--plan-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Deep mode: research this YAML agenda (see 'deep-research plan') instead of planning.",
)
@click.option(
    "--review-plan",
    is_flag=True,
    help="Deep mode: show the agenda and keep, drop, edit or add items before researching.",
)
def run(query: str, config_file: Path | None, as_json: bool, **options: Any) -> None:
    """Research QUERY and write a cited report (Markdown, JSON or HTML)."""
    from deepresearch.config.settings import load_settings, overrides_from_flags
    from deepresearch.run import driver, follow_up
    from deepresearch.run.intent_gate import screen

    flags: dict[str, Any] = {
        "run.mode": options["mode"],
        "corpus.path": options["corpus"],
        "run.output_dir": options["output_dir"],
        "llm.provider": options["llm"],
        "llm.model": options["model"],
        "search.providers": options["search"],
        "search.code_dir": options["code_dir"],
        "deep.max_parallel": options["max_parallel"],
        "run.max_time_s": options["max_time"],
        "llm.max_cost_usd": options["max_cost"],
        "web.allow_private_urls": options["allow_private_urls"],
        "ray.address": options["address"],
        "run.format": options["report_format"],
        "gate.enabled": False if options["no_gate"] else None,
    }
    settings = load_settings(config_file, overrides_from_flags(flags))
    role_models = {r: options[f"{r}_model"] for r in ROLES if options[f"{r}_model"]}
    if role_models:
        for role, model in role_models.items():
            flags[f"llm.roles.{role}"] = {"provider": settings.llm.provider, "model": model}
        settings = load_settings(config_file, overrides_from_flags(flags))
    is_tty = cli_plan.interactive()
    review = bool(options["review_plan"])
    items = cli_plan.check_options(
        settings.run.mode, options["plan_file"], review, settings, is_tty
    )
    try:
        # A follow-up is gated with its thread's earlier questions ("how do I make it" keeps
        # their subject) and planned as it is meant ("how did it do?" has the earlier subject).
        text = driver.check_query(query, settings)
        planned = follow_up.question_for(text, options["follow_up"], settings)
        # Gated before a plan is reviewed (no planner call for a greeting); prepare enforces it.
        intent = screen(
            text, settings, context=follow_up.gate_context(options["follow_up"], settings)
        )
        plan = cli_plan.agenda_to_research(planned, settings, items, review, is_tty)
        prep = driver.prepare(
            query,
            settings.run.mode,
            settings,
            follow_up_of=options["follow_up"],
            plan=plan,
            intent=intent,
        )
        if not review:  # wall time counts from the command's start (imports too), not a review
            prep = dataclasses.replace(prep, started=STARTED_AT)
    except QueryGated as gated:
        answer_gated(gated, query.strip(), as_json)
    _execute(prep, as_json)


@cli.command()
@click.argument("run_id", type=RunId())
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")
@config_option("YAML settings file (only where to find run state is read from it).")
@click.option(
    "--address",
    type=RayAddress(),
    default=None,
    help="Ray address to join (default: the run's own).",
)
def resume(run_id: str, as_json: bool, config_file: Path | None, address: str | None) -> None:
    """Continue an interrupted run; completed sub-tasks are not redone."""
    from deepresearch.config.settings import load_settings
    from deepresearch.run import driver

    settings = load_settings(config_file)
    prep = dataclasses.replace(
        driver.prepare_resume(run_id, settings.resolved_state_dir()), started=STARTED_AT
    )
    if address is not None:
        ray_settings = prep.settings.ray.model_copy(update={"address": address})
        prep = dataclasses.replace(
            prep, settings=prep.settings.model_copy(update={"ray": ray_settings})
        )
    _execute(prep, as_json)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one line on stderr and an exit code."""
    debug = os.environ.get("DEEP_RESEARCH_DEBUG") == "1"
    signal.signal(signal.SIGTERM, _terminate)  # SIGTERM stops a run like Ctrl-C: checkpoint kept
    from deepresearch.commands import jobs as cli_jobs
    from deepresearch.commands import mcp as cli_mcp
    from deepresearch.commands import runs as cli_runs
    from deepresearch.commands import serve as cli_serve

    cli_runs.register(cli)
    cli_plan.register(cli)
    cli_jobs.register(cli)
    cli_mcp.register(cli)
    cli_serve.register(cli)
    try:
        _main(argv, debug)
    finally:
        # Now, not in Ray's exit hook (it sleeps first); a command that never imported the
        # runtime joined no cluster.
        runtime = sys.modules.get("deepresearch.cluster.runtime")
        if runtime is not None:
            runtime.leave()


def _main(argv: list[str] | None, debug: bool) -> None:
    try:
        cli.main(args=argv, prog_name="deep-research", standalone_mode=False)
    except click.exceptions.Abort:
        _stopped("interrupted")
    except click.ClickException as exc:
        _fail(exc.format_message(), EXIT_USAGE)
    except RunInterrupted as exc:
        typed = command_as_typed(sys.argv[0], getattr(sys, "orig_argv", []))
        _stopped(f"interrupted; to continue: {typed} resume {exc.run_id}")
    except DeepResearchError as exc:
        if debug:
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _stopped("interrupted")
    except Exception as exc:
        if debug:
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (set DEEP_RESEARCH_DEBUG=1 for details)",
            1,
        )
