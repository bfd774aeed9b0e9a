"""The context gate: stop adding sources before a prompt passes its share of the model window.

Before each scraping batch the researcher asks whether the prompt it would send, with the batch
added, stays under ``share`` of the window. The batch's size is not known before it is fetched, so
it is estimated from the mean size of what was read so far (or a page-sized default at first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_DOC_TOKENS = 1500  # a typical page of prose before anything has been read


@dataclass(frozen=True)
class GateDecision:
    admit: bool
    prompt_tokens: int
    expected_batch_tokens: int
    limit_tokens: int


def estimate_tokens(text: str, chars_per_token: float) -> int:
    """A documented estimate for providers without a tokenizer: characters / chars_per_token."""
    return int(len(text) / chars_per_token) + 1


def gate(
    prompt_tokens: int, read_doc_tokens: Sequence[int], batch_size: int, window: int, share: float
) -> GateDecision:
    mean = sum(read_doc_tokens) / len(read_doc_tokens) if read_doc_tokens else DEFAULT_DOC_TOKENS
    expected = int(mean * batch_size)
    limit = int(window * share)
    return GateDecision(prompt_tokens + expected <= limit, prompt_tokens, expected, limit)
