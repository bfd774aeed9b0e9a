"""Options shared by several commands, defined once so their spelling and meaning never drift.

The parameter types here are where a flag's rule lives: click applies them before a command
runs (defaults and environment values included), so bad input is one ``Invalid value`` line and
exit 2 before anything starts, whichever command takes the flag.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import click

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:  # generic only in newer click: subscripted for mypy, plain at run time
    _TextType = click.ParamType[str]
else:
    _TextType = click.ParamType


def config_option(help: str = "YAML settings file.") -> Callable[[F], F]:
    """``--config FILE`` → the ``config_file`` argument (None: defaults, env and flags only)."""
    return click.option(
        "--config", "config_file", type=click.Path(path_type=Path), default=None, help=help
    )


def choice(*values: str) -> click.Choice[str]:
    """A choice matched in any case and passed on in its canonical spelling (``Deep`` → ``deep``)."""
    return click.Choice(values, case_sensitive=False)


def folder() -> click.Path:
    """A folder on this machine that must exist now (a corpus, a code tree, a corpus root):
    a long-lived ``serve`` or a run would otherwise start and fail on it later."""
    return click.Path(exists=True, file_okay=False, path_type=Path)


class JobsServerURL(_TextType):
    """The Ray Jobs server's ``http(s)://host[:port]``. Anything else reaches Ray's SDK, which
    reads the scheme as a module name and answers "Module: ftp does not exist"."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value).strip()
        parts = urlsplit(text)
        try:
            port_ok = parts.port is None or parts.port > 0
        except ValueError:
            port_ok = False
        if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
            self.fail(
                f"{value!r} is not the http(s) URL of a Ray Jobs server (e.g. http://head:8265)",
                param,
                ctx,
            )
        return text


class RunId(_TextType):
    """A run's id as a folder name under the state directory (``runs.check_run_id``)."""

    name = "RUN_ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from deepresearch.errors import InputError
        from deepresearch.storage.runs import check_run_id

        try:
            return check_run_id(str(value))
        except InputError as exc:
            self.fail(str(exc), param, ctx)


class RayAddress(_TextType):
    """A Ray cluster to join (``ray.address``'s rule, ``check_ray_address``), checked before
    the command starts: ``resume`` takes it outside the config tree."""

    name = "ADDRESS"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from deepresearch.config.settings import check_ray_address

        try:
            return check_ray_address(str(value))
        except ValueError as exc:
            self.fail(f"{value!r}: {exc}", param, ctx)


class PositiveNumber(click.FloatRange):
    """A finite number above zero (click's range alone lets ``nan`` through: it compares false)."""

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        number = float(super().convert(value, param, ctx))
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class Name(_TextType):
    """A non-empty name without spaces or slashes: a job id, a folder on the cluster."""

    name = "TEXT"

    def __init__(self, slashes: bool = False) -> None:
        self.slashes = slashes

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.strip():
            self.fail("must not be empty", param, ctx)
        if not self.slashes and ("/" in text or text != text.strip()):
            self.fail(f"{text!r} has a slash or spaces", param, ctx)
        return text


class EnvName(_TextType):
    """An environment variable's name. What is not one is never echoed: a user who typed
    ``--pass-env KEY=sk-...`` or pasted the key itself would see the secret in the error."""

    name = "NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) is None:
            self.fail(
                "takes a variable's name, e.g. OPENAI_API_KEY (the value not shown)", param, ctx
            )
        return text
