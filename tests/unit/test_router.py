"""Router: per-tier breakers, Retry-After once then fallback, retries, per-role chains, the hook;
and the registry that builds it from settings."""

from __future__ import annotations

import logging
import pickle
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fake_clock import FakeClock
from pydantic import SecretStr

from deepresearch.config.settings import (
    LLMSettings,
    ModelPrice,
    load_settings,
    overrides_from_flags,
)
from deepresearch.errors import BudgetExceeded, ConfigError, LLMUnavailable, ProviderError
from deepresearch.llm_messages import LLMReply, PlanTask, QueriesTask, QueryList
from deepresearch.policies.resilience.breaker import BreakerConfig
from deepresearch.policies.resilience.retry import RetryPolicy
from deepresearch.providers.llm.extractive import ExtractiveLLM
from deepresearch.providers.llm.openai_compat import OpenAICompatLLM
from deepresearch.providers.llm.pricing import reply_cost, total_usd
from deepresearch.providers.llm.registry import (
    LLMKeys,
    build_llm,
    build_router,
    check_router,
    keys_from_env,
    role_chain,
)
from deepresearch.providers.llm.router import Router
from deepresearch.providers.llm.structured import build_request, call_structured
from deepresearch.providers.testing.openai_server import (
    ScriptedOpenAIServer,
    rate_limited,
    reply,
    server_error,
)
from deepresearch.providers.testing.scripted_llm import ScriptedLLM, ScriptedReply
from deepresearch.schemas import Role

KEY = "sk-router-SECRET-abcdef0123456789"
GOOD = '{"queries": ["q1", "q2"]}'
BREAKER = BreakerConfig(failure_threshold=2, reset_timeout_s=30.0, half_open_max_calls=1)
RETRY = RetryPolicy(attempts=3, base_delay_s=1.0, max_delay_s=4.0, retry_after_cap_s=10.0)


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _request(role: Role = "researcher") -> Any:
    return build_request(role, QueriesTask(question="Apple gross margin"), QueryList)


def _router(tiers: list[Any], t: FakeClock, **kw: Any) -> Router:
    return Router(tiers, BREAKER, RETRY, clock=t, sleep=t.sleep, rand=lambda: 0.5, **kw)


def _failing(name: str, n: int, retryable: bool = False) -> ScriptedLLM:
    err = ProviderError(name, "boom", retryable)
    return ScriptedLLM({"researcher": [err] * n}, name=name)


async def test_429_waits_retry_after_once_then_falls_to_next_tier(http: httpx.AsyncClient) -> None:
    t = FakeClock(1000.0)
    async with ScriptedOpenAIServer([rate_limited("3"), rate_limited("3")]) as server:
        openai_tier = OpenAICompatLLM(SecretStr(KEY), server.base_url, "gpt-4.1-mini", http)
        router = _router([openai_tier, ExtractiveLLM()], t)
        result, replies = await call_structured(router, _request(), QueryList)
        server.assert_all_used()
    assert t.slept == [3.0]  # honoured once, then the next tier
    assert replies[0].provider == "extractive"
    assert result.queries
    assert router.answered == {"researcher": ["extractive"]}


async def test_retry_after_is_capped_and_same_tier_answers_after_wait(
    http: httpx.AsyncClient,
) -> None:
    t = FakeClock(1000.0)
    async with ScriptedOpenAIServer([rate_limited("3600"), reply(GOOD, 50, 5)]) as server:
        tier = OpenAICompatLLM(SecretStr(KEY), server.base_url, "gpt-4.1-mini", http)
        out = await _router([tier, ExtractiveLLM()], t).complete(_request())
        server.assert_all_used()
    assert t.slept == [RETRY.retry_after_cap_s]
    assert (out.provider, out.input_tokens, out.output_tokens) == ("openai", 50, 5)


async def test_retryable_errors_retry_per_policy_then_fall_through(
    http: httpx.AsyncClient,
) -> None:
    t = FakeClock(1000.0)
    async with ScriptedOpenAIServer([server_error()] * 3) as server:
        tier = OpenAICompatLLM(SecretStr(KEY), server.base_url, "m", http)
        breaker = BreakerConfig(failure_threshold=10, reset_timeout_s=30.0, half_open_max_calls=1)
        router = Router(
            [tier, ExtractiveLLM()], breaker, RETRY, clock=t, sleep=t.sleep, rand=lambda: 0.5
        )
        out = await router.complete(_request())
        server.assert_all_used()
    assert out.provider == "extractive"
    assert t.slept == [0.5 * 1.0, 0.5 * 2.0]  # full jitter over 1 s, 2 s


async def test_a_retryable_error_with_retry_after_waits_what_the_server_said() -> None:
    t = FakeClock(1000.0)
    tier = ScriptedLLM({"researcher": [ProviderError("p", "503", True, 2.5), GOOD]}, name="p")
    assert (await _router([tier], t).complete(_request())).provider == "p"
    assert t.slept == [2.5]  # the shared loop (providers.breakers): Retry-After wins over jitter


async def test_breaker_opens_and_skips_the_tier_until_reset() -> None:
    t = FakeClock(1000.0)
    primary = _failing("primary", 2)
    backup = ScriptedLLM({"researcher": [GOOD] * 4}, name="backup")
    states: dict[str, Any] = {}  # the router's breakers, as a crew process shares them
    router = _router([primary, backup], t, breaker_states=states)
    for _ in range(3):
        assert (await router.complete(_request())).provider == "backup"
    assert len(primary.calls) == 2  # the third call never reached the open tier
    assert states["primary:scripted-1"].status == "open"
    t.now += BREAKER.reset_timeout_s
    primary._script["researcher"].append(GOOD)  # it recovered: the half-open probe succeeds
    assert (await router.complete(_request())).provider == "primary"
    assert states["primary:scripted-1"].status == "closed"
    assert router.answered["researcher"] == ["backup", "primary"]


async def test_routers_sharing_breaker_states_skip_a_tier_another_run_opened() -> None:
    """A crew process builds one router per run over one breaker dict: a tier run A found
    failing is not tried again by run B (each run's own router would rediscover it)."""
    t = FakeClock(1000.0)
    shared: dict[str, Any] = {}
    primary_a, primary_b = _failing("primary", 2), _failing("primary", 2)
    backup = ScriptedLLM({"researcher": [GOOD] * 4}, name="backup")
    run_a = _router([primary_a, backup], t, breaker_states=shared)
    run_b = _router([primary_b, backup], t, breaker_states=shared)
    for _ in range(2):
        assert (await run_a.complete(_request())).provider == "backup"
    assert (await run_b.complete(_request())).provider == "backup"
    assert primary_b.calls == []  # B never reached the tier A's failures opened
    assert shared["primary:scripted-1"].status == "open"
    own: dict[str, Any] = {}
    alone = _router([_failing("primary", 2), backup], t, breaker_states=own)  # B would call it
    await alone.complete(_request())
    assert own["primary:scripted-1"].status == "closed"


async def test_all_tiers_failing_is_a_picklable_llm_unavailable() -> None:
    t = FakeClock(1000.0)
    router = _router([_failing("a", 1), _failing("b", 1)], t)
    with pytest.raises(LLMUnavailable) as info:
        await router.complete(_request())
    err = info.value
    assert err.tiers == ("a:scripted-1", "b:scripted-1")
    assert isinstance(err, ProviderError)
    clone = pickle.loads(pickle.dumps(err))
    assert (str(clone), clone.role, clone.tiers) == (str(err), "researcher", err.tiers)


async def test_per_role_chain_and_default_chain() -> None:
    t = FakeClock(1000.0)
    planner = ScriptedLLM({"planner": ['{"complexity": 1, "sub_questions": ["a"]}']}, name="big")
    default = ScriptedLLM({"researcher": [GOOD]}, name="small")
    router = _router([default], t, roles={"planner": [planner, default]})
    plan_request = build_request("planner", PlanTask(query="q"), QueryList)
    assert (await router.complete(plan_request)).provider == "big"
    assert (await router.complete(_request())).provider == "small"
    assert router.tiers() == {
        "default": ["small:scripted-1"],
        "planner": ["big:scripted-1", "small:scripted-1"],
    }


class Ledger:
    def __init__(self, budget_calls: int = 100) -> None:
        self.before: list[tuple[str, str, str, int]] = []
        self.after: list[LLMReply] = []
        self.budget_calls = budget_calls

    async def before_call(self, role: Role, provider: str, model: str, input_tokens: int) -> None:
        if len(self.after) >= self.budget_calls:
            raise BudgetExceeded("cost", 1.0)
        self.before.append((role, provider, model, input_tokens))

    async def after_call(self, role: Role, reply: LLMReply) -> None:
        self.after.append(reply)


async def test_hook_sees_every_call_and_its_cost_matches_the_price_table(
    http: httpx.AsyncClient,
) -> None:
    t = FakeClock(1000.0)
    ledger = Ledger(budget_calls=2)
    steps = [reply(GOOD, 1000, 200), reply(GOOD, 3000, 400)]
    prices = {"gpt-4.1-mini": ModelPrice(input_per_mtok=0.4, output_per_mtok=1.6)}
    async with ScriptedOpenAIServer(steps) as server:
        tier = OpenAICompatLLM(SecretStr(KEY), server.base_url, "gpt-4.1-mini", http)
        router = _router([tier], t, hook=ledger)
        await router.complete(_request())
        await router.complete(_request())
        with pytest.raises(BudgetExceeded):
            await router.complete(_request())
        server.assert_all_used()  # the budget stopped the third call before it was sent
    assert [b[:3] for b in ledger.before] == [("researcher", "openai", "gpt-4.1-mini")] * 2
    assert ledger.before[0][3] > 0
    costs = [reply_cost(r, prices) for r in ledger.after]
    expected = (1000 + 3000) * 0.4 / 1e6 + (200 + 400) * 1.6 / 1e6
    assert total_usd(costs) == pytest.approx(expected)
    assert all(c.priced and not c.estimated_tokens for c in costs)


async def test_key_never_reaches_errors_or_logs(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    t = FakeClock(1000.0)
    from deepresearch.providers.testing.openai_server import Step

    steps = [Step(status=401, error=f"Incorrect API key provided: {KEY}")]
    async with ScriptedOpenAIServer(steps) as server:
        tier = OpenAICompatLLM(SecretStr(KEY), server.base_url, "m", http)
        with pytest.raises(LLMUnavailable) as info:
            await _router([tier], t).complete(_request())
    assert KEY not in f"{info.value} {info.value!r} {info.value.__context__!r}"
    assert all(KEY not in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------- registry


def test_extractive_alone_is_built_bare() -> None:
    settings = load_settings(env={})
    llm = build_router(settings, {})
    assert isinstance(llm, ExtractiveLLM)
    assert isinstance(build_llm("extractive"), ExtractiveLLM)


def test_missing_keys_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_llm("openai", keys={})
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        build_llm("gemini", keys={})
    with pytest.raises(ConfigError, match="unknown provider"):
        build_llm("nope")


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        ({}, {}),
        ({"llm.provider": "openai"}, {}),
        ({"llm.provider": "openai"}, {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}),
        ({"llm.provider": "gemini"}, {"OPENAI_API_KEY": KEY}),
        ({"llm.provider": "gemini"}, {"GOOGLE_API_KEY": "g-key-123"}),
        ({"llm.roles.writer": {"provider": "openai", "model": "m"}}, {}),
        ({"llm.roles.writer": {"provider": "nope", "model": "m"}}, {"OPENAI_API_KEY": KEY}),
        ({"llm.fallback": [{"provider": "gemini", "model": "g"}]}, {}),
    ],
)
def test_the_drivers_check_refuses_what_building_refuses(
    flags: dict[str, Any], env: dict[str, str]
) -> None:
    """A driver checks the run's models without building them (the crew builds them): the
    check and the build accept and refuse the same settings, with the same error."""
    settings = load_settings(overrides=overrides_from_flags(flags), env={})
    try:
        build_router(settings, env)
        built = None
    except ConfigError as exc:
        built = str(exc)
    try:
        check_router(settings, env)
        checked = None
    except ConfigError as exc:
        checked = str(exc)
    assert checked == built


def test_keys_from_env_are_secret() -> None:
    keys = keys_from_env({"OPENAI_API_KEY": KEY, "GOOGLE_API_KEY": "g-key-123"})
    assert keys.openai_api_key is not None and keys.gemini_api_key is not None
    assert keys.gemini_api_key.get_secret_value() == "g-key-123"
    assert KEY not in repr(keys) and KEY not in str(keys)
    assert KEY not in keys.model_dump_json()
    assert pickle.loads(pickle.dumps(keys)) == keys


async def test_local_server_without_key_via_base_url(http: httpx.AsyncClient) -> None:
    llm = build_llm(
        "openai", "llama3:8b", keys={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}, http_client=http
    )
    assert isinstance(llm, OpenAICompatLLM)
    assert llm.model == "llama3:8b"


async def test_build_router_assembles_role_chains(http: httpx.AsyncClient) -> None:
    settings = load_settings(
        env={},
        overrides={
            "llm": {
                "provider": "openai",
                "model": "gpt-4.1-mini",
                "fallback": ["gemini:gemini-2.5-flash", "extractive"],
                "roles": {"writer": "openai:gpt-4.1"},
            }
        },
    )
    keys = LLMKeys(openai_api_key=SecretStr(KEY), gemini_api_key=SecretStr("g"))
    router = build_router(settings, keys, http)
    assert isinstance(router, Router)
    assert router.tiers() == {
        "default": ["openai:gpt-4.1-mini", "gemini:gemini-2.5-flash", "extractive:extractive-v1"],
        "writer": [
            "openai:gpt-4.1",
            "openai:gpt-4.1-mini",
            "gemini:gemini-2.5-flash",
            "extractive:extractive-v1",
        ],
    }
    # one instance per (provider, model): roles share breakers and clients
    assert router.chain("writer")[1] is router.chain("planner")[0]


def test_role_chain_dedupes() -> None:
    llm = LLMSettings(
        provider="extractive", fallback=("extractive",), roles={"planner": "extractive"}
    )  # type: ignore[arg-type]
    assert [t.provider for t in role_chain(llm, "planner")] == ["extractive"]


async def test_scripted_usage_flows_through_router() -> None:
    t = FakeClock(1000.0)
    fake = ScriptedLLM({"researcher": [ScriptedReply(GOOD, 10, 2)]}, name="s")
    out = await _router([fake], t).complete(_request())
    assert (out.input_tokens, out.output_tokens, out.provider) == (10, 2, "s")
