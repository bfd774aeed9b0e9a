"""How the e2e and integration tiers start the CLI: the installed executable, and an environment
that keeps the subprocess off the developer's settings (no inherited ``DEEP_RESEARCH_*``, its own
config home, state and cache under the test's folder, Ray's token auth off)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

EXE = shutil.which("deep-research", path=str(Path(sys.executable).parent)) or "deep-research"


def cli_env(
    cwd: Path, extra: Mapping[str, str] | None = None, *, drop: tuple[str, ...] = ()
) -> dict[str, str]:
    """This process's environment without ``DEEP_RESEARCH_*`` (nor names starting with any of
    ``drop``), with the run's state, cache and config under ``cwd``, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEP_RESEARCH_", *drop))}
    env.update(
        {
            "DEEP_RESEARCH_STATE_DIR": str(cwd / "state"),
            "DEEP_RESEARCH_CORPUS__CACHE_DIR": str(cwd / "cache"),
            "XDG_CONFIG_HOME": str(cwd / "xdg"),
            "RAY_AUTH_MODE": "disabled",
        }
    )
    env.update(extra or {})
    return env
