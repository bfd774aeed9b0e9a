"""Load on the research service: N concurrent deep runs through HTTP, with injected latency.

Starts ``deep-research serve`` (a subprocess with its own local Ray, and so its own crew) over the
local corpus with ``simulate.latency_s`` on every search, fetch and model call, then for each N
submits N deep runs at once (a 429 is retried after its Retry-After) and follows each over SSE to
its end. Prints, per N: runs/min, p50/p95 latency (submit → end), peak RSS of the service process
and every process under it (Ray's GCS, raylet and the crew) read from /proc, and throughput over
the bound. The bound is the larger of: each run's critical path (``bench/parallel.py``'s
list-scheduling bound with ``deep.max_parallel`` slots, plus the planner call) list-scheduled over
``service.max_runs`` slots, and all runs' researcher work (researcher-seconds of injected latency)
spread over the crew's sub-task slots (``ray.crew.researchers`` x ``ray.crew.concurrency``). Every
accepted run must end with a report or an honest status; anything else is counted as lost and
the exit code is 1.

    python bench/load.py [--ns 8,32] [--latency 0.2] [--max-runs 32] [--max-parallel 3]
                         [--researchers 2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from parallel import QUERY, analyse  # noqa: E402

LAUNCH = "from deepresearch import cli; from deepresearch.commands import serve as cli_serve; cli_serve.register(cli.cli); cli.main()"
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Bytes of RSS of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError):  # a process that just exited
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        stack.extend(children.get(pid, []))
    return total


def tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) used so far by ``root`` and its living descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += stats.get(pid, (0, 0.0))[1]
        stack.extend(children.get(pid, []))
    return total


class PeakSampler(threading.Thread):
    def __init__(self, pid: int, every_s: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.every_s, self.peak = pid, every_s, 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self.halt.wait(self.every_s)


def start_service(
    root: Path, docs: Path, args: argparse.Namespace
) -> tuple[subprocess.Popen[str], str]:
    config = root / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "state_dir": str(root / "state"),
                "run": {"output_dir": str(root / "out"), "mode": "deep"},
                "corpus": {"path": str(docs), "cache_dir": str(root / "cache")},
                "simulate": {"latency_s": args.latency},
                "deep": {"max_parallel": args.max_parallel},
                "service": {"max_runs": args.max_runs, "retry_after_s": 1},
                "ray": {"crew": {"researchers": args.researchers, "concurrency": args.concurrency}},
            }
        )
    )
    from deepresearch.config.settings import load_settings
    from deepresearch.run import driver

    driver.build_index(load_settings(config, env={}))  # index once, before the clock starts
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEP_RESEARCH_")}
    env["RAY_AUTH_MODE"] = "disabled"
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "serve", "--port", "0", "--config", str(config)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "serving on " in line:
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
            return proc, line.split("serving on ", 1)[1].strip()
    raise SystemExit(f"serve exited ({proc.wait()})")


async def one_run(client: httpx.AsyncClient, t0: float) -> dict[str, Any]:
    rejected = 0
    while True:
        response = await client.post("/runs", json={"query": QUERY, "mode": "deep"})
        if response.status_code != 429:
            break
        rejected += 1
        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
    if response.status_code != 202:
        return {"accepted": False, "error": response.text, "rejected": rejected}
    accepted = time.monotonic()
    run_id = response.json()["run_id"]
    status = "lost"
    async with client.stream("GET", f"/runs/{run_id}/events") as stream:
        kind = ""
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "end":
                status = json.loads(line[6:])["status"]
                break
    end = time.monotonic()
    info = (await client.get(f"/runs/{run_id}")).json()
    return {
        "accepted": True,
        "run_id": run_id,
        "status": info["status"],
        "stream_status": status,
        "report": (info.get("summary") or {}).get("report_path"),
        "latency_s": end - t0,
        "service_s": end - accepted,
        "rejected": rejected,
        "end": end,
    }


def honest(result: dict[str, Any]) -> bool:
    """Ended with a report on disk, or with a status that says why not."""
    if result["status"] in ("completed", "no_answer"):
        return bool(result["report"]) and Path(result["report"]).exists()
    return result["status"] in ("interrupted", "failed")


def run_bound(state: Path, run_id: str, max_parallel: int, latency: float) -> tuple[float, float]:
    """(the run's critical-path bound, its researchers' work), in seconds."""
    lines = (state / "runs" / run_id / "events.jsonl").read_text().splitlines()
    events = [(e["ts"], e["type"], e["payload"]) for e in map(json.loads, lines)]
    figures = analyse(events, max_parallel, latency)
    return figures["bound_s"] + latency, figures["work_s"]  # + the planner call


def schedule(durations: list[float], slots: int) -> float:
    free = [0.0] * max(1, slots)
    for d in durations:
        i = free.index(min(free))
        free[i] += d
    return max(free)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def level(
    url: str, n: int, args: argparse.Namespace, state: Path, pid: int
) -> dict[str, Any]:
    sampler = PeakSampler(pid)
    sampler.start()
    cpu_before = tree_cpu_s(pid)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(600, connect=10)) as client:
        t0 = time.monotonic()
        results = await asyncio.gather(*(one_run(client, t0) for _ in range(n)))
    cpu_s = tree_cpu_s(pid) - cpu_before
    sampler.halt.set()
    sampler.join()
    ok = [r for r in results if r["accepted"]]
    wall = max(r["end"] for r in ok) - t0 if ok else float("nan")
    figures = [run_bound(state, r["run_id"], args.max_parallel, args.latency) for r in ok]
    slots = args.researchers * args.concurrency
    crew_bound = sum(work for _, work in figures) / slots
    bound_wall = max(schedule([b for b, _ in figures], args.max_runs), crew_bound)
    statuses: dict[str, int] = {}
    for r in ok:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    latencies = [r["latency_s"] for r in ok]
    return {
        "n": n,
        "accepted": len(ok),
        "lost": sum(1 for r in ok if not honest(r)),
        "statuses": statuses,
        "rejected_429": sum(r["rejected"] for r in results),
        "wall_s": round(wall, 2),
        "runs_per_min": round(60 * len(ok) / wall, 2),
        "p50_s": round(pct(latencies, 0.5), 2),
        "p95_s": round(pct(latencies, 0.95), 2),
        "peak_rss_mb": round(sampler.peak / 2**20),
        "bound_wall_s": round(bound_wall, 2),
        "crew_bound_s": round(crew_bound, 2),
        "throughput_over_bound": round(bound_wall / wall, 3),
        # The service's own CPU over the machine's cores: a floor the latency bound ignores.
        "cpu_s": round(cpu_s, 1),
        "cpu_bound_s": round(cpu_s / (os.cpu_count() or 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--ns", default="8,32", help="concurrent runs per level (e.g. 1,4,16,32)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--max-runs", type=int, default=32, help="service.max_runs (the 429 cap)")
    parser.add_argument("--max-parallel", type=int, default=3, help="deep.max_parallel per run")
    parser.add_argument("--researchers", type=int, default=2, help="ray.crew.researchers")
    parser.add_argument("--concurrency", type=int, default=16, help="ray.crew.concurrency")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dr-load-") as tmp:
        root = Path(tmp)
        (root / "out").mkdir()
        proc, url = start_service(root, args.docs, args)
        try:
            for n in (int(x) for x in args.ns.split(",")):
                row = asyncio.run(level(url, n, args, root / "state", proc.pid))
                rows.append(row)
                print(
                    f"N={n:>3}: {row['runs_per_min']:6.2f} runs/min  p50 {row['p50_s']:6.2f}s  "
                    f"p95 {row['p95_s']:6.2f}s  peak RSS {row['peak_rss_mb']} MB  "
                    f"throughput/bound {row['throughput_over_bound']:.3f}  "
                    f"cpu {row['cpu_s']}s (cpu/cores {row['cpu_bound_s']}s)  "
                    f"429s {row['rejected_429']}  statuses {row['statuses']}  lost {row['lost']}",
                    file=sys.stderr,
                )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
    if args.json:
        print(
            json.dumps(
                {
                    "latency_s": args.latency,
                    "max_runs": args.max_runs,
                    "max_parallel": args.max_parallel,
                    "crew": {"researchers": args.researchers, "concurrency": args.concurrency},
                    "levels": rows,
                }
            )
        )
    if any(r["lost"] or r["accepted"] < r["n"] for r in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
