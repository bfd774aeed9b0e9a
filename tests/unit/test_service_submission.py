"""POST /runs bodies: strict validation, and options merged over the service's settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from deepresearch.commands.serve import is_loopback
from deepresearch.config.settings import load_settings
from deepresearch.errors import ConfigError, CorpusError, CorpusRefused
from deepresearch.service.corpus_roots import check_corpus
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


@pytest.mark.parametrize("given", ["html", "HTML", " Html "])
def test_the_report_format_is_any_case_like_the_cli_flag(given: str) -> None:
    body = RunCreate(query="q", format=given)  # type: ignore[arg-type]
    assert overrides(body) == {"run": {"format": "html"}}
    assert settings_for(load_settings(None, env={}), body).run.format == "html"
    assert settings_for(load_settings(None, env={}), RunCreate(query="q")).run.format == "md"


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
        ({"query": "q", "format": "pdf"}, "format", "'md', 'json' or 'html'"),
        ({"query": "q", "format": 3}, "format", "'md', 'json' or 'html'"),
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


def test_strict_types_no_coercion_and_only_finite_numbers() -> None:
    for body in (
        {"query": "q", "max_parallel": "3"},
        {"query": "q", "max_cost_usd": float("inf")},
        {"query": "q", "max_time_s": float("nan")},
        {"query": "q", "max_parallel": 2.5},
        {"query": 42},
    ):
        with pytest.raises(ValidationError):
            RunCreate.model_validate(body)
    ok = RunCreate.model_validate({"query": "q", "max_time_s": 30, "max_cost_usd": 0.5})
    assert ok.max_time_s == 30.0 and ok.max_cost_usd == 0.5


def test_a_corpus_must_lie_under_a_root_after_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    (root / "team" / "docs").mkdir(parents=True)
    secret = tmp_path / "private"
    secret.mkdir(mode=0o700)
    (root / "escape").symlink_to(secret, target_is_directory=True)
    (root / "team" / "inner").symlink_to(root / "team" / "docs", target_is_directory=True)
    (root / "file.txt").write_text("x")

    assert check_corpus(str(root / "team" / "docs"), [root]) == (root / "team" / "docs").resolve()
    assert check_corpus(str(root / "team" / "inner"), [root]) == (root / "team" / "docs").resolve()
    assert check_corpus(str(root), [root]) == root.resolve()
    refused = [
        "/etc",
        str(secret),
        str(root / "escape"),  # a link inside the root that points out
        str(root / "team" / ".." / ".." / "private"),
        str(root / "missing"),
        "corpora/team",  # relative: relative to what?
        "~/",
    ]
    for corpus in refused:
        with pytest.raises(CorpusRefused):
            check_corpus(corpus, [root])
    with pytest.raises(CorpusError, match="not a folder"):
        check_corpus(str(root / "file.txt"), [root])
    with pytest.raises(CorpusRefused, match="corpus_roots is empty"):
        check_corpus(str(root / "team"), [])
    with pytest.raises(CorpusRefused):
        check_corpus(str(root / "team"), [tmp_path / "no-such-root"])


def test_settings_for_checks_the_client_corpus_against_the_roots(tmp_path: Path) -> None:
    base = load_settings(None, {"service": {"corpus_roots": [tmp_path / "ok"]}}, env={})
    (tmp_path / "ok").mkdir()
    with pytest.raises(CorpusRefused):
        settings_for(base, RunCreate(query="q", corpus="/etc"))
    chosen = settings_for(base, RunCreate(query="q", corpus=str(tmp_path / "ok")))
    assert chosen.corpus.path == (tmp_path / "ok").resolve()
