"""Options shared by several commands, defined once so their spelling and meaning never drift."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def config_option(help: str = "YAML settings file.") -> Callable[[F], F]:
    """``--config FILE`` → the ``config_file`` argument (None: defaults, env and flags only)."""
    return click.option(
        "--config", "config_file", type=click.Path(path_type=Path), default=None, help=help
    )


def choice(*values: str) -> click.Choice[str]:
    """A choice matched in any case and passed on in its canonical spelling (``Deep`` → ``deep``)."""
    return click.Choice(values, case_sensitive=False)
