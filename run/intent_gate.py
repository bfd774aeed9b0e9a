"""The intent gate as the driver runs it: rules first, then (optionally) one model call.

``driver.prepare`` runs it for every entry point (CLI ``run``, jobs, the service, MCP) before Ray
starts and before a run directory exists, so a greeting or a refusal costs milliseconds and no
research budget. The gate never blocks research because it failed: a model that
is down, slow or answers nonsense means "research".
"""

from __future__ import annotations

import asyncio
import os

from deepresearch.config.settings import Settings
from deepresearch.errors import QueryGated
from deepresearch.llm_messages import IntentDraft, IntentTask
from deepresearch.policies.gate.intent import Intent, classify, from_model, without_model
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import GateSummary


async def ask_model(
    llm: LLMProvider, query: str, timeout_s: float, unavailable: Intent | None = None
) -> Intent:
    """One structured call (planner role); every failure is research, or ``unavailable`` (an
    unreadable request naming a mass-harm subject is not let through by a model that is down)."""
    # here, not at the top: the prompts' machinery is for the model, which the rules rarely ask
    from deepresearch.providers.llm.structured import build_request, call_structured

    request = build_request("planner", IntentTask(query=query), IntentDraft)
    try:
        draft, _ = await asyncio.wait_for(call_structured(llm, request, IntentDraft), timeout_s)
    except Exception:  # the gate must never stop a run because it could not decide
        return unavailable or Intent("research", reason="gate model unavailable")
    return from_model(draft.intent, draft.reply, query)


def uses_model(settings: Settings) -> bool:
    return settings.gate.use_model and settings.llm.provider.strip().lower() != "extractive"


def as_asked(query: str, context: tuple[str, ...]) -> str:
    """What the model is shown: a follow-up with the earlier questions it continues."""
    if not context:
        return query
    return f"{query}\n(a follow-up to: {' / '.join(context)})"


def decide(
    query: str,
    settings: Settings,
    llm: LLMProvider | None = None,
    context: tuple[str, ...] = (),
) -> Intent:
    """The gate's verdict on ``query``: rules decide the obvious cases, a model the short or
    unreadable ones. ``context`` is a follow-up's thread of earlier questions, oldest first."""
    intent = classify(query, context)
    if intent.outcome != "undecided":
        return intent
    if llm is None and not uses_model(settings):
        return without_model(intent)
    if llm is None:
        from deepresearch.providers.assembly import from_settings as assembly
        from deepresearch.providers.llm.registry import keys_from_env

        try:
            llm = assembly.build_llm_provider(settings, keys_from_env(os.environ))
        except Exception:
            return without_model(intent)
    asked = as_asked(query, context)
    return asyncio.run(ask_model(llm, asked, settings.gate.timeout_s, without_model(intent)))


def screen(
    query: str,
    settings: Settings,
    llm: LLMProvider | None = None,
    context: tuple[str, ...] = (),
) -> Intent:
    """The gate as every entry point runs it: the research verdict, or ``QueryGated`` (carrying
    the outcome and the reply) when no run may start. ``gate.enabled: false`` lets all through."""
    if not settings.gate.enabled:
        return Intent("research", reason="gate disabled")
    return enforce(decide(query, settings, llm, context))


def enforce(intent: Intent) -> Intent:
    """``intent`` itself when it is research; ``QueryGated`` when it is not."""
    if intent.gated:
        raise QueryGated(intent.outcome, intent.reply, intent.reason)
    return intent


def gate_summary(gated: QueryGated, query: str) -> GateSummary:
    """What every entry point reports for a gated query (CLI ``--json``, service, jobs)."""
    return GateSummary.model_validate(
        {"outcome": gated.outcome, "query": query, "reply": gated.reply, "reason": gated.reason}
    )


EXIT_CODES = {"chitchat": 0, "ambiguous": 2, "harmful": 3}  # as docs/runs.md says


def exit_code(gated: QueryGated) -> int:
    """The CLI's (and a job's) exit code for a gated query."""
    return EXIT_CODES.get(gated.outcome, 3)
