from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.config.settings import load_settings, overrides_from_flags
from deepresearch.errors import ConfigError


def test_defaults_come_from_default_yaml() -> None:
    s = load_settings(env={})
    assert s.llm.provider == "extractive"
    assert s.researcher.batch_sizes == (3, 2, 3)
    assert s.deep.max_parallel == 3


def test_precedence_default_file_env_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("deep:\n  max_parallel: 4\n  target_rounds: 2\nllm:\n  model: from-file\n")
    env = {"DEEP_RESEARCH_DEEP__MAX_PARALLEL": "5", "DEEP_RESEARCH_LLM__CONTEXT_SHARE": "0.5"}
    s = load_settings(cfg, env=env)
    assert s.deep.max_parallel == 5  # env beats file
    assert s.deep.target_rounds == 2  # file beats default
    assert s.llm.model == "from-file"
    assert s.llm.context_share == 0.5
    s = load_settings(cfg, overrides_from_flags({"deep.max_parallel": 2, "llm.model": None}), env)
    assert s.deep.max_parallel == 2  # flags beat env
    assert s.llm.model == "from-file"  # an unset flag changes nothing


def test_nested_defaults_survive_partial_override(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("search:\n  breaker:\n    failure_threshold: 2\n")
    s = load_settings(cfg, env={})
    assert s.search.breaker.failure_threshold == 2
    assert s.search.breaker.reset_timeout_s == 30.0
    assert s.search.providers == ()  # empty: chosen per run (local with a corpus)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("llm:\n  providr: x\n", "llm.providr"),
        ("deep:\n  max_parallel: 0\n", "deep.max_parallel"),
        ("nonsense: 1\n", "nonsense"),
        ("run:\n  mode: fast\n", "run.mode"),
    ],
)
def test_bad_file_values_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    assert info.value.key == key
    assert "\n" not in str(info.value)


def test_bad_env_value_and_unknown_env_key() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env={"DEEP_RESEARCH_DEEP__MAX_PARALLEL": "many"})
    assert info.value.key == "deep.max_parallel"
    with pytest.raises(ConfigError) as info:
        load_settings(env={"DEEP_RESEARCH_BOGUS": "1"})
    assert "BOGUS" in info.value.key


def test_unreadable_or_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_settings(tmp_path / "missing.yaml", env={})
    bad = tmp_path / "bad.yaml"
    bad.write_text("llm: [unclosed\n")
    with pytest.raises(ConfigError):
        load_settings(bad, env={})
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError):
        load_settings(listy, env={})


def test_search_chain_from_comma_string() -> None:
    s = load_settings(None, overrides_from_flags({"search.providers": "local, duckduckgo"}), env={})
    assert s.search.providers == ("local", "duckduckgo")
