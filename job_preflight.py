"""The preflight job: does the cluster's Python have what a submitted run needs?

Submitting side only (it talks to the Jobs API); ``preflight.py`` is what runs on the cluster
and stays standard-library only.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deepresearch.errors import ClusterError, InputError
from deepresearch.jobs import TOOL_TAG, JobSpec, Submission, follow, job_id_for, submit


def preflight_submission(spec: JobSpec, package_dir: Path) -> Submission:
    """A job that only runs ``preflight.py`` (stdlib only) under the Python the run would use."""
    entrypoint = shlex.join([spec.python, "-m", "deepresearch.preflight"])
    runtime_env = {"py_modules": [str(package_dir)], "env_vars": {"PYTHONUNBUFFERED": "1"}}
    metadata = {"tool": f"{TOOL_TAG}-preflight", "run_id": spec.run_id}
    job_id = job_id_for(spec.run_id) + "-preflight"
    return Submission(job_id, spec.run_id, entrypoint, runtime_env, metadata)


def preflight_problem(status: str, logs: str, python: str) -> str:
    """What is wrong with the cluster's Python, from the preflight job's end; "" when nothing."""
    from deepresearch import preflight

    for line in logs.splitlines():
        if line.startswith(preflight.MARKER + " "):
            found = json.loads(line[len(preflight.MARKER) + 1 :])
            return preflight.problem(found)
    tail = [line for line in logs.splitlines() if line.strip()][-1:] or [f"job {status}"]
    return f"{python!r} cannot run there ({tail[0][:200]})"


def preflight(
    jobs: Any,
    spec: JobSpec,
    package_dir: Path,
    timeout_s: float = 120.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Run the preflight job and raise one ``ClusterError`` line saying what to do if it fails."""
    sub = preflight_submission(spec, package_dir)
    submit(jobs, sub)
    try:
        status, logs = follow(jobs, sub.job_id, lambda lines: None, 0.25, clock, sleep, timeout_s)
    finally:
        # A check, not a run: keep the job list clean (a job still running or gone: harmless).
        with contextlib.suppress(Exception):
            jobs.delete_job(sub.job_id)
    problem = preflight_problem(status, logs, spec.python)
    if problem:
        raise ClusterError(
            "",
            f"the job's Python on the cluster, {problem}: install ray-deep-research in the "
            "Python that runs Ray on the head and pass --python /path/to/its/bin/python "
            "(ray.job_python), or pass --ship-deps to install the dependencies with the job",
        )


def shipped_requirements() -> tuple[str, ...]:
    """This install's runtime requirements as a ``pip`` list for the job (Ray is already there)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        lines = requires("ray-deep-research") or []
    except PackageNotFoundError:
        raise InputError("--ship-deps needs ray-deep-research installed here") from None
    kept = [line for line in lines if "extra ==" not in line]
    return tuple(line for line in kept if not re.match(r"ray\b(?![-_])", line))
