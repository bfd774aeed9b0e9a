"""The LLM provider Protocol: one async ``complete`` call per request.

A request carries both the rendered prompt (for real models) and the typed task (for the model-free
``extractive`` provider and scripted fakes), so every tier of a fallback chain can answer the same
request and a run degrades instead of dying.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from deepresearch.llm_messages import LLMReply, LLMRequest
from deepresearch.schemas import Role


@runtime_checkable
class LLMProvider(Protocol):
    name: str
    model: str

    async def complete(self, request: LLMRequest) -> LLMReply:
        """Answer one request; raise ``ProviderError`` (or a subclass) on failure."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs for this model (exact where a tokenizer exists, else estimated)."""
        ...


def learned_window(llm: object, role: Role) -> int | None:
    """The context window (tokens) the provider serving ``role`` learnt from its server, if any,
    looked for through wrappers (``inner``) and a router's chain (the tier tried first)."""
    for _ in range(4):  # wrappers nest a few deep at most
        window = getattr(llm, "context_window", None)
        if isinstance(window, int) and window > 0:
            return window
        inner = getattr(llm, "inner", None)
        chain = getattr(llm, "chain", None)
        if inner is not None:
            llm = inner
        elif callable(chain):
            tiers = chain(role)
            if not tiers:
                return None
            llm = tiers[0]
        else:
            return None
    return None
