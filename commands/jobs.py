"""``deep-research submit`` and ``jobs list|status|logs|report|stop``: runs as Ray Jobs.

Also the hidden ``job-run`` command, which is what a submitted job executes on the cluster.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deepresearch import STARTED_AT
from deepresearch.cluster import job_preflight, jobs
from deepresearch.commands.options import (
    EnvName,
    JobsServerURL,
    Name,
    PositiveNumber,
    choice,
    config_option,
    folder,
)
from deepresearch.errors import DeepResearchError, QueryGated, RunInterrupted
from deepresearch.text.terminal import printable

if TYPE_CHECKING:  # settings and messages load inside the commands: --help answers at once
    from deepresearch.schemas import Event

DEFAULT_ADDRESS = "http://127.0.0.1:8265"


def _address_option(func: Any) -> Any:
    return click.option(
        "--address",
        type=JobsServerURL(),
        default=lambda: os.environ.get("RAY_API_SERVER_ADDRESS") or DEFAULT_ADDRESS,
        show_default=DEFAULT_ADDRESS,
        help="The Ray Jobs server (the head's dashboard), e.g. http://head:8265.",
    )(func)


def _auth_option(func: Any) -> Any:
    return click.option(
        "--auth-mode",
        type=choice("disabled", "token"),
        default=None,
        help="Ray token authentication (default: ray.auth_mode from config).",
    )(func)


_config = config_option()


def _auth_mode(config_file: Path | None, auth_mode: str | None) -> str:
    from deepresearch.config.settings import load_settings

    return auth_mode or load_settings(config_file).ray.auth_mode


def _save_report(found: jobs.JobReport, output_dir: Path) -> Path:
    from deepresearch.storage.output_dir import check_output_dir
    from deepresearch.storage.run_dir import create_exclusive

    directory = check_output_dir(output_dir, create=True)
    stem = Path(found.filename or f"{found.summary.run_id}.md").stem

    def name(attempt: int) -> str:
        return f"{stem}.md" if attempt == 0 else f"{stem}-{attempt}.md"

    return create_exclusive(directory, name, found.report.encode("utf-8"))


def _finish(
    job_id: str, run_id: str, status: str, logs: str, output_dir: Path, as_json: bool = False
) -> None:
    """Save the downloaded report and exit like ``run`` would (0, 3 no answer, 130 stopped; a
    query the intent gate answered: its reply, exit 0, 3 or 2 by outcome).

    With ``as_json`` the last stdout line is the run's summary as one object, ``job_id`` added and
    ``report_path`` the downloaded file (so stdout stays JSON lines)."""
    gated = jobs.parse_gate_line(logs, run_id)
    if gated is not None:
        from deepresearch.commands.gated import answer_gated

        answer_gated(QueryGated(gated.outcome, gated.reply, gated.reason), gated.query, as_json)
    found = jobs.parse_report_block(logs, run_id)
    if found is not None:
        path = _save_report(found, output_dir)
        if as_json:
            row = {"job_id": job_id, **found.summary.model_dump(mode="json")}
            click.echo(json.dumps({**row, "report_path": str(path)}))
        else:
            click.echo(str(path))
        if found.summary.status == "no_answer":
            click.echo(printable(f"deep-research: no answer: {found.summary.reason}"), err=True)
            raise SystemExit(3)
        return
    if status == "STOPPED":
        raise RunInterrupted(run_id)
    tail = [line for line in logs.splitlines() if line.strip()][-1:] or ["no output"]
    raise DeepResearchError(f"job {job_id} ended {status} without a report: {tail[0][:300]}")


@click.command("submit")
@click.argument("query")
@_address_option
@click.option("--mode", type=choice("quick", "deep"), default=None)
@click.option(
    "--corpus",
    type=folder(),
    default=None,
    help="Local folder uploaded with the job (size-limited).",
)
@click.option(
    "--remote-corpus", type=Name(slashes=True), default=None, help="A corpus folder on the cluster."
)
@click.option("--follow", is_flag=True, help="Stream the job's output and download the report.")
@click.option("--output-dir", type=click.Path(path_type=Path), default=None)
@click.option(
    "--pass-env",
    type=EnvName(),
    multiple=True,
    help="Env var (e.g. OPENAI_API_KEY) to hand to the job; repeatable. Values are never printed.",
)
@click.option("--llm", default=None, help="LLM provider for the run.")
@click.option("--model", default=None, help="Model name for the LLM provider.")
@click.option("--search", default=None, help="Search provider chain for the run.")
@click.option("--max-parallel", type=int, default=None)
@click.option("--max-time", type=float, default=None)
@click.option(
    "--max-upload-mb",
    type=PositiveNumber(),
    default=jobs.DEFAULT_MAX_UPLOAD_MB,
    show_default=True,
)
@click.option(
    "--python",
    "job_python",
    default=None,
    help="The job's Python on the cluster (default: ray.job_python, 'python' on the head's PATH).",
)
@click.option(
    "--ship-deps",
    is_flag=True,
    help="Install the dependencies with the job (Ray runtime_env pip; needs a package index).",
)
@click.option(
    "--no-preflight",
    is_flag=True,
    help="Skip the check that the cluster's Python has the dependencies.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="JSON lines on stdout: the job and run ids; with --follow, then the run's summary.",
)
@_auth_option
@_config
def submit_cmd(query: str, address: str, **o: Any) -> None:
    """Submit QUERY as a Ray Job; prints the job id and the run id."""
    from deepresearch.config.settings import load_settings, overrides_from_flags
    from deepresearch.run.driver import check_query
    from deepresearch.storage.output_dir import check_output_dir
    from deepresearch.storage.report_path import default_directory
    from deepresearch.storage.run_dir import new_run_id

    # The run's flags are checked here by the config's own rules, not after an upload.
    flags = {
        "run.mode": o["mode"],
        "llm.provider": o["llm"],
        "llm.model": o["model"],
        "search.providers": o["search"],
        "deep.max_parallel": o["max_parallel"],
        "run.max_time_s": o["max_time"],
        "ray.job_python": o["job_python"],
    }
    settings = load_settings(o["config_file"], overrides_from_flags(flags))
    check_query(query, settings)
    if o["llm"] is not None:
        from deepresearch.providers.llm.registry import check_llm_name

        check_llm_name(settings.llm.provider)
    if o["search"] is not None:
        from deepresearch.providers.search.registry import check_search_name

        for name in settings.search.providers:
            check_search_name(name)
    auth_mode = o["auth_mode"] or settings.ray.auth_mode
    output_dir = Path(o["output_dir"] or default_directory(settings.run.output_dir))
    if o["follow"]:
        check_output_dir(output_dir)  # fail before the job runs, not after
    job_python = settings.ray.job_python
    named = job_python if job_python != job_preflight.DEFAULT_PYTHON else o["job_python"]
    if o["ship_deps"] and job_python != "python":
        raise click.UsageError("--ship-deps installs into the job's own environment: drop --python")
    run_args: list[str] = []
    for flag in ("mode", "llm", "model", "search", "max_parallel", "max_time"):
        if o[flag] is not None:
            run_args += ["--" + flag.replace("_", "-"), str(o[flag])]
    spec = jobs.JobSpec(
        query=query,
        run_id=new_run_id(time.time(), os.urandom(3)),
        corpus=o["corpus"],
        remote_corpus=o["remote_corpus"],
        pass_env=tuple(o["pass_env"]),
        run_args=tuple(run_args),
        auth_mode=auth_mode,
        max_upload_mb=o["max_upload_mb"],
        pip=job_preflight.shipped_requirements() if o["ship_deps"] else (),
        python=job_python,
    )
    with tempfile.TemporaryDirectory(prefix="deep-research-pkg-") as staging:
        package = jobs.stage_package(Path(staging))
        sub = jobs.build_submission(spec, package)
        api = jobs.client(address, auth_mode)
        if not (o["no_preflight"] or o["ship_deps"]):
            tried = job_preflight.candidates(named, sys.executable)
            found = jobs.call(
                address,
                auth_mode,
                lambda: job_preflight.preflight(api, spec, package, tried=tried),
            )
            spec = dataclasses.replace(spec, python=found)
            sub = jobs.build_submission(spec, package)
        jobs.call(address, auth_mode, lambda: jobs.submit(api, sub))
    if o["as_json"]:
        click.echo(json.dumps({"job_id": sub.job_id, "run_id": sub.run_id}))
    else:
        click.echo(f"job {sub.job_id}\nrun {sub.run_id}", err=o["follow"])
    if not o["follow"]:
        return

    def show(lines: list[str]) -> None:
        for line in lines:
            click.echo(line, err=True)

    status, logs = jobs.call(address, auth_mode, lambda: jobs.follow(api, sub.job_id, show))
    try:
        _finish(sub.job_id, sub.run_id, status, logs, output_dir, o["as_json"])
    except DeepResearchError as exc:  # the final JSON line says how it ended, stderr says why
        if o["as_json"]:
            ended = "interrupted" if isinstance(exc, RunInterrupted) else "failed"
            row = {"job_id": sub.job_id, "run_id": sub.run_id, "status": ended}
            click.echo(json.dumps({**row, "report_path": None, "reason": str(exc)}))
        raise


@click.group("jobs")
def jobs_group() -> None:
    """Runs submitted as Ray Jobs: list them, see status and logs, fetch reports, stop them."""


@jobs_group.command("list")
@_address_option
@click.option("--all", "show_all", is_flag=True, help="Include jobs not submitted by this tool.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@_auth_option
@_config
def list_cmd(
    address: str, show_all: bool, as_json: bool, auth_mode: str | None, config_file: Path | None
) -> None:
    mode = _auth_mode(config_file, auth_mode)
    api = jobs.client(address, mode)
    for info in jobs.call(address, mode, api.list_jobs):
        meta = info.metadata or {}
        if not show_all and meta.get("tool") != jobs.TOOL_TAG:
            continue
        job_id = info.submission_id or info.job_id
        status = str(info.status).rsplit(".", 1)[-1]
        if as_json:
            click.echo(
                json.dumps({"job_id": job_id, "status": status, "run_id": meta.get("run_id")})
            )
        else:
            click.echo(f"{job_id}  {status:<9}  {meta.get('run_id', '-')}")


@jobs_group.command("status")
@click.argument("job_id", type=Name())
@_address_option
@_auth_option
@_config
def status_cmd(job_id: str, address: str, auth_mode: str | None, config_file: Path | None) -> None:
    mode = _auth_mode(config_file, auth_mode)
    api = jobs.client(address, mode)
    info = jobs.call(address, mode, lambda: api.get_job_info(job_id))
    row = {
        "job_id": job_id,
        "status": str(info.status).rsplit(".", 1)[-1],
        "run_id": (info.metadata or {}).get("run_id"),
        "message": info.message,
    }
    click.echo(json.dumps(row))


@jobs_group.command("logs")
@click.argument("job_id", type=Name())
@_address_option
@click.option("--follow", is_flag=True, help="Keep printing until the job ends.")
@_auth_option
@_config
def logs_cmd(
    job_id: str, address: str, follow: bool, auth_mode: str | None, config_file: Path | None
) -> None:
    """The job's output (the encoded report block is left out; use ``jobs report``)."""
    mode = _auth_mode(config_file, auth_mode)
    api = jobs.client(address, mode)
    if follow:
        jobs.call(address, mode, lambda: jobs.follow(api, job_id, lambda ls: _echo_all(ls)))
        return
    text = jobs.call(address, mode, lambda: api.get_job_logs(job_id))
    _echo_all(jobs.visible_lines(text, False)[0])


def _echo_all(lines: list[str]) -> None:
    for line in lines:
        click.echo(line)


@jobs_group.command("report")
@click.argument("job_id", type=Name())
@_address_option
@click.option("--output-dir", type=click.Path(path_type=Path), default=None)
@_auth_option
@_config
def report_cmd(
    job_id: str,
    address: str,
    output_dir: Path | None,
    auth_mode: str | None,
    config_file: Path | None,
) -> None:
    """Download a finished job's report into the output directory."""
    from deepresearch.config.settings import load_settings
    from deepresearch.storage.report_path import default_directory

    settings = load_settings(config_file)
    mode = auth_mode or settings.ray.auth_mode
    api = jobs.client(address, mode)
    info = jobs.call(address, mode, lambda: api.get_job_info(job_id))
    run_id = (info.metadata or {}).get("run_id", "")
    logs = jobs.call(address, mode, lambda: api.get_job_logs(job_id))
    status = str(info.status).rsplit(".", 1)[-1]
    directory = Path(output_dir or default_directory(settings.run.output_dir))
    _finish(job_id, run_id, status, logs, directory)


@jobs_group.command("stop")
@click.argument("job_id", type=Name())
@_address_option
@_auth_option
@_config
def stop_cmd(job_id: str, address: str, auth_mode: str | None, config_file: Path | None) -> None:
    """Stop a job; its run is interrupted with the checkpoint kept."""
    mode = _auth_mode(config_file, auth_mode)
    api = jobs.client(address, mode)
    stopped = jobs.call(address, mode, lambda: api.stop_job(job_id))
    click.echo(f"job {job_id}: {'stopping' if stopped else 'already finished'}")


def _print_event(events: list[Event]) -> None:
    for event in events:
        payload = printable(json.dumps(event.payload, ensure_ascii=False))
        click.echo(f"{event.seq:>5} {event.type:<20} {payload[:140]}", err=True)


@click.command("job-run", hidden=True)
@click.argument("query")
@click.option("--run-id", required=True)
@click.option("--mode", type=choice("quick", "deep"), default=None)
@click.option("--corpus", type=click.Path(path_type=Path), default=None)
@click.option("--llm", default=None)
@click.option("--model", default=None)
@click.option("--search", default=None)
@click.option("--max-parallel", type=int, default=None)
@click.option("--max-time", type=float, default=None)
def job_run_cmd(query: str, run_id: str, **o: Any) -> None:
    """Inside a Ray Job: join the job's cluster, run, and print the report block."""
    from deepresearch.config.settings import load_settings, overrides_from_flags
    from deepresearch.run import driver

    auth = os.environ.get("RAY_AUTH_MODE")
    flags = {
        "run.mode": o["mode"],
        "corpus.path": o["corpus"],
        "llm.provider": o["llm"],
        "llm.model": o["model"],
        "search.providers": o["search"],
        "deep.max_parallel": o["max_parallel"],
        "run.max_time_s": o["max_time"],
        "run.output_dir": tempfile.mkdtemp(prefix="deep-research-job-"),
        "ray.address": os.environ.get("RAY_ADDRESS") or "auto",  # the job's own cluster
        "ray.auth_mode": auth if auth in ("disabled", "token") else None,
    }
    settings = load_settings(None, overrides_from_flags(flags))
    if o["corpus"] == Path("."):  # uploaded with this job: only this job's own crew can read it
        flags["ray.crew.name"] = f"{settings.ray.crew.name}-{run_id}"[:64]
        flags["ray.crew.detached"] = False
        settings = load_settings(None, overrides_from_flags(flags))
    try:
        prep = driver.prepare(query, settings.run.mode, settings, run_id=jobs.check_run_id(run_id))
        prep = dataclasses.replace(prep, started=STARTED_AT)
    except QueryGated as gated:  # the job ends with the gate's outcome: no run, no report
        from deepresearch.run.intent_gate import exit_code, gate_summary

        click.echo(jobs.gate_line(run_id, gate_summary(gated, query.strip())))
        click.echo(printable(f"deep-research: {gated.reply}"), err=True)
        raise SystemExit(exit_code(gated)) from None
    from deepresearch.actors import crew

    summary = driver.execute(prep, _print_event, crew=crew)
    report = Path(summary.report_path).read_text("utf-8") if summary.report_path else ""
    click.echo(jobs.report_block(summary, report))
    if summary.status == "no_answer":
        raise SystemExit(3)


def register(group: click.Group) -> None:
    if "submit" not in group.commands:
        group.add_command(submit_cmd)
        group.add_command(jobs_group)
        group.add_command(job_run_cmd)
