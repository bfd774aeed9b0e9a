"""Prompt templates are data: one ``.md`` file per role/task, rendered with ``string.Template``.

``substitute`` (not ``safe_substitute``) is used on purpose so a template that names a variable the
code does not supply fails at once instead of sending ``$question`` to a model. Page text is wrapped
in nonce-marked delimiters and the system prompts declare it untrusted data. The nonce is derived
from the task content, so identical runs render identical prompts (and resume stays byte-stable).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.resources import files
from string import Template
from typing import Any

from deepresearch import domains
from deepresearch.llm_messages import (
    EvaluateTask,
    FindingsTask,
    IntentTask,
    PlanTask,
    QueriesTask,
    RewriteTask,
    SourceText,
    Task,
    WriteTask,
)
from deepresearch.text.question import analyze

USER_SPLIT = "---user---"

#: What the answer should look like for each question shape (``text.question``), the same shapes
#: the model-free writer composes.
SHAPE_HINTS: dict[str, str] = {
    "figure": "The question asks for one figure: state it with its period, unit and entity.",
    "trend": (
        "The question asks for a trend: give a Markdown table with one line per period, in time "
        "order (| period | value [n] |), from the matching row of each filing."
    ),
    "comparison": (
        "The question asks for a comparison: one line per entity (and per metric), each with "
        "its figure, period and unit."
    ),
    "list": "The question asks for a list: name each item, each with its citation.",
    "explanation": "The question asks for an explanation: give the best-supported reasons.",
}

#: Template file (without ``.md``) for each task kind.
TEMPLATE_FOR_KIND: dict[str, str] = {
    "plan": "planner",
    "queries": "researcher-query",
    "findings": "researcher-report",
    "evaluate": "evaluator",
    "write": "writer",
    "intent": "intent",
    "rewrite": "writer-rewrite",
}


@cache
def load_prompt(name: str) -> str:
    """The raw template text of ``prompts/<name>.md``."""
    return files("deepresearch.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> tuple[str, str]:
    """Render a template into ``(system, user)``; a missing variable raises ``KeyError``."""
    raw = load_prompt(name)
    system, sep, user = raw.partition(f"\n{USER_SPLIT}\n")
    if not sep:
        raise ValueError(f"prompt {name!r} has no {USER_SPLIT} line")
    strings = {k: str(v) for k, v in values.items()}
    return (
        Template(system).substitute(strings).strip(),
        Template(user).substitute(strings).strip(),
    )


def task_nonce(*parts: str) -> str:
    """A deterministic 12-hex nonce from the task's content (question, source URLs)."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:12]


def wrap_untrusted(text: str, nonce: str) -> str:
    """Fence untrusted text between nonce markers; marker look-alikes inside it are defused."""
    safe = text.replace("<<<", "< < <").replace(">>>", "> > >")
    return f"<<<SOURCE {nonce}>>>\n{safe}\n<<<END {nonce}>>>"


def _sources_block(sources: tuple[SourceText, ...], nonce: str) -> str:
    if not sources:
        return "(no sources)"
    blocks = []
    for s in sources:
        body = f"Title: {s.title}\nLocation: {s.location}\n\n{s.text}"
        blocks.append(f"Source [{s.n}]:\n{wrap_untrusted(body, nonce)}")
    return "\n\n".join(blocks)


def _notes_block(notes: tuple[str, ...]) -> str:
    return "\n".join(f"- {n}" for n in notes) if notes else "(none)"


def _task_values(task: Task) -> tuple[str, dict[str, Any]]:
    """The template name and variables for one task."""
    if isinstance(task, PlanTask):
        return "planner", {"query": task.query, "max_subtasks": task.max_subtasks}
    if isinstance(task, IntentTask):
        return "intent", {"query": wrap_untrusted(task.query, task_nonce(task.query))}
    if isinstance(task, QueriesTask):
        return "researcher-query", {
            "question": task.question,
            "notes": _notes_block(task.notes),
            "max_queries": task.max_queries,
        }
    if isinstance(task, FindingsTask):
        nonce = task_nonce(task.question, *(s.url for s in task.sources))
        return "researcher-report", {
            "question": task.question,
            "notes": _notes_block(task.notes),
            "sources": _sources_block(task.sources, nonce),
            "max_findings": task.max_findings,
            "nonce": nonce,
        }
    if isinstance(task, EvaluateTask):
        nonce = task_nonce(task.query, *task.agenda)
        lines = []
        for i, item in enumerate(task.agenda):
            summary = task.summaries[i] if i < len(task.summaries) else ""
            lines.append(f"{i + 1}. {item}\n{wrap_untrusted(summary or '(no summary)', nonce)}")
        return "evaluator", {
            "query": task.query,
            "agenda": "\n\n".join(lines) if lines else "(empty)",
            "failed": _notes_block(task.failed),
            "round": task.round,
            "max_rounds": task.max_rounds,
            "max_new_subtasks": task.max_new_subtasks,
            "nonce": nonce,
        }
    if isinstance(task, RewriteTask):
        nonce = task_nonce(task.query, *(s.url for s in task.sources))
        claims = "\n".join(
            f"- id {c.id}: {c.text} " + "".join(f"[{n}]" for n in c.sources) for c in task.claims
        )
        return "writer-rewrite", {
            "query": task.query,
            "claims": wrap_untrusted(claims or "(none)", nonce),
            "sources": _sources_block(task.sources, nonce),
            "nonce": nonce,
        }
    nonce = task_nonce(task.query, *(s.url for s in task.sources))
    numbers = {s.url: s.n for s in task.sources}
    parts = []
    for section in task.sections:
        rows = []
        for f in section.findings:
            refs = "".join(f"[{numbers[u]}]" for u in f.citations if u in numbers)
            under = f" (under: {f.section})" if f.section else ""
            rows.append(f"- {f.text} {refs}{under}".rstrip())
        parts.append(f"## {section.heading}\n" + ("\n".join(rows) if rows else "(no findings)"))
    body = "\n\n".join(parts) if parts else "(no sections)"
    return "writer", {
        "shape": SHAPE_HINTS[analyze(task.query).shape],
        "query": task.query,
        "sections": wrap_untrusted(body, nonce),
        "draft": wrap_untrusted(_draft(task), nonce),
        "sources": _sources_block(task.sources, nonce),
        "nonce": nonce,
    }


def _draft(task: WriteTask) -> str:
    """The model-free writer's composed answer (figure line, trend table, one line per entity)
    from the same evidence through the same domain (``domains.compose``), so a model starts
    from the right cells in the asked shape."""
    composed = domains.compose(task)
    return composed.text if composed else "(none: no table row fits the question)"


def render_task(task: Task, output_schema: dict[str, Any]) -> tuple[str, str]:
    """``(system, user)`` messages for a task, with the output JSON schema spelled out."""
    name, values = _task_values(task)
    schema = json.dumps(output_schema, sort_keys=True, separators=(",", ":"))
    return render_prompt(name, schema=schema, **values)


__all__ = [
    "TEMPLATE_FOR_KIND",
    "load_prompt",
    "render_prompt",
    "render_task",
    "task_nonce",
    "wrap_untrusted",
]
