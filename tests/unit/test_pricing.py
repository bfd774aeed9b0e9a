"""Cost from the configured price table: lookup rules, unknown models flagged, defaults load."""

from __future__ import annotations

import pytest

from deepresearch.config.settings import ModelPrice, load_settings
from deepresearch.llm_messages import LLMReply
from deepresearch.providers.llm.pricing import (
    cost_usd,
    find_price,
    is_priced,
    reply_cost,
    total_usd,
    unpriced_models,
)

PRICES = {
    "gpt-4o": ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-mini": ModelPrice(input_per_mtok=0.15, output_per_mtok=0.6),
}


def test_exact_model_cost() -> None:
    assert cost_usd("gpt-4o", 1_000_000, 500_000, PRICES) == pytest.approx(2.5 + 5.0)
    assert cost_usd("gpt-4o-mini", 2000, 1000, PRICES) == pytest.approx(0.0003 + 0.0006)


def test_dated_and_vendor_prefixed_names_find_the_longest_entry() -> None:
    assert find_price("gpt-4o-mini-2024-07-18", PRICES) is PRICES["gpt-4o-mini"]
    assert find_price("gpt-4o-2024-08-06", PRICES) is PRICES["gpt-4o"]
    assert find_price("openai/gpt-4o-mini", PRICES) is PRICES["gpt-4o-mini"]
    assert find_price("gpt-4omni", PRICES) is None  # a prefix must end at a "-" boundary


def test_unknown_model_costs_zero_and_is_flagged() -> None:
    assert cost_usd("llama3:8b", 10_000, 10_000, PRICES) == 0.0
    assert not is_priced("llama3:8b", PRICES)
    replies = [
        LLMReply(text="x", provider="openai", model="gpt-4o", input_tokens=100, output_tokens=10),
        LLMReply(
            text="x",
            provider="openai",
            model="llama3:8b",
            input_tokens=5,
            output_tokens=5,
            estimated_tokens=True,
        ),
    ]
    costs = [reply_cost(r, PRICES) for r in replies]
    assert unpriced_models(costs) == ("llama3:8b",)
    assert costs[1].estimated_tokens and not costs[0].estimated_tokens
    assert total_usd(costs) == pytest.approx((100 * 2.5 + 10 * 10.0) / 1e6)


def test_negative_tokens_never_produce_negative_cost() -> None:
    assert cost_usd("gpt-4o", -5, -5, PRICES) == 0.0


def test_default_yaml_ships_example_prices() -> None:
    prices = load_settings(env={}).llm.prices
    assert {"gpt-4.1-mini", "gpt-4o-mini", "gemini-2.5-flash"} <= set(prices)
    assert all(p.input_per_mtok >= 0 and p.output_per_mtok >= 0 for p in prices.values())
    assert cost_usd("extractive-v1", 10**6, 10**6, prices) == 0.0


def test_user_prices_override_and_reject_negatives() -> None:
    settings = load_settings(
        env={},
        overrides={"llm": {"prices": {"my-model": {"input_per_mtok": 1, "output_per_mtok": 2}}}},
    )
    assert cost_usd("my-model", 10**6, 10**6, settings.llm.prices) == pytest.approx(3.0)
    from deepresearch.errors import ConfigError

    with pytest.raises(ConfigError, match=r"llm\.prices"):
        load_settings(env={}, overrides={"llm": {"prices": {"m": {"input_per_mtok": -1}}}})
