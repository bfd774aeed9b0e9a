"""POST /runs bodies: strict validation, and options merged over the service's settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from deepresearch.cli_serve import is_loopback
from deepresearch.config.settings import load_settings
from deepresearch.errors import ConfigError
from deepresearch.service.submission import RunCreate, describe_errors, overrides, settings_for


def test_options_become_nested_settings_and_unset_ones_are_left_alone(tmp_path: Path) -> None:
    flags = {
        "state_dir": tmp_path,
        "deep": {"max_parallel": 2},
        "service": {"corpus_roots": [tmp_path]},
    }
    base = load_settings(None, flags, env={})
    body = RunCreate(query="q", mode="deep", corpus=str(tmp_path), max_time_s=30, llm="extractive")
    assert overrides(body) == {
        "run": {"mode": "deep", "max_time_s": 30},
        "corpus": {"path": tmp_path},
        "llm": {"provider": "extractive"},
    }
    merged = settings_for(base, body)
    assert merged.run.mode == "deep" and merged.run.max_time_s == 30
    assert merged.corpus.path == tmp_path.resolve()
    assert merged.deep.max_parallel == 2  # from the service's settings
    assert merged.state_dir == tmp_path  # not the client's to choose


def test_search_chain_is_split_like_the_cli_flag() -> None:
    merged = settings_for(load_settings(None, env={}), RunCreate(query="q", search="local, grep"))
    assert merged.search.providers == ("local", "grep")


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({}, "query", "Field required"),
        ({"query": ""}, "query", "at least 1 character"),
        ({"query": "q", "mode": "slow"}, "mode", "'quick' or 'deep'"),
        ({"query": "q", "max_parallel": 0}, "max_parallel", "greater than or equal to 1"),
        ({"query": "q", "output_dir": "/etc"}, "output_dir", "unknown field"),
    ],
)
def test_bad_bodies_name_the_field(body: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        RunCreate.model_validate(body)
    details = describe_errors(info.value)
    assert details[0]["field"] == field
    assert message in details[0]["message"]


def test_a_bad_value_for_the_whole_tree_is_a_config_error() -> None:
    base = load_settings(None, env={})
    body = RunCreate.model_construct(query="q", max_parallel=500)  # past the body's own checks
    with pytest.raises(ConfigError) as info:
        settings_for(base, body)
    assert "deep.max_parallel" in str(info.value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.4", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
