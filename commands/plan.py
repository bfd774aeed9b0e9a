"""Plan review on the command line: ``--plan-file``, ``--review-plan`` and ``deep-research plan``.

The agenda is settled in the driver before the run directory exists, then travels in
``Request.plan`` (run.json and checkpoints), so a resumed run researches the same reviewed items.
Prompts and the agenda go to stderr, keeping stdout for the report path or ``--json``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deepresearch.commands.options import config_option
from deepresearch.errors import InputError, QueryGated, StorageError
from deepresearch.run.plan_file import check_items, dump_plan, parse_plan
from deepresearch.text.terminal import printable

if TYPE_CHECKING:  # the planner and the settings load only when a command needs them
    from deepresearch.config.settings import Settings
    from deepresearch.per_run.planning import Proposal
    from deepresearch.providers.llm.base import LLMProvider

Ask = Callable[[str, str], str]
Echo = Callable[[str], None]

NEEDS_TTY = (
    "--review-plan needs an interactive terminal; for scripts write the agenda with "
    "'deep-research plan QUERY --output plan.yaml', edit it and pass --plan-file plan.yaml"
)


def max_items(settings: Settings) -> int:
    """A fixed agenda is bounded like a planned one, so every run stays within its budgets."""
    return max(settings.deep.researchers_by_complexity)


def read_plan_file(path: Path, settings: Settings) -> tuple[str, ...]:
    try:
        text = path.expanduser().read_text("utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read plan file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: plan file is not UTF-8 text") from None
    return parse_plan(text, str(path), max_items(settings))


def check_options(
    mode: str, plan_file: Path | None, review: bool, settings: Settings, interactive: bool
) -> tuple[str, ...]:
    """Validate the plan options before anything runs; the plan file's items, if any."""
    if plan_file is None and not review:
        return ()
    if mode != "deep":
        raise InputError("plan review applies to --mode deep (--plan-file, --review-plan)")
    if plan_file is None and not interactive:
        raise InputError(NEEDS_TTY)
    return read_plan_file(plan_file, settings) if plan_file is not None else ()


# Each action by its word or first letter; Enter takes the default, keep.
ANSWERS = {"": "keep"} | {a: act for act in ("keep", "drop", "edit") for a in (act, act[0])}
HINT = "   Please answer k (keep), d (drop) or e (edit); Enter keeps."
EOF_STOP = "plan review ended at end of input; nothing was researched"


def choose(prompt: str, ask: Ask, echo: Echo) -> str:
    """Keep, drop or edit: anything else is asked again, never taken as a silent keep."""
    while True:
        answer = ask(prompt, "k").strip().lower()
        if answer in ANSWERS:
            return ANSWERS[answer]
        echo(HINT)


def review(items: Sequence[str], ask: Ask, echo: Echo, limit: int) -> tuple[str, ...]:
    """Keep, drop or edit each proposed item, then add new ones; the result is checked."""
    echo("Proposed research agenda:")
    for i, item in enumerate(items, start=1):
        echo(f"  {i}. {item}")
    kept: list[str] = []
    for i, item in enumerate(items, start=1):
        action = choose(f"{i}. {item}\n   [k]eep, [d]rop or [e]dit", ask, echo)
        if action == "drop":
            continue
        if action == "edit":
            item = ask("   New text", item).strip() or item
        kept.append(item)
    while len(kept) < limit:
        extra = ask("Add a sub-question (Enter to finish)", "").strip()
        if not extra:
            break
        kept.append(extra)
    agenda = check_items(kept, "the reviewed plan", limit)
    echo("Researching:")
    for i, item in enumerate(agenda, start=1):
        echo(f"  {i}. {item}")
    return agenda


def _ask(text: str, default: str) -> str:
    """A prompt on stderr; end of input (Ctrl-D) stops the run before anything is researched
    (exit 2) rather than taking the agenda as it stands, and Ctrl-C is an interruption (130)."""
    try:
        return str(
            click.prompt(
                printable(text), default=printable(default), show_default=bool(default), err=True
            )
        )
    except click.exceptions.Abort as exc:
        click.echo(err=True)  # the error line starts on a line of its own, not after the prompt
        if isinstance(exc.__context__, EOFError):  # click folds EOF and Ctrl-C into Abort
            raise InputError(EOF_STOP) from None
        raise


def _echo(text: str) -> None:
    click.echo(printable(text), err=True)


def interactive() -> bool:
    return sys.stdin.isatty()


def agenda_to_research(
    query: str, settings: Settings, items: tuple[str, ...], review_plan: bool, is_tty: bool
) -> tuple[str, ...]:
    """The agenda the run researches: the file's, or the planner's after the user reviewed it."""
    if not review_plan or not is_tty:
        return items
    proposed = list(items) or propose_now(query, settings)
    return review(proposed, _ask, _echo, max_items(settings))


def register(cli: click.Group) -> None:
    @cli.command("plan")
    @click.argument("query")
    @click.option(
        "--output",
        type=click.Path(path_type=Path),
        default=None,
        help="Write the YAML here instead of stdout.",
    )
    @config_option()
    @click.option("--llm", default=None, help="LLM provider (default extractive: rule plans).")
    @click.option("--model", default=None, help="Model name for the LLM provider.")
    def plan(
        query: str,
        output: Path | None,
        config_file: Path | None,
        llm: str | None,
        model: str | None,
    ) -> None:
        """Print the deep-mode agenda for QUERY as YAML, to edit and pass to --plan-file."""
        from deepresearch.config.settings import load_settings, overrides_from_flags
        from deepresearch.run import intent_gate
        from deepresearch.run.driver import check_query

        flags = {"llm.provider": llm, "llm.model": model}
        settings = load_settings(config_file, overrides_from_flags(flags))
        text = check_query(query, settings)
        try:  # no agenda is drafted for a harmful request, a greeting or a query with no topic
            intent_gate.screen(text, settings)
        except QueryGated as gated:
            from deepresearch.commands.gated import answer_gated

            answer_gated(gated, text, False)
        proposal = proposal_now(text, settings)
        for line in proposal.limits():  # kept whole, or cut by the cap: said, not only written
            _echo(line)
        agenda = check_items(proposal.questions, "the planner's agenda", max_items(settings))
        yaml_text = dump_plan(agenda, text)
        if output is None:
            click.echo(yaml_text, nl=False)
            return
        try:
            output.expanduser().write_text(yaml_text, "utf-8")
        except OSError as exc:
            raise StorageError(str(output), f"cannot write plan file ({exc.strerror})") from None
        click.echo(str(output))


def propose_now(query: str, settings: Settings, llm: LLMProvider | None = None) -> list[str]:
    """The planner's agenda from this synchronous command, through the same router a run would
    use (``planning.propose``, as the coordinator calls it)."""
    return proposal_now(query, settings, llm).questions


def proposal_now(query: str, settings: Settings, llm: LLMProvider | None = None) -> Proposal:
    """The planner's whole proposal: its agenda and what it says of it (kept whole, capped)."""
    from deepresearch.per_run import planning

    if llm is None:
        from deepresearch.providers.assembly import from_settings as assembly
        from deepresearch.providers.llm.registry import keys_from_env

        llm = assembly.build_llm_provider(settings, keys_from_env(os.environ))
    return asyncio.run(planning.propose(llm, query, settings))
