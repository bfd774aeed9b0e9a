"""Start-up cost of a quick run, as ratios taken in one process run (never absolute pass/fail).

Measures, interleaved so machine noise hits both sides alike:
  * bare ``ray.init`` + ``ray.shutdown`` (the floor any Ray run pays),
  * bare single-process pypdfium2 extraction of the corpus (the floor of indexing),
  * our cold index build (empty cache, subprocess pool) and a cold quick run,
  * our warm quick run (index cached): prepare + actors + report + Ray start/stop.
Prints cold-index-build / bare-extraction (target <= 3.0: the build also rebuilds tables from
word boxes, ``text/pdf_tables.py``) and warm-quick-run / bare-Ray-start-stop
(target <= 1.5). ``--json`` prints one JSON object on stdout.

    python bench/startup.py [--docs ../shared/data/sec-10q/docs] [--repeat 2] [--json]
    python bench/startup.py --index-only   # the index-build ratio alone, without Ray
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "What was Apple's total net sales for the quarter ended July 1, 2023?"


def bare_ray(settings: object) -> float:
    import ray

    from deepresearch import runtime

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
    from deepresearch import driver

    start = time.perf_counter()
    t0 = time.perf_counter()
    driver.build_index(settings)  # type: ignore[arg-type]
    index_s = time.perf_counter() - t0
    prep = driver.prepare(QUERY, "quick", settings)  # type: ignore[arg-type]
    summary = driver.execute(prep)
    if summary.status != "completed":
        raise SystemExit(f"quick run ended {summary.status}: {summary.reason}")
    return index_s, time.perf_counter() - start


def index_only(docs: Path, as_json: bool) -> None:
    """Bare pypdfium2 extraction, then our cold index build (tables rebuilt), in one run."""
    from deepresearch import driver

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
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=REPO.parent / "shared/data/sec-10q/docs")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--index-only", action="store_true", help="cold index build ratio only")
    args = parser.parse_args()
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
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
