"""The grep provider (real ripgrep, a scripted rg, and the Python fallback) and code: ids."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from deepresearch.errors import FetchBlocked, FetchError, ProviderError
from deepresearch.providers.search import grep as grep_mod
from deepresearch.providers.search.code_files import CodeFiles, parse_code_id
from deepresearch.providers.search.grep import GrepSearch, query_terms

HAVE_RG = shutil.which("rg") is not None


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(
        "import time\n"
        "\n"
        "def parse_retry_after(value):\n"
        "    '''Parse the Retry-After header.'''\n"
        "    return float(value)\n"
    )
    (root / "pkg" / "breaker.py").write_text("class Breaker:\n    retry = 3  # retry count\n")
    (root / "README.md").write_text("Retry logic lives in pkg/retry.py\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.py").write_text("retry secret\n")
    (root / "blob.bin").write_bytes(b"\x00\x01retry after\x00")
    outside = tmp_path / "outside.py"
    outside.write_text("retry after outside the folder\n")
    (root / "link.py").symlink_to(outside)
    return root


def test_query_terms() -> None:
    assert query_terms("how does parse_retry_after handle the Retry-After header") == [
        "parse_retry_after",
        "handle",
        "retry-after",
        "header",
    ]
    assert query_terms('"retry after" in breaker') == ["retry after", "breaker"]
    assert query_terms("the") == ["the"]


async def _check_ranking(provider: GrepSearch) -> None:
    hits = await provider.search("parse retry after", 10)
    assert hits[0].url == "code:pkg/retry.py#L3"  # holds all three terms
    assert hits[0].title == "pkg/retry.py:3" and hits[0].location == "pkg/retry.py, line 3"
    assert hits[0].snippet == "def parse_retry_after(value):"
    assert hits[0].provider == "grep"
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    paths = {h.url.split("#")[0] for h in hits}
    assert "code:.hidden/secret.py" not in paths
    assert "code:blob.bin" not in paths
    assert "code:link.py" not in paths  # a symlink out of the folder is never followed
    assert {"code:pkg/retry.py", "code:pkg/breaker.py", "code:README.md"} <= paths
    assert sum(1 for h in hits if h.url.startswith("code:pkg/retry.py")) <= grep_mod.PER_FILE
    assert await provider.search("zzzzunmatched", 5) == []


@pytest.mark.skipif(not HAVE_RG, reason="ripgrep is not installed")
async def test_with_real_ripgrep(code: Path) -> None:
    await _check_ranking(GrepSearch(code))


async def test_python_fallback_without_rg(code: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_mod.shutil, "which", lambda _name: None)
    await _check_ranking(GrepSearch(code))


def _fake_rg(tmp_path: Path, events: list[dict[str, object]], exit_code: int = 0) -> str:
    """An executable that prints ``events`` as rg --json lines and records its arguments."""
    script = tmp_path / "fake-rg"
    lines = "\n".join(json.dumps(e) for e in events)
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, pathlib\n"
        f"pathlib.Path({str(tmp_path / 'args.txt')!r}).write_text('\\n'.join(sys.argv[1:]))\n"
        f"sys.stdout.write({lines!r} + '\\n')\n"
        "sys.stderr.write('rg: some error\\n')\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def _match(path: str, line: int, text: str) -> dict[str, object]:
    return {
        "type": "match",
        "data": {"path": {"text": path}, "lines": {"text": text + "\n"}, "line_number": line},
    }


async def test_rg_json_is_parsed_and_escapes_dropped(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[dict[str, object]] = [
        {"type": "begin", "data": {"path": {"text": "./pkg/retry.py"}}},
        _match("./pkg/retry.py", 3, "def parse_retry_after(value):"),
        _match("../outside.py", 1, "retry after outside"),
        _match("./link.py", 1, "retry after outside"),
        {"type": "match", "data": {"path": {"bytes": "AAE="}, "lines": {"text": "retry"}}},
        "not an object",  # type: ignore[list-item]
        {"type": "summary", "data": {}},
    ]
    fake = _fake_rg(tmp_path, events)
    monkeypatch.setattr(grep_mod.shutil, "which", lambda _name: fake)
    hits = await GrepSearch(code).search("retry after", 5)
    assert [h.url for h in hits] == ["code:pkg/retry.py#L3"]
    args = (tmp_path / "args.txt").read_text().splitlines()
    assert args[:2] == ["--json", "--ignore-case"] and "--fixed-strings" in args
    assert args[-2:] == ["--", "."]
    assert args[args.index("-e") : args.index("-e") + 4] == ["-e", "retry", "-e", "after"]


async def test_rg_failure_without_matches_is_a_provider_error(
    code: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_rg(tmp_path, [], exit_code=2)
    monkeypatch.setattr(grep_mod.shutil, "which", lambda _name: fake)
    with pytest.raises(ProviderError, match="ripgrep failed: rg: some error") as info:
        await GrepSearch(code).search("retry", 5)
    assert not info.value.retryable


def test_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="not a directory"):
        GrepSearch(tmp_path / "nope")


# ---------------------------------------------------------------- code: ids


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("code:/etc/passwd#L1", FetchBlocked),
        ("code:../outside.py", FetchBlocked),
        ("code:pkg/../../outside.py", FetchBlocked),
        ("code:pkg\\retry.py", FetchBlocked),
        ("code:C:/x.py", FetchBlocked),
        ("code:", FetchError),
        ("code:pkg/retry.py#L0", FetchError),
        ("code:pkg/retry.py#page=2", FetchError),
        ("doc:pkg/retry.py", FetchError),
    ],
)
def test_parse_code_id_refuses(url: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_code_id(url)


async def test_code_files_fetch(code: Path) -> None:
    files = CodeFiles(code)
    assert files.handles("code:pkg/retry.py#L3") and not files.handles("https://x.example/")
    doc = await files.fetch("code:pkg/retry.py#L3")
    assert doc.title == "pkg/retry.py" and doc.location == "pkg/retry.py, line 3"
    assert doc.text.splitlines()[2] == "3  def parse_retry_after(value):"
    assert doc.provider == "grep"
    with pytest.raises(FetchBlocked, match="outside the code folder"):
        await files.fetch("code:link.py")
    with pytest.raises(FetchError, match="no such file"):
        await files.fetch("code:pkg/none.py")
    with pytest.raises(FetchError, match="binary"):
        await files.fetch("code:blob.bin")


async def test_code_files_window_around_the_line(code: Path) -> None:
    big = code / "big.py"
    big.write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    doc = await CodeFiles(code).fetch("code:big.py#L500")
    lines = doc.text.splitlines()
    assert lines[0].split() == ["440", "line", "440"]
    assert lines[-1].split() == ["640", "line", "640"]
    assert os.path.basename(doc.title) == "big.py"
