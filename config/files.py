"""Reading settings files: the packaged defaults and the user's YAML, as plain mappings.

Every way a file can be unusable (missing, unreadable, binary, not YAML, nested past what the
parser can hold, not a mapping) becomes one ``ConfigError`` line naming the file.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from deepresearch.errors import ConfigError


def default_user_config() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
    return Path(base).expanduser() / "deep-research" / "config.yaml"


def read_yaml(text: str, origin: str) -> dict[str, Any]:
    if "\x00" in text:  # a binary file decoded by luck: YAML would only say something obscure
        raise ConfigError(origin, "not a YAML text file (it holds binary data)")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(origin, f"not valid YAML ({str(exc).splitlines()[0]})") from None
    except RecursionError:  # PyYAML composes nested nodes recursively
        raise ConfigError(origin, "not a settings file (nested too deeply)") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(origin, "must be a mapping of settings")
    return data


def default_data() -> dict[str, Any]:
    text = resources.files("deepresearch.config").joinpath("default.yaml").read_text("utf-8")
    return read_yaml(text, "default.yaml")


def user_data(config_file: Path | None) -> dict[str, Any]:
    path = config_file if config_file is not None else default_user_config()
    if config_file is None and not path.exists():
        return {}
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read config file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "not a YAML text file (not UTF-8)") from None
    return read_yaml(text, str(path))
