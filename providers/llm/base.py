"""The LLM provider Protocol: one async ``complete`` call per request.

A request carries both the rendered prompt (for real models) and the typed task (for the model-free
``extractive`` provider and scripted fakes), so every tier of a fallback chain can answer the same
request and a run degrades instead of dying.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from deepresearch.llm_messages import LLMReply, LLMRequest


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
