"""The preflight job: which Python on the cluster has what a submitted run needs?

Unless the user named one (``--python``, ``ray.job_python``), two are tried in one job: this
driver's own interpreter, by its path (a head on this machine, or started from the same image,
has it: the head's bare ``python`` is often another, without the dependencies), then the head's
``python``. The first that has everything runs the job. The check job always ends SUCCEEDED
(what it found is in its logs) and is left in place: deleting a job just after it ends races
Ray's job monitor, which then records the deleted job again as FAILED ("Job supervisor actor
died") for ``jobs list --all`` to show.

Submitting side only (it talks to the Jobs API); ``cluster/dependency_check.py`` is what runs on the cluster
and stays standard-library only.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepresearch.cluster.jobs import TOOL_TAG, JobSpec, Submission, follow, job_id_for, submit
from deepresearch.errors import ClusterError, InputError

DEFAULT_PYTHON = "python"  # ray.job_python's default: whatever the head's PATH offers


def candidates(named: str | None, driver: str) -> tuple[str, ...]:
    """The Pythons to try on the cluster, best first: the one the user named, else this
    driver's interpreter (by its path) and then the head's ``python``."""
    if named:
        return (named,)
    return tuple(dict.fromkeys(p for p in (driver, DEFAULT_PYTHON) if p))


def preflight_entrypoint(tried: Sequence[str]) -> str:
    """One Python: run the check under it. Several: each that exists on the head reports under
    its name. The job succeeds whatever they say: the submitter judges the reports."""
    if len(tried) == 1:
        return shlex.join([tried[0], "-m", "deepresearch.cluster.dependency_check"]) + "; true"
    checks = [
        f"command -v {q} >/dev/null 2>&1 && {q} -m deepresearch.cluster.dependency_check {q}"
        for q in map(shlex.quote, tried)
    ]
    return "; ".join([*checks, "true"])


def preflight_submission(
    spec: JobSpec, package_dir: Path, tried: Sequence[str] | None = None
) -> Submission:
    """A job that only runs ``cluster/dependency_check.py`` (stdlib only) under the Python(s) to try."""
    entrypoint = preflight_entrypoint(tried or (spec.python,))
    runtime_env = {"py_modules": [str(package_dir)], "env_vars": {"PYTHONUNBUFFERED": "1"}}
    metadata = {"tool": f"{TOOL_TAG}-preflight", "run_id": spec.run_id}
    job_id = job_id_for(spec.run_id) + "-preflight"
    return Submission(job_id, spec.run_id, entrypoint, runtime_env, metadata)


@dataclass(frozen=True)
class PythonFound:
    """This Python on the cluster has every dependency: the job runs under it."""

    python: str


@dataclass(frozen=True)
class PythonLacking:
    """No Python tried has everything: ``problem`` says what the first one that ran lacks."""

    problem: str


def judge(status: str, logs: str, tried: Sequence[str]) -> PythonFound | PythonLacking:
    """The first Python in ``tried`` whose report has nothing missing, from the job's logs."""
    from deepresearch.cluster import dependency_check as preflight

    reports: dict[str, dict[str, object]] = {}
    for line in logs.splitlines():
        if line.startswith(preflight.MARKER + " "):
            found = json.loads(line[len(preflight.MARKER) + 1 :])
            reports.setdefault(str(found.get("as") or tried[0]), found)
    for python in tried:
        if python in reports and not preflight.problem(reports[python]):
            return PythonFound(python)
    for python in tried:
        if python in reports:
            return PythonLacking(preflight.problem(reports[python]))
    tail = [line for line in logs.splitlines() if line.strip()][-1:] or [f"job {status}"]
    names = " or ".join(repr(python) for python in tried)
    return PythonLacking(f"{names} cannot run there ({tail[0][:200]})")


def preflight_problem(status: str, logs: str, python: str) -> str:
    """What is wrong with the cluster's ``python``, from the preflight job's end; "" when nothing."""
    verdict = judge(status, logs, (python,))
    return verdict.problem if isinstance(verdict, PythonLacking) else ""


def preflight(
    jobs: Any,
    spec: JobSpec,
    package_dir: Path,
    timeout_s: float = 120.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    tried: Sequence[str] | None = None,
) -> str:
    """Run the preflight job; the Python to run the job under (the first of ``tried``, default
    ``spec.python``, that has everything), or one ``ClusterError`` line saying what to do."""
    tried = tuple(tried or (spec.python,))
    sub = preflight_submission(spec, package_dir, tried)
    submit(jobs, sub)
    status, logs = follow(jobs, sub.job_id, lambda lines: None, 0.25, clock, sleep, timeout_s)
    verdict = judge(status, logs, tried)
    if isinstance(verdict, PythonFound):
        return verdict.python
    raise ClusterError(
        "",
        f"the job's Python on the cluster, {verdict.problem}: install ray-deep-research in the "
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
