"""``--help``, ``--version`` and usage errors answer at once: they import neither Ray, nor the
providers, nor the text machinery, nor pydantic's models (each alone costs several times the
bare import of a click CLI; bench/cli_start.py prints the ratios). A fact about ``sys.modules``
in a fresh process, not a timing."""

from __future__ import annotations

import json
import subprocess
import sys

# Each argv runs through ``python -m deepresearch`` in one fresh process, in turn; what it
# loaded beyond the previous one is reported per argv.
SCRIPT = r"""
import json, runpy, sys
argvs = json.loads(sys.argv[1])
seen, loaded = set(sys.modules), {}
for argv in argvs:
    sys.argv = ["deep-research", *argv]
    try:
        runpy.run_module("deepresearch", run_name="__main__", alter_sys=False)
    except SystemExit:
        pass
    loaded[" ".join(argv)] = sorted(set(sys.modules) - seen)
    seen = set(sys.modules)
print(json.dumps(loaded))
"""

ARGVS = [
    [],
    ["--help"],
    ["--version"],
    ["run"],  # missing QUERY: a usage error
    ["run", "q", "--mode", "fast"],
    ["no-such-command"],
    *([name, "--help"] for name in ("run", "resume", "plan", "runs", "attach", "serve", "mcp")),
    ["submit", "--help"],
    ["jobs", "list", "--help"],
]
# Packages by their top-level name; modules (ours and google's) by prefix.
HEAVY = ("ray", "numpy", "pydantic_core", "httpx", "rich", "openai", "bm25s", "snowballstemmer")
HEAVY += ("pypdfium2", "aiohttp", "mcp", "trafilatura", "json_repair")
OURS_HEAVY = ("google.genai", "deepresearch.providers", "deepresearch.cluster.runtime")
OURS_HEAVY += ("deepresearch.run.driver", "deepresearch.actors.crew", "deepresearch.schemas")
OURS_HEAVY += ("deepresearch.config.settings",)


def heavy(module: str) -> bool:
    if module.split(".")[0] in HEAVY or module.startswith(OURS_HEAVY):
        return True
    return module.startswith("deepresearch.text.") and module != "deepresearch.text.terminal"


def test_help_version_and_usage_errors_import_nothing_heavy() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(ARGVS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(loaded) == len(ARGVS)
    found = {argv: [m for m in modules if heavy(m)] for argv, modules in loaded.items()}
    assert found == {argv: [] for argv in loaded}
    assert "click" in loaded[""]  # the check saw the CLI load at all
