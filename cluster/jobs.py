"""Submitting a run as a Ray Job, and bringing its report back.

The job runs ``python -m deepresearch job-run`` on the cluster with this package's source shipped
in the ``runtime_env`` (``py_modules``); its third-party dependencies must be in that Python (or
shipped with ``--ship-deps`` as a ``pip`` list). A tiny preflight job (``cluster/job_preflight.py``) first
picks that Python: this driver's own interpreter when the head has its path, else the head's
``python``, and says in one line what to do when neither has everything. The report travels back in
the job's own logs as one delimited, base64-encoded, hashed block: logs are the one channel every
Jobs server keeps, and the encoding means no report text can be mistaken for a delimiter or be
mangled by log handling. Provider keys travel only as ``runtime_env`` env vars the user names with
``--pass-env``; they are never put in the entrypoint, the metadata or anything the job prints.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepresearch.errors import ClusterError, InputError

if TYPE_CHECKING:  # the message models load when a job's output is read, not for `--help`
    from deepresearch.schemas import GateSummary, RunSummary

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
BEGIN = "=====BEGIN DEEP-RESEARCH REPORT====="
END = "=====END DEEP-RESEARCH REPORT====="
GATED = "=====DEEP-RESEARCH GATED====="  # the intent gate answered: no run, no report
TOOL_TAG = "deep-research"
DEFAULT_MAX_UPLOAD_MB = 100.0
# What a job ships: the package's own files and nothing else (an allowlist: whatever lands in
# the repository root, such as dist/, .hypothesis/, reports, .env or tests, stays home). A
# folder is shipped when it is a package (has ``__init__.py``); in each, its ``.py`` files and
# the data files below, as pyproject's package-data lists them.
SHIPPED_DATA: dict[str, tuple[str, ...]] = {
    "": ("py.typed", "pyproject.toml"),
    "prompts": ("*.md", "*.txt", "*.yaml"),
    "config": ("*.yaml",),
    "service/static": ("*.html", "*.js", "*.css"),  # the web page: a data folder, no module
}
NOT_PACKAGES = ("tests", "bench")  # the repository's own, never shipped even as packages


@dataclass(frozen=True)
class JobSpec:
    """What the user asked to submit; ``run_args`` are extra ``job-run`` flags (mode, llm, ...)."""

    query: str
    run_id: str
    corpus: Path | None = None
    remote_corpus: str | None = None
    pass_env: tuple[str, ...] = ()
    run_args: tuple[str, ...] = ()
    auth_mode: str = "disabled"
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB
    pip: tuple[str, ...] = ()  # requirements to install on the cluster (default: none)
    python: str = "python"  # the interpreter the job runs on the cluster


@dataclass(frozen=True)
class Submission:
    job_id: str
    run_id: str
    entrypoint: str
    runtime_env: dict[str, Any] = field(repr=False)  # holds passed env values: never print it
    metadata: dict[str, str]


def job_id_for(run_id: str) -> str:
    return f"deep-research-{run_id}"


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def check_corpus(path: Path, max_upload_mb: float) -> Path:
    """A local corpus travels as the job's working_dir: it must exist and fit the upload limit."""
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise InputError(f"--corpus {path}: not a folder")
    size = folder_size(path)
    if size > max_upload_mb * 1024 * 1024:
        raise InputError(
            f"--corpus {path} is {size / 1024 / 1024:.1f} MiB, over the {max_upload_mb:g} MiB "
            "upload limit: copy it to the cluster and pass --remote-corpus PATH instead"
        )
    return path


def shipped_files(root: Path = PACKAGE_ROOT) -> list[Path]:
    """The package's own files under ``root`` (relative paths): every package's modules and
    its data files (``SHIPPED_DATA``), found by walking packages only."""
    found: list[Path] = []
    packages = [root]
    while packages:
        package = packages.pop()
        found.extend(p.relative_to(root) for p in package.glob("*.py") if p.is_file())
        packages.extend(
            d
            for d in sorted(package.iterdir())
            if d.is_dir() and (d / "__init__.py").is_file() and d.name not in NOT_PACKAGES
        )
    for folder, patterns in SHIPPED_DATA.items():
        for pattern in patterns:
            found.extend(p.relative_to(root) for p in (root / folder).glob(pattern) if p.is_file())
    return sorted(set(found))


def stage_package(dest: Path, root: Path = PACKAGE_ROOT) -> Path:
    """Copy the package's own files to ``dest/deepresearch`` (py_modules ships a folder by its
    name): one ``copytree`` told to leave out everything ``shipped_files`` does not name."""
    shipped = {root / rel for rel in shipped_files(root)}
    folders = {parent for path in shipped for parent in path.parents}

    def left_out(folder: str, names: list[str]) -> list[str]:
        here = Path(folder)
        return [n for n in names if here / n not in shipped and here / n not in folders]

    target = dest / "deepresearch"
    shutil.copytree(root, target, ignore=left_out)
    return target


def passed_env(names: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    missing = [name for name in names if not environ.get(name)]
    if missing:
        raise InputError(f"--pass-env {missing[0]}: not set in this environment")
    return {name: environ[name] for name in names}


def build_entrypoint(spec: JobSpec) -> str:
    """The shell command the job runs; holds the query and flags, never a secret."""
    args = [spec.python, "-m", "deepresearch", "job-run", "--run-id", spec.run_id]
    if spec.corpus is not None:
        args += ["--corpus", "."]  # the uploaded working_dir is the job's current directory
    elif spec.remote_corpus is not None:
        args += ["--corpus", spec.remote_corpus]
    args += list(spec.run_args)
    args += ["--", spec.query]
    return shlex.join(args)


def build_submission(
    spec: JobSpec, package_dir: Path, environ: Mapping[str, str] | None = None
) -> Submission:
    """Everything ``submit_job`` needs; validation errors surface before any network call."""
    if spec.corpus is not None and spec.remote_corpus is not None:
        raise InputError("use either --corpus or --remote-corpus, not both")
    env_vars = {"PYTHONUNBUFFERED": "1", "RAY_AUTH_MODE": spec.auth_mode}
    env_vars.update(passed_env(spec.pass_env, os.environ if environ is None else environ))
    runtime_env: dict[str, Any] = {"py_modules": [str(package_dir)], "env_vars": env_vars}
    if spec.corpus is not None:
        runtime_env["working_dir"] = str(check_corpus(spec.corpus, spec.max_upload_mb))
    if spec.pip:
        runtime_env["pip"] = list(spec.pip)
    metadata = {"tool": TOOL_TAG, "run_id": spec.run_id}
    return Submission(
        job_id_for(spec.run_id), spec.run_id, build_entrypoint(spec), runtime_env, metadata
    )


# --- the report block: written by the job, read back by the submitter ---------------------------


def report_block(summary: RunSummary, report: str) -> str:
    """Lines the job prints after the run: summary and report, base64 with a sha256 to check."""
    payload = json.dumps(
        {
            "summary": json.loads(summary.model_dump_json()),
            "report": report,
            "filename": Path(summary.report_path).name if summary.report_path else "",
        }
    ).encode("utf-8")
    encoded = base64.b64encode(payload).decode("ascii")
    lines = [encoded[i : i + 76] for i in range(0, len(encoded), 76)]
    digest = hashlib.sha256(payload).hexdigest()
    return "\n".join([f"{BEGIN} {summary.run_id} sha256={digest}", *lines, END])


@dataclass(frozen=True)
class JobReport:
    summary: RunSummary
    report: str
    filename: str


def parse_report_block(logs: str, run_id: str) -> JobReport | None:
    """The last complete block for ``run_id`` in ``logs``; ``None`` if there is none yet.

    A block whose hash does not match (truncated or interleaved logs) is an error, not a report."""
    lines = logs.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"{BEGIN} {run_id} ")]
    for start in reversed(starts):
        try:
            stop = lines.index(END, start + 1)
        except ValueError:
            continue
        digest = lines[start].rsplit("sha256=", 1)[-1].strip()
        try:
            payload = base64.b64decode("".join(lines[start + 1 : stop]), validate=True)
        except ValueError:
            raise ClusterError("", f"the report block of run {run_id} is damaged") from None
        if hashlib.sha256(payload).hexdigest() != digest:
            raise ClusterError("", f"the report block of run {run_id} failed its hash check")
        data = json.loads(payload)
        from deepresearch.schemas import RunSummary

        return JobReport(
            RunSummary.model_validate(data["summary"]), data["report"], data["filename"]
        )
    return None


def gate_line(run_id: str, summary: GateSummary) -> str:
    """The one line a job prints when the intent gate answered instead of starting the run."""
    encoded = base64.b64encode(summary.model_dump_json().encode("utf-8")).decode("ascii")
    return f"{GATED} {run_id} {encoded}"


def parse_gate_line(logs: str, run_id: str) -> GateSummary | None:
    """The gate's answer for ``run_id`` in ``logs``, or ``None`` when the job ran (or is running)."""
    from deepresearch.schemas import GateSummary

    prefix = f"{GATED} {run_id} "
    for line in reversed(logs.splitlines()):
        if line.startswith(prefix):
            try:
                raw = base64.b64decode(line[len(prefix) :].strip(), validate=True)
                return GateSummary.model_validate_json(raw)
            except ValueError:
                raise ClusterError("", f"the gate line of run {run_id} is damaged") from None
    return None


def visible_lines(chunk: str, inside: bool) -> tuple[list[str], bool]:
    """Log lines worth showing a person while following (the report block is hidden)."""
    shown: list[str] = []
    for line in chunk.splitlines():
        if line.startswith(BEGIN):
            inside = True
        elif line.startswith(GATED):
            continue
        elif line == END:
            inside = False
        elif not inside:
            shown.append(line)
    return shown, inside


# --- the Jobs API -----------------------------------------------------------------------------


def client(address: str, auth_mode: str) -> Any:
    """A JobSubmissionClient, with connection and token failures turned into one clear line."""
    from ray.job_submission import JobSubmissionClient

    from deepresearch.cluster.runtime import set_auth_mode

    set_auth_mode(auth_mode)  # decided by us, never left to an earlier process
    # The SDK logs each package upload at INFO on stderr: chatter between our one-line messages.
    for name in ("ray", "ray.dashboard.modules.dashboard_sdk", "ray.dashboard.modules.job.sdk"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        return JobSubmissionClient(address)
    except Exception as exc:
        raise explain(exc, address, auth_mode) from None


# What the Jobs server answers for an id it does not know (status, logs, stop, delete).
_NO_SUCH_JOB = re.compile(r"status code 404: Job (\S+) does not exist")


def explain(exc: BaseException, address: str, auth_mode: str) -> ClusterError | InputError:
    from deepresearch.cluster.runtime import explain_join_failure

    missing = _NO_SUCH_JOB.search(str(exc))
    if missing is not None:  # the user's id, not the cluster, is wrong
        return InputError(f"no such job {missing.group(1)} at {address}")
    if isinstance(exc, ConnectionError) and "auth" not in str(exc).lower():
        return ClusterError(
            address, "cannot reach the Ray Jobs server (is the head's dashboard running?)"
        )
    return ClusterError(address, explain_join_failure(exc, auth_mode))


def call(address: str, auth_mode: str, action: Callable[[], Any]) -> Any:
    try:
        return action()
    except (InputError, ClusterError):
        raise
    except Exception as exc:
        raise explain(exc, address, auth_mode) from None


AGENT_NOT_READY = "No available agent"
# A busy head may drop the connection mid-request; before the job exists, trying again is safe.
TRANSIENT = (AGENT_NOT_READY, "Connection aborted", "RemoteDisconnected")


def submit(
    jobs: Any,
    sub: Submission,
    wait_s: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Submit ``sub``; retried while the head has no job agent yet.

    A head that just started (or a busy one) answers 500 "No available agent to submit job,
    please try again later" before any job exists, or drops the connection, so retrying with the
    same id is safe: a retry that finds the id taken means the dropped request went through."""
    deadline = clock() + wait_s
    retried = False
    while True:
        try:
            jobs.submit_job(
                entrypoint=sub.entrypoint,
                submission_id=sub.job_id,
                runtime_env=sub.runtime_env,
                metadata=sub.metadata,
            )
            return
        except Exception as exc:
            if retried and "already exists" in str(exc):
                return
            if not any(word in str(exc) for word in TRANSIENT) or clock() > deadline:
                raise
        retried = True
        sleep(2.0)


TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})


def follow(
    jobs: Any,
    job_id: str,
    on_lines: Callable[[list[str]], None],
    poll_s: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    timeout_s: float | None = None,
) -> tuple[str, str]:
    """Show new log lines until the job ends; returns (final status, full logs)."""
    seen = 0
    inside = False
    deadline = None if timeout_s is None else clock() + timeout_s
    while True:
        status = str(jobs.get_job_status(job_id)).rsplit(".", 1)[-1]
        logs: str = jobs.get_job_logs(job_id)
        if len(logs) > seen:
            complete = logs[seen:].rpartition("\n")[0] if status not in TERMINAL else logs[seen:]
            if complete:
                shown, inside = visible_lines(complete, inside)
                if shown:
                    on_lines(shown)
                seen += len(complete) + (1 if status not in TERMINAL else 0)
        if status in TERMINAL:
            return status, logs
        if deadline is not None and clock() > deadline:
            raise ClusterError("", f"job {job_id} did not finish in {timeout_s:g}s")
        sleep(poll_s)


# --- inside the job ---------------------------------------------------------------------------

RUN_ID_PATTERN = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")


def check_run_id(run_id: str) -> str:
    """The run id the submitter chose and printed, refused unless it is one (it names a folder)."""
    if not RUN_ID_PATTERN.match(run_id):
        raise InputError(f"--run-id {run_id!r}: not a run id such as 20260101-120000-ab12cd")
    return run_id
