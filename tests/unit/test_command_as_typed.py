"""The Ctrl-C line names the command as the user can type it again (``cli.command_as_typed``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch import cli
from deepresearch.errors import RunInterrupted


def test_on_path_it_is_the_bare_name(tmp_path: Path) -> None:
    exe = tmp_path / "bin" / "deep-research"
    assert cli.command_as_typed(str(exe), [], lambda name: str(exe)) == "deep-research"


def test_off_path_or_another_install_it_is_the_path_typed(tmp_path: Path) -> None:
    mine = ".venv/bin/deep-research"
    assert cli.command_as_typed(mine, [], lambda name: None) == mine
    other = str(tmp_path / "elsewhere" / "deep-research")
    assert cli.command_as_typed(mine, [], lambda name: other) == mine
    assert (
        cli.command_as_typed("my dir/deep-research", [], lambda n: None) == "'my dir/deep-research'"
    )


def test_as_a_module_it_is_the_python_typed() -> None:
    argv = [".venv/bin/python", "-m", "deepresearch", "run", "q"]
    main = "/src/deepresearch/__main__.py"
    assert cli.command_as_typed(main, argv, lambda n: None) == ".venv/bin/python -m deepresearch"


def test_the_interrupted_line_is_not_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise RunInterrupted("20260101-000000-abcdef")

    monkeypatch.setattr(cli.cli, "main", interrupted)
    monkeypatch.setattr(cli.sys, "argv", ["./bin/deep-research"])
    with pytest.raises(SystemExit) as ended:
        cli._main([], debug=False)
    assert ended.value.code == 130
    assert capsys.readouterr().err == (
        "deep-research: interrupted; to continue: ./bin/deep-research resume "
        "20260101-000000-abcdef\n"
    )
