"""The context gate: stop adding sources before a prompt passes its share of the model window.

Before each scraping batch the researcher asks how much of the batch the prompt it would send can
take and stay under ``share`` of the window. The batch's size is not known before it is fetched, so
it is estimated from the mean size of what was read so far (or a page-sized default at first). A
batch that does not fit whole is cut to what fits, and a researcher that has read nothing yet
always takes one source: a small window reads less, never nothing.
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
    take: int = 0  # how many of the batch's sources to read (the batch cut to fit)


def estimate_tokens(text: str, chars_per_token: float) -> int:
    """A documented estimate for providers without a tokenizer: characters / chars_per_token."""
    return int(len(text) / chars_per_token) + 1


def gate(
    prompt_tokens: int, read_doc_tokens: Sequence[int], batch_size: int, window: int, share: float
) -> GateDecision:
    mean = sum(read_doc_tokens) / len(read_doc_tokens) if read_doc_tokens else DEFAULT_DOC_TOKENS
    expected = int(mean * batch_size)
    limit = int(window * share)
    room = limit - prompt_tokens
    fits = batch_size if mean <= 0 else max(0, min(batch_size, int(room // mean)))
    if fits == 0 and not read_doc_tokens and batch_size > 0:
        fits = 1  # nothing read yet: one source, whatever its size
    return GateDecision(fits > 0, prompt_tokens, expected, limit, fits)
