"""Start-up cost of a quick run, as ratios taken in one process run (never absolute pass/fail).

Measures, interleaved so machine noise hits both sides alike:
  * bare ``ray.init`` + ``ray.shutdown`` (the floor any Ray run pays),
  * bare single-process pypdfium2 extraction of the corpus (the floor of indexing),
  * our cold index build (empty cache, subprocess pool) and a cold quick run,
  * our warm quick run (index cached): prepare + actors + report + Ray start/stop.
Prints cold-index-build / bare-extraction (target <= 3.0: the build also rebuilds tables from
word boxes, ``text/pdf_tables.py``) and warm-quick-run / bare-Ray-start-stop
(target <= 1.5). ``--json`` prints one JSON object on stdout.

``--head`` measures what a user of a long-lived cluster pays instead: a Ray head is started once
(``ray start --head``, its own temp dir and port), then, interleaved, a fresh process that runs
``deep-research run QUERY --address HEAD`` (quick, offline, index cached) and a bare fresh process
that connects, runs one remote call and disconnects. Prints run / bare (target <= 1.2: with a
crew that outlives runs, a run costs little more than joining the cluster), then where one more
run's time goes (imports, Ray connection, crew look-up, index check, the run on the crew, report
write, leaving the cluster; the rest is the interpreter's start and exit), from that run's own
timers (``SPLIT``).

    python bench/startup.py [--docs ../shared/data/sec-10q/docs] [--repeat 2] [--json]
    python bench/startup.py --index-only   # the index-build ratio alone, without Ray
    python bench/startup.py --head [--repeat 3]   # quick run against a running head
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from printout import show

REPO = Path(__file__).resolve().parents[1]
QUERY = "What was Apple's total net sales for the quarter ended July 1, 2023?"


def bare_ray(settings: object) -> float:
    import ray

    from deepresearch.cluster import runtime

    start = time.perf_counter()
    conn = runtime.connect(settings.ray)  # type: ignore[attr-defined]
    ray.get(ray.put(1))
    runtime.disconnect(conn)
    return time.perf_counter() - start


def bare_extraction(docs: Path) -> tuple[float, int]:
    import pypdfium2 as pdfium

    start = time.perf_counter()
    pages = 0
    for path in sorted(docs.glob("*.pdf")):
        pdf = pdfium.PdfDocument(path)
        for page in pdf:
            page.get_textpage().get_text_range()
            pages += 1
        pdf.close()
    return time.perf_counter() - start, pages


def make_settings(docs: Path, cache: Path, state: Path, out: Path) -> object:
    from deepresearch.config.settings import load_settings, overrides_from_flags

    flags = {
        "corpus.path": docs,
        "corpus.cache_dir": cache,
        "state_dir": state,
        "run.output_dir": out,
    }
    return load_settings(None, overrides_from_flags(flags), env={})


def quick_run(settings: object) -> tuple[float, float]:
    """(index time inside prepare, whole run time including Ray start and stop)."""
    from deepresearch.actors import crew
    from deepresearch.run import driver

    start = time.perf_counter()
    t0 = time.perf_counter()
    driver.build_index(settings)  # type: ignore[arg-type]
    index_s = time.perf_counter() - t0
    prep = driver.prepare(QUERY, "quick", settings)  # type: ignore[arg-type]
    summary = driver.execute(prep, crew=crew)
    if summary.status != "completed":
        raise SystemExit(f"quick run ended {summary.status}: {summary.reason}")
    return index_s, time.perf_counter() - start


def index_only(docs: Path, as_json: bool) -> None:
    """Bare pypdfium2 extraction, then our cold index build (tables rebuilt), in one run."""
    from deepresearch.run import driver

    with tempfile.TemporaryDirectory(prefix="dr-bench-") as tmp:
        root = Path(tmp)
        extraction_s, pages = bare_extraction(docs)
        settings = make_settings(docs, root / "cache", root / "state", root)
        start = time.perf_counter()
        driver.build_index(settings)  # type: ignore[arg-type]
        index_s = time.perf_counter() - start
    result = {
        "pages": pages,
        "bare_extraction_s": round(extraction_s, 3),
        "cold_index_build_s": round(index_s, 3),
        "cold_index_over_bare_extraction": round(index_s / extraction_s, 3),
        "target": 3.0,
    }
    show(result, as_json)


BARE_CALL = (
    "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
    "ray.get(ray.remote(lambda: 1).options(num_cpus=0).remote()); ray.shutdown()"
)


def start_head(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``ray start --head --block`` in its own process group (stopped by ending that group)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ray_bin = Path(sys.executable).with_name("ray")
    env = {**os.environ, "RAY_TMPDIR": str(root / "ray"), "RAY_AUTH_MODE": "disabled"}
    (root / "ray").mkdir()
    cmd = [str(ray_bin), "start", "--head", "--block", "--port", str(port), "--num-cpus", "2"]
    cmd += ["--include-dashboard", "false", "--object-store-memory", str(256 * 2**20)]
    head = subprocess.Popen(
        cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        probe = subprocess.run(
            [sys.executable, "-c", BARE_CALL, address], env=env, capture_output=True, timeout=120
        )
        if probe.returncode == 0:
            return head, address
        if head.poll() is not None:
            raise SystemExit(f"ray start failed: {head.stderr.read().decode()[-500:]}")  # type: ignore[union-attr]
    raise SystemExit("the Ray head did not come up within 120 s")


# One run through the CLI's own entry point, with timers around the steps of a warm run; what it
# prints on stderr (one JSON line) is the split of that run's time.
SPLIT = r"""
import json, sys, time
begun = time.perf_counter()
spent = {}

def timer(module, name, key):
    inner = getattr(module, name)
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
    setattr(module, name, timed)

from deepresearch import cli; from deepresearch.actors import crew; from deepresearch.run import driver; from deepresearch.cluster import runtime
spent["imports"] = time.perf_counter() - begun
timer(driver, "prepare", "prepare (gate, settings, record)")
timer(driver, "build_index", "index check")
timer(runtime, "connect", "ray connect")
timer(crew, "join", "crew look-up")
timer(driver, "_follow", "run on the crew")
timer(driver, "finish", "report write")
timer(runtime, "leave", "leave the cluster")
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
spent["prepare (gate, settings, record)"] -= spent.get("index check", 0.0)
spent["total in process"] = time.perf_counter() - begun
print(json.dumps({k: round(v, 3) for k, v in spent.items()}), file=sys.stderr)
"""


def split(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds per step of one run (``SPLIT``), and the interpreter's start and exit around it."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"split run exited {done.returncode}: {done.stderr[-800:]}")
    spent: dict[str, float] = json.loads(done.stderr.strip().splitlines()[-1])
    spent["interpreter start and exit"] = round(wall - spent["total in process"], 3)
    spent["wall"] = round(wall, 3)
    return spent


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:4]} exited {done.returncode}: {done.stderr[-800:]}")
    return elapsed


def against_head(docs: Path, repeat: int, as_json: bool) -> None:
    import signal

    with tempfile.TemporaryDirectory(prefix="dr-bench-") as tmp:
        root = Path(tmp)
        head, address = start_head(root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEEP_RESEARCH_")}
        env.update(RAY_TMPDIR=str(root / "ray"), RAY_AUTH_MODE="disabled")
        env["DEEP_RESEARCH_STATE_DIR"] = str(root / "state")
        env["DEEP_RESEARCH_CORPUS__CACHE_DIR"] = str(root / "cache")
        env["DEEP_RESEARCH_RUN__OUTPUT_DIR"] = str(root / "out")
        (root / "out").mkdir()
        run = [sys.executable, "-m", "deepresearch", "run", QUERY, "--corpus", str(docs)]
        run += ["--address", address, "--json"]
        bare = [sys.executable, "-c", BARE_CALL, address]
        try:
            first_s = timed(run, env)  # builds the index cache (and, with a crew, the crew)
            print(f"first run (index and crew cold): {first_s:.2f}s", file=sys.stderr)
            bare_times, run_times = [], []
            for i in range(repeat):
                bare_times.append(timed(bare, env))
                run_times.append(timed(run, env))
                print(
                    f"round {i + 1}: bare connect+call {bare_times[-1]:.2f}s, "
                    f"quick run {run_times[-1]:.2f}s",
                    file=sys.stderr,
                )
            steps = split([sys.executable, "-c", SPLIT, *run[3:]], env)
        finally:
            os.killpg(head.pid, signal.SIGTERM)
            head.wait(timeout=60)
    bare_s, run_s = statistics.median(bare_times), statistics.median(run_times)
    result = {
        "first_run_s": round(first_s, 3),
        "bare_connect_call_s": round(bare_s, 3),
        "quick_run_against_head_s": round(run_s, 3),
        "run_over_bare_connect": round(run_s / bare_s, 3),
        "target": 1.2,
        "split_of_one_run_s": steps,
    }
    show(result, as_json)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--index-only", action="store_true", help="cold index build ratio only")
    parser.add_argument("--head", action="store_true", help="quick runs against a running head")
    args = parser.parse_args()
    if args.head:
        against_head(args.docs, args.repeat, args.json)
        return
    if args.index_only:
        index_only(args.docs, args.json)
        return
    os.environ["RAY_AUTH_MODE"] = "disabled"
    log = sys.stderr

    with tempfile.TemporaryDirectory(prefix="dr-bench-") as tmp:
        root = Path(tmp)
        out = root / "out"
        out.mkdir()
        warm_settings = make_settings(args.docs, root / "cache-warm", root / "state", out)
        bare_ray(warm_settings)  # first start pays one-off costs (imports, disk cache)

        extraction_s, pages = bare_extraction(args.docs)
        print(f"bare extraction: {extraction_s:.2f}s for {pages} pages", file=log)
        cold_settings = make_settings(args.docs, root / "cache-cold", root / "state", out)
        cold_index_s, cold_run_s = quick_run(cold_settings)
        print(f"cold: index {cold_index_s:.2f}s, run {cold_run_s:.2f}s", file=log)
        quick_run(warm_settings)  # fills the warm cache

        ray_times, warm_times = [], []
        for i in range(args.repeat):
            ray_times.append(bare_ray(warm_settings))
            warm_times.append(quick_run(warm_settings)[1])
            print(
                f"round {i + 1}: bare ray {ray_times[-1]:.2f}s, warm quick run "
                f"{warm_times[-1]:.2f}s",
                file=log,
            )

    bare_ray_s = statistics.median(ray_times)
    warm_s = statistics.median(warm_times)
    result = {
        "pages": pages,
        "bare_extraction_s": round(extraction_s, 3),
        "cold_index_build_s": round(cold_index_s, 3),
        "cold_quick_run_s": round(cold_run_s, 3),
        "bare_ray_start_stop_s": round(bare_ray_s, 3),
        "warm_quick_run_s": round(warm_s, 3),
        "cold_index_over_bare_extraction": round(cold_index_s / extraction_s, 3),
        "warm_run_over_bare_ray": round(warm_s / bare_ray_s, 3),
        "targets": {"cold_index_over_bare_extraction": 3.0, "warm_run_over_bare_ray": 1.5},
    }
    show(result, args.json)


if __name__ == "__main__":
    main()
