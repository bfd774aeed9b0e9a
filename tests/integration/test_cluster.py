"""A deep run on a real two-node cluster: researchers land on the node that offers their resource.

``ray.cluster_utils.Cluster`` cannot start in a process that already ran ``ray.init`` (this tier
shares one), so the cluster and the run live in a child process that reports back as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SCRIPT = r"""
import json, sys
from pathlib import Path
from ray.cluster_utils import Cluster
from deepresearch.actors import crew
from deepresearch.run import driver
from deepresearch.config.settings import load_settings, overrides_from_flags

corpus, work = Path(sys.argv[1]), Path(sys.argv[2])
cluster = Cluster(
    initialize_head=True,
    head_node_args={"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024},
)
worker = cluster.add_node(
    num_cpus=1, resources={"researcher_node": 2}, object_store_memory=100 * 1024 * 1024
)
try:
    flags = {
        "corpus.path": corpus,
        "corpus.cache_dir": work / "cache",
        "state_dir": work / "state",
        "run.output_dir": work / "out",
        "run.mode": "deep",
        "deep.max_parallel": 2,
        "ray.address": cluster.address,
        "ray.researcher": {"resources": {"researcher_node": 1}},
    }
    settings = load_settings(None, overrides_from_flags(flags), env={})
    prep = driver.prepare("Compare ACME Corp and Globex Inc revenue in Q1 2024", "deep", settings)
    events = []
    summary = driver.execute(prep, events.extend, crew=crew)
    print(json.dumps({
        "status": summary.status,
        "report": summary.report_path,
        "worker": worker.node_id,
        "head": cluster.head_node.node_id,
        "researcher_nodes": [e.payload.get("node") for e in events if e.type == "researcher_started"],
    }))
finally:
    import ray
    ray.shutdown()  # the run joined this cluster (not started here), so it stays connected
    cluster.shutdown()
"""


@pytest.mark.slow
def test_researchers_run_on_the_worker_node_that_offers_their_resource(
    small_corpus: Path,
) -> None:
    work = Path(tempfile.mkdtemp(prefix="drc", dir="/tmp"))  # short: Ray's socket paths are capped
    (work / "out").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEP_RESEARCH_", "RAY_"))}
    env.update({"RAY_AUTH_MODE": "disabled", "RAY_TMPDIR": str(work / "ray")})
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(small_corpus), str(work)],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert result["status"] == "completed"
    nodes = result["researcher_nodes"]
    assert len(nodes) >= 2, result
    assert set(nodes) == {result["worker"]}, result
    assert result["worker"] != result["head"]
