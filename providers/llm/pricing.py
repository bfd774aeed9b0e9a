"""Cost of a model call from the configured price table (USD per million tokens).

Prices live in config, not code, because they change and differ by account and region. Providers
report dated or prefixed model names ("gpt-4o-mini-2024-07-18", "openai/gpt-4o"), so lookup is
exact first, then without a vendor prefix, then the longest configured name the model starts
with at a ``-`` boundary. An unknown model costs 0 and is flagged, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from deepresearch.config.settings import ModelPrice
from deepresearch.llm_messages import LLMReply
from deepresearch.schemas import Usage

PriceTable = Mapping[str, ModelPrice]


def find_price(model: str, prices: PriceTable) -> ModelPrice | None:
    """The price entry for ``model``, or None when the table has none that fits."""
    name = model.strip()
    if name in prices:
        return prices[name]
    bare = name.rsplit("/", 1)[-1]
    if bare in prices:
        return prices[bare]
    best: str | None = None
    for key in prices:
        if bare.startswith(f"{key}-") and (best is None or len(key) > len(best)):
            best = key
    return prices[best] if best is not None else None


def cost_usd(model: str, input_tokens: int, output_tokens: int, prices: PriceTable) -> float:
    """USD for one call; 0.0 for a model missing from the table (see ``is_priced``)."""
    price = find_price(model, prices)
    if price is None:
        return 0.0
    return (
        max(0, input_tokens) * price.input_per_mtok + max(0, output_tokens) * price.output_per_mtok
    ) / 1_000_000


def is_priced(model: str, prices: PriceTable) -> bool:
    return find_price(model, prices) is not None


@dataclass(frozen=True)
class CallCost:
    """What the run ledger records per call: tokens, dollars, and whether either is a guess."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    usd: float
    priced: bool
    estimated_tokens: bool


def reply_cost(reply: LLMReply, prices: PriceTable) -> CallCost:
    return CallCost(
        provider=reply.provider,
        model=reply.model,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        usd=cost_usd(reply.model, reply.input_tokens, reply.output_tokens, prices),
        priced=is_priced(reply.model, prices),
        estimated_tokens=reply.estimated_tokens,
    )


def total_usd(costs: Iterable[CallCost]) -> float:
    return round(sum(c.usd for c in costs), 6)


def unpriced_models(costs: Iterable[CallCost]) -> tuple[str, ...]:
    """Models that were used but have no price (their cost counted as 0), sorted, unique."""
    return tuple(sorted({c.model for c in costs if not c.priced}))


__all__ = [
    "CallCost",
    "PriceTable",
    "cost_usd",
    "find_price",
    "is_priced",
    "reply_cost",
    "total_usd",
    "unpriced_models",
]


MODEL_FREE = "extractive"  # the provider that calls no model: its steps cost nothing


def usage_of(replies: Iterable[LLMReply], prices: PriceTable) -> Usage:
    """The ``Usage`` of some model calls: tokens from the replies, cost from the price table,
    the unpriced models named (``unpriced_models``); a model-free reply is a step, not a call."""
    replies = list(replies)
    steps = sum(1 for r in replies if r.provider == MODEL_FREE)
    costs = [reply_cost(r, prices) for r in replies if r.provider != MODEL_FREE]
    return Usage(
        llm_calls=len(costs),
        input_tokens=sum(c.input_tokens for c in costs),
        output_tokens=sum(c.output_tokens for c in costs),
        cost_usd=total_usd(costs),
        estimated_tokens=any(c.estimated_tokens for c in costs),
        extractive_steps=steps,
        unpriced=unpriced_models(costs),
    )
