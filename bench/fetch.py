"""Throughput of the safe fetcher against its politeness bound, on the loopback fake web.

Serves ``--pages`` generated HTML pages under ``--hosts`` host names (all resolving to 127.0.0.1
through an injected resolver) with ``--latency`` seconds of server latency per request, and
fetches them all at once through ``SafeFetcher``. With at most ``--per-host`` requests in flight
per host and no polite delay, no fetcher can beat ``hosts * per_host / latency`` pages/s: that is
the bound, and the ratio printed is achieved/bound (1.0 is perfect). Measured with extraction off
(download only) and on (trafilatura in the subprocess pool), with the driver's CPU per page and
the peak RSS (VmHWM) of the extraction pool's worker processes. The server runs in its own process. ``--json`` prints one JSON object on stdout.

    python bench/fetch.py [--pages 200] [--latency 0.05] [--hosts 4] [--per-host 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def vm_hwm_kib(pid: int) -> int | None:
    """Peak resident set of ``pid`` in KiB, from /proc (Linux); None when unavailable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def pool_worker_pids(pool: Any) -> list[int]:
    executor = getattr(pool, "_executor", None)
    processes = getattr(executor, "_processes", None) or {}
    return [int(pid) for pid in processes]


def serve(pages: int, latency: float, conn: Any) -> None:
    """The fake web in its own process, so its CPU does not count against the fetcher's loop."""
    from deepresearch.providers.testing.fake_web import FakeWeb

    async def main() -> None:
        async with FakeWeb(pages=pages, latency_s=latency) as web:
            conn.send(web.port)
            await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # until told to stop
            conn.send(web.peak_in_flight)

    asyncio.run(main())


async def one_pass(fetcher: Any, urls: list[str], extract: bool) -> tuple[float, float]:
    """(wall seconds, driver CPU seconds) to fetch every URL at once."""
    start, cpu = time.perf_counter(), time.process_time()
    if extract:
        docs = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        assert all(d.text for d in docs)
    else:
        downloads = await asyncio.gather(*(fetcher.download(u) for u in urls))
        assert all(d.kind == "html" for d in downloads)
    return time.perf_counter() - start, time.process_time() - cpu


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from deepresearch.providers.documents.extract import ExtractionPool
    from deepresearch.providers.testing.fake_web import static_resolver
    from deepresearch.providers.web.safe_fetcher import FetchPolicy, SafeFetcher, make_client

    hosts = [f"site{i}.test" for i in range(args.hosts)]
    resolve = static_resolver({h: ["127.0.0.1"] for h in hosts})
    policy = FetchPolicy(
        allowed_private_hosts=frozenset(hosts),
        per_host_concurrency=args.per_host,
        per_host_delay_s=0.0,
        respect_robots=True,
    )
    bound = args.hosts * args.per_host / args.latency
    result: dict[str, Any] = {
        "pages": args.pages,
        "hosts": args.hosts,
        "per_host": args.per_host,
        "latency_s": args.latency,
        "bound_pages_per_s": bound,
        "workers": args.workers,
    }
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=serve, args=(args.pages, args.latency, child), daemon=True)
    server.start()
    port = parent.recv()

    def url(n: int, host: str) -> str:
        return f"http://{host}:{port}/pages/{n}"

    async with make_client(policy) as client:
        urls = [url(n, hosts[n % len(hosts)]) for n in range(args.pages)]
        with ExtractionPool(args.workers, timeout_s=60, memory_mb=1024) as pool:
            fetcher = SafeFetcher(client, pool, policy, resolve=resolve)
            # warm up: robots.txt per host, worker start-up and trafilatura's import
            await asyncio.gather(*(fetcher.fetch(url(0, h)) for h in hosts))
            for extract in (False, True):
                runs = [await one_pass(fetcher, urls, extract) for _ in range(args.repeat)]
                rate = args.pages / statistics.median(wall for wall, _ in runs)
                cpu_ms = 1000 * statistics.median(cpu for _, cpu in runs) / args.pages
                key = "extraction_on" if extract else "extraction_off"
                result[key] = {
                    "pages_per_s": rate,
                    "ratio_to_bound": rate / bound,
                    "driver_cpu_ms_per_page": cpu_ms,
                }
            peaks = [vm_hwm_kib(pid) for pid in pool_worker_pids(pool)]
            result["pool_worker_peak_rss_mib"] = [
                round(p / 1024, 1) for p in peaks if p is not None
            ]
    parent.send("stop")
    result["server_peak_in_flight"] = parent.recv()
    server.join(timeout=10)
    result["driver_peak_rss_mib"] = round((vm_hwm_kib(os.getpid()) or 0) / 1024, 1)
    return result


def main() -> int:
    sys.path.insert(0, str(REPO.parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"{result['pages']} pages, {result['hosts']} hosts x {result['per_host']} in flight, "
        f"{result['latency_s'] * 1000:g} ms latency: bound {result['bound_pages_per_s']:.0f} pages/s"
    )
    for key in ("extraction_off", "extraction_on"):
        figures = result[key]
        print(
            f"  {key.replace('_', ' '):15} {figures['pages_per_s']:7.1f} pages/s  "
            f"ratio to bound {figures['ratio_to_bound']:.2f}  "
            f"driver CPU {figures['driver_cpu_ms_per_page']:.1f} ms/page"
        )
    print(
        f"  extraction pool ({result['workers']} workers) peak RSS per worker (MiB): "
        f"{result['pool_worker_peak_rss_mib']}; driver peak RSS {result['driver_peak_rss_mib']} MiB; "
        f"server saw at most {result['server_peak_in_flight']} requests in flight"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
