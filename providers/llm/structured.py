"""One path for every structured model call: build the request, parse, repair once, retry once.

Models wrap JSON in ``<think>`` blocks, code fences or prose, or emit near-JSON (trailing commas,
single quotes). Parsing is therefore layered: clean → strict validation → ``json_repair`` → one
retry that shows the model its validation error. Anything still invalid is a typed
``StructuredOutputError``: never a silent default, except the documented evaluator rule (non-JSON
counts as *synthesize*).
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any, Protocol, TypeVar, runtime_checkable

import json_repair
from pydantic import BaseModel, ValidationError

from deepresearch.errors import StructuredOutputError
from deepresearch.llm_messages import OUTPUT_CAPS, ChatMessage, LLMReply, LLMRequest, Task
from deepresearch.prompts import render_task
from deepresearch.providers.llm.base import LLMProvider
from deepresearch.schemas import Evaluation, Role

T = TypeVar("T", bound=BaseModel)

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_WHOLE_FENCE = re.compile(
    r"```[ \t]*(?:json|JSON)?[ \t]*\n?((?:(?!```).)*?)\n?[ \t]*```", re.DOTALL
)
_MAX_CANDIDATES = 20
_RETRY_ECHO_CHARS = 2000
EVALUATOR_FALLBACK_REASON = "evaluator reply was not valid JSON"


def build_request(
    role: Role, task: Task, output_cls: type[BaseModel], *, max_output_tokens: int | None = None
) -> LLMRequest:
    """A request with the task's rendered prompt and the output model's JSON schema, capped at
    what its kind of reply needs (``OUTPUT_CAPS``) unless the caller says otherwise."""
    schema = copy.deepcopy(_schema_of(output_cls))
    system, user = render_task(task, schema)
    return LLMRequest(
        role=role,
        task=task,
        messages=(
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        ),
        output_name=output_cls.__name__,
        output_schema=schema,
        max_output_tokens=max_output_tokens or OUTPUT_CAPS.get(task.kind, 2048),
    )


@functools.cache
def _schema_of(output_cls: type[BaseModel]) -> dict[str, Any]:
    """Generating a JSON schema takes pydantic a few milliseconds and every researcher step
    builds a request: the schema of a class never changes, so it is made once per process
    (callers get a copy, so nothing can alter the cached one)."""
    return output_cls.model_json_schema()


def _without_reasoning(text: str) -> str:
    out = _THINK_BLOCK.sub("", text)
    if "</think>" in out.lower():  # closing tag without an opening one: reasoning came first
        out = out[out.lower().rfind("</think>") + len("</think>") :]
    stripped = out.lstrip()
    if stripped.lower().startswith("<think>"):  # unclosed: keep only what follows the reasoning
        rest = stripped[len("<think>") :]
        match = re.search(r"^[ \t]*(?:[{\[]|```)", rest, re.MULTILINE)
        out = rest[match.start() :] if match else ""
    return out.strip()


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span, in order, braces inside JSON strings not counted."""
    found: list[str] = []
    depth, start, in_string, escaped = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
                if len(found) >= _MAX_CANDIDATES:
                    break
    return found


def json_candidates(text: str) -> list[str]:
    """What in a reply may be its JSON, best first: the inside of a code fence only when the
    fence wraps the whole reply (a fence elsewhere is usually code quoted from a document), else
    each balanced object in order (the caller takes the first that validates), else the text from
    its first brace on (for ``json_repair`` to close)."""
    out = _without_reasoning(text)
    whole = _WHOLE_FENCE.fullmatch(out)
    if whole:
        return [whole.group(1).strip()]
    objects = _balanced_objects(out)
    if objects:
        return objects
    start = out.find("{")
    return [out[start:] if start >= 0 else out]


def clean_reply(text: str) -> str:
    """Strip reasoning blocks, a code fence around the whole reply and surrounding prose,
    leaving the first JSON candidate."""
    return json_candidates(text)[0]


def describe_error(err: Exception) -> str:
    """A short, model-readable account of why validation failed."""
    if isinstance(err, ValidationError):
        parts = []
        for e in err.errors()[:3]:
            loc = ".".join(str(p) for p in e["loc"]) or "(root)"
            parts.append(f"{loc}: {e['msg']}")
        more = err.error_count() - len(parts)
        return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
    return str(err) or type(err).__name__


def parse_structured(text: str, output: type[T]) -> T:
    """Validate ``text`` as ``output``: each JSON candidate strictly first, then through
    ``json_repair``; the error raised is the first candidate's."""
    candidates = json_candidates(text)
    first: ValidationError | None = None
    for candidate in candidates:
        try:
            return output.model_validate_json(candidate)
        except ValidationError as err:
            first = first or err
    assert first is not None  # json_candidates is never empty
    for index, candidate in enumerate(candidates):
        try:
            repaired: Any = json_repair.repair_json(candidate, return_objects=True)
        except Exception:
            continue
        if not isinstance(repaired, dict):
            continue
        try:
            return output.model_validate(repaired)
        except ValidationError as err:
            if index == 0:
                first = err  # names the fields the first candidate got wrong
    raise first from None


Outcome = tuple[T | None, list[LLMReply], str, str]  # result or None, replies, reason, excerpt


@runtime_checkable
class ValidatingProvider(Protocol):
    """A provider that validates replies itself (the router: an invalid reply falls to its next
    tier), so a caller's one structured call covers the whole fallback chain."""

    async def complete_structured(self, request: LLMRequest, output: type[T]) -> Outcome[T]: ...


async def complete_with_repair(
    provider: LLMProvider, request: LLMRequest, output: type[T]
) -> Outcome[T]:
    """One provider's reply, parsed, and one retry showing the model its validation error;
    returns (result or None, replies, error reason, excerpt)."""
    replies: list[LLMReply] = []
    reply = await provider.complete(request)
    replies.append(reply)
    try:
        return parse_structured(reply.text, output), replies, "", ""
    except (ValidationError, ValueError) as err:
        reason = describe_error(err)
    retry = request.model_copy(
        update={
            "messages": (
                *request.messages,
                ChatMessage(role="assistant", content=reply.text[:_RETRY_ECHO_CHARS]),
                ChatMessage(
                    role="user",
                    content=f"Your previous reply did not match the schema: {reason}. "
                    "Reply with JSON only.",
                ),
            )
        }
    )
    second = await provider.complete(retry)
    replies.append(second)
    try:
        return parse_structured(second.text, output), replies, "", ""
    except (ValidationError, ValueError) as err:
        return None, replies, describe_error(err), second.text[:200]


async def _structured(provider: LLMProvider, request: LLMRequest, output: type[T]) -> Outcome[T]:
    if isinstance(provider, ValidatingProvider):
        return await provider.complete_structured(request, output)
    return await complete_with_repair(provider, request, output)


async def call_structured(
    provider: LLMProvider, request: LLMRequest, output: type[T]
) -> tuple[T, list[LLMReply]]:
    """The validated reply and every raw reply (for usage); ``StructuredOutputError`` if invalid."""
    result, replies, reason, excerpt = await _structured(provider, request, output)
    if result is None:
        raise StructuredOutputError(request.role, reason, excerpt)
    return result, replies


async def evaluation_or_synthesize(
    provider: LLMProvider, request: LLMRequest
) -> tuple[Evaluation, list[LLMReply]]:
    """The evaluator's decision; a reply that never validates counts as *synthesize*."""
    result, replies, _, _ = await _structured(provider, request, Evaluation)
    if result is None:
        return Evaluation(action="synthesize", reason=EVALUATOR_FALLBACK_REASON), replies
    return result, replies


__all__ = [
    "EVALUATOR_FALLBACK_REASON",
    "Outcome",
    "ValidatingProvider",
    "build_request",
    "call_structured",
    "clean_reply",
    "complete_with_repair",
    "describe_error",
    "evaluation_or_synthesize",
    "json_candidates",
    "parse_structured",
]
