"""Fakes shipped with the package: a scripted LLM that fails loudly when used unexpectedly.

A fake that answers anything hides bugs, so ``ScriptedLLM`` is strict by default: a call the script
did not foresee raises ``AssertionError`` naming the role and call index, and ``assert_all_used``
catches replies that were never requested. It is a plain picklable object because tests ship it to
Ray actors; callables in a script must be module-level functions (lambdas and closures do not
pickle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

from pydantic import BaseModel

from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.schemas import Role


class ScriptedReply(NamedTuple):
    """A reply with fixed usage; ``None`` token counts fall back to ``len(text) // 4``."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


ScriptEntry: TypeAlias = str | ScriptedReply | Callable[[LLMRequest], str] | BaseException
Script: TypeAlias = Mapping[Role, Sequence[ScriptEntry]] | Callable[[LLMRequest], str]


def scripted_json(model_instance: BaseModel) -> str:
    """The JSON a well-behaved model would reply with for ``model_instance``."""
    return model_instance.model_dump_json()


def _request_chars(request: LLMRequest) -> int:
    if request.messages:
        return sum(len(m.content) for m in request.messages)
    return len(request.task.model_dump_json())


class ScriptedLLM:
    """Answers each call from a per-role script, in order, and records every request.

    ``script`` is either a mapping ``role -> [entry, ...]`` (an entry is reply text, a
    ``ScriptedReply``, a callable ``request -> text``, or an exception instance to raise), or one
    callable answering every request. With ``strict=False`` an exhausted role repeats its last
    entry. ``delegate`` answers the roles the script does not name (e.g. the extractive provider
    for researchers while the evaluator is scripted); without it such a call fails.
    """

    def __init__(
        self,
        script: Script,
        *,
        name: str = "scripted",
        model: str = "scripted-1",
        strict: bool = True,
        delegate: Any = None,
    ) -> None:
        self.delegate = delegate
        self.name = name
        self.model = model
        self.strict = strict
        self._handler: Callable[[LLMRequest], str] | None = None
        self._script: dict[str, list[ScriptEntry]] = {}
        if callable(script) and not isinstance(script, Mapping):
            self._handler = script
        else:
            self._script = {role: list(entries) for role, entries in script.items()}
        self._used: dict[str, int] = {role: 0 for role in self._script}
        self.calls: list[LLMRequest] = []

    def count_tokens(self, text: str) -> int:
        return len(text) // 4

    def calls_for(self, role: Role) -> list[LLMRequest]:
        """The recorded requests of one role, in call order."""
        return [c for c in self.calls if c.role == role]

    def _next_entry(self, request: LLMRequest) -> ScriptEntry:
        role = request.role
        entries = self._script.get(role)
        if entries is None:
            raise AssertionError(
                f"ScriptedLLM: unexpected {role} call (task {request.task.kind}): "
                f"no script for role {role!r} (scripted roles: {sorted(self._script)})"
            )
        index = self._used[role]
        if index >= len(entries):
            if self.strict or not entries:
                raise AssertionError(
                    f"ScriptedLLM: unexpected {role} call #{index + 1} (task {request.task.kind}): "
                    f"the script has only {len(entries)} {role} repl"
                    f"{'y' if len(entries) == 1 else 'ies'}"
                )
            return entries[-1]
        self._used[role] = index + 1
        return entries[index]

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.calls.append(request)
        if self.delegate is not None and self._handler is None and request.role not in self._script:
            reply: LLMReply = await self.delegate.complete(request)
            return reply
        entry: ScriptEntry = (
            self._handler(request) if self._handler is not None else self._next_entry(request)
        )
        if isinstance(entry, BaseException):
            raise entry
        input_tokens: int | None = None
        output_tokens: int | None = None
        if isinstance(entry, ScriptedReply):
            text, input_tokens, output_tokens = entry
        elif isinstance(entry, str):
            text = entry
        else:
            text = entry(request)
        return LLMReply(
            text=text,
            provider=self.name,
            model=self.model,
            input_tokens=_request_chars(request) // 4 if input_tokens is None else input_tokens,
            output_tokens=len(text) // 4 if output_tokens is None else output_tokens,
            estimated_tokens=False,
        )

    def unused(self) -> dict[str, int]:
        """Scripted replies never requested, by role."""
        left = {role: len(e) - self._used[role] for role, e in self._script.items()}
        return {role: n for role, n in left.items() if n > 0}

    def assert_all_used(self) -> None:
        """Fail if the code under test made fewer calls than the script expected."""
        left = self.unused()
        if left:
            detail = ", ".join(f"{role}: {n}" for role, n in sorted(left.items()))
            raise AssertionError(f"ScriptedLLM: scripted replies left unused ({detail})")


__all__ = ["Script", "ScriptEntry", "ScriptedLLM", "ScriptedReply", "scripted_json"]
