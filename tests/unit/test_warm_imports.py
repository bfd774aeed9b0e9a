"""A warm run's driver (a head running, the corpus indexed) loads only what it uses: the gate,
the settings, the run's record and report. The research machinery, numpy, the BM25 index, the
extractors and the HTTP client belong to the crew's processes. It matters because the driver
decodes the handles of the crew's actors, and Ray imports each actor's module to do that, so the
actor modules keep their machinery inside the methods that use it. bench/startup.py --head shows
where a run's time goes; this test checks ``sys.modules`` in a fresh process, not a timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inline_pool import InlinePool

from deepresearch.providers.search.corpus_index import CorpusIndex

# What the ``run`` command does before it joins the cluster, for real, then the crew classes
# whose handles it decodes there (Ray imports their modules) and the progress display it shows.
SCRIPT = r"""
import json, sys
from pathlib import Path
from deepresearch import cli; from deepresearch.actors import crew; from deepresearch.run import driver; from deepresearch.cluster import runtime
from deepresearch.config.settings import load_settings, overrides_from_flags

corpus, cache, state, out = (Path(a) for a in sys.argv[1:5])
flags = {"corpus.path": corpus, "corpus.cache_dir": cache, "state_dir": state,
         "run.output_dir": out}
settings = load_settings(None, overrides_from_flags(flags), env={})
prep = driver.prepare("What was Acme's total net sales for the quarter?", "quick", settings)
for kind in ("run_host", "researcher", "search_gateway", "evaluator", "ledger"):
    crew.crew_member(kind)
from deepresearch.commands.console import ProgressDisplay
print(json.dumps({"run": prep.request.run_id, "modules": sorted(sys.modules)}))
"""
# Top-level packages, and our modules by prefix, that only the crew's processes need.
CREW_ONLY = ("numpy", "bm25s", "pypdfium2", "trafilatura", "httpx", "pygments", "openai")
CREW_ONLY_OURS = (
    "deepresearch.per_run.coordinator",
    "deepresearch.actors.researcher",
    "deepresearch.actors.evaluator",
    "deepresearch.actors.search_gateway",
    "deepresearch.prompts",
    "deepresearch.providers.llm.extractive",
    "deepresearch.providers.search.corpus_index",
    "deepresearch.domains",
    "deepresearch.policies.search.ranking",
)


def test_a_warm_runs_driver_imports_only_what_it_uses(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "acme.md").write_text("# Acme 10-Q\nTotal net sales were 1,234 million.\n")
    cache = tmp_path / "cache"
    CorpusIndex.open(corpus, cache, passage_chars=1000, pool_factory=InlinePool)  # warm
    args = [str(corpus), str(cache), str(tmp_path / "state"), str(tmp_path / "out")]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (tmp_path / "state" / "runs" / out["run"]).is_dir()  # prepare ran to the end
    modules: list[str] = out["modules"]
    assert "deepresearch.actors.run_host" in modules and "deepresearch.run.intent_gate" in modules
    loaded = [m for m in modules if m.split(".")[0] in CREW_ONLY or m.startswith(CREW_ONLY_OURS)]
    assert loaded == []
