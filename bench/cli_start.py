"""How fast the CLI answers when it has nothing to run, as ratios taken in one process run.

Interleaved so machine noise hits every side alike, each a fresh process:
  * the bare import a click + pydantic + yaml CLI pays (``python -c "import click, pydantic, yaml"``),
  * ``deep-research --help``, ``--version`` and a usage error (``run`` without its QUERY).
Prints each command's median over the bare import's median (target <= 4.0: these commands import
neither Ray, nor the providers, nor the text machinery). ``--json`` prints one JSON object.

    python bench/cli_start.py [--repeat 9] [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from printout import show

EXE = shutil.which("deep-research", path=str(Path(sys.executable).parent)) or "deep-research"
TARGET = 4.0
COMMANDS: dict[str, tuple[list[str], int]] = {
    "bare_import": ([sys.executable, "-c", "import click, pydantic, yaml"], 0),
    "help": ([EXE, "--help"], 0),
    "version": ([EXE, "--version"], 0),
    "usage_error": ([EXE, "run"], 2),
}


def timed(cmd: list[str], expected: int, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != expected:
        raise SystemExit(
            f"{cmd[1:]} exited {done.returncode}, not {expected}: {done.stderr[-400:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dr-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEEP_RESEARCH_")}
        env["XDG_CONFIG_HOME"] = tmp  # no user config file read
        for cmd, expected in COMMANDS.values():  # one-off costs (disk cache, .pyc) paid first
            timed(cmd, expected, env)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(args.repeat):
            for name, (cmd, expected) in COMMANDS.items():
                times[name].append(timed(cmd, expected, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    bare = medians["bare_import"]
    result: dict[str, object] = {f"{name}_s": round(s, 3) for name, s in medians.items()}
    for name in COMMANDS:
        if name != "bare_import":
            result[f"{name}_over_bare_import"] = round(medians[name] / bare, 2)
    result["target"] = TARGET
    show(result, args.json)


if __name__ == "__main__":
    main()
