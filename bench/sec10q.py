"""Quality benchmark: quick and deep mode over the SEC 10-Q corpus against its reviewed QnA set.

Runs the real actors on one Ray instance (started once, reused by every question) with throwaway
state, cache and output directories, and measures what a user would notice first:

* ``gold_doc_recall`` — share of questions whose report cites at least one annotated source doc
  (the CSV's ``Source Docs`` globs, fnmatch-ed against the cited sources' file names);
* ``figure_recall`` — share of the reviewed answer's figures that appear in the report body,
  averaged over questions whose answer has at least one figure (see ``figures`` for the rule);
* ``citation_precision`` — share of the writer's cited sentences whose cited passage supports
  them, as the citation verifier judged the draft (the report footer's ``verified / cited``);
* ``figure_accuracy_in_passages`` — share of the figures stated by cited sentences (as drafted)
  that the verifier found in the cited passages (the report itself keeps only supported ones);
  ``figure_recall`` above is the other figure accuracy: the reviewed answer's figures in the report;
* ``answer_figure_recall`` — share of the reviewed answer's figures found in the report's Answer
  section, averaged over questions whose answer has figures; ``answered`` — share of those
  questions with at least one such figure in the Answer;
* ``evidence_figure_recall`` — share of the reviewed answer's figures found in the evidence handed
  to the writer (every researcher finding of the run, read from its checkpoint): the upper bound
  for any writer, model or not;
* ``median_s_per_question``, counts by status, and gold_doc_recall per question type;
* ``bm25_top1_figure_recall`` / ``bm25_top3_figure_recall`` — the same figure recall over the best
  1 / 3 passages of plain BM25 on the same index (no priors): the baseline the Answer must beat.

Every metric is printed for the whole set and for each part of the fixed split (``split.py``):
``development`` (tune on its misses) and ``validation`` (held out: never designed from).

Usage: ``python bench/sec10q.py [--limit N] [--mode quick|deep|both] [--json] [--llm NAME]
[--docs DIR] [--qna CSV]``. With ``--mode both`` the result has one entry per mode. A model
provider (``--llm openai``) needs its API key in the environment; without it the run is skipped
with a one-line reason. With ``--json`` exactly one JSON object goes to stdout; progress always
goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO / "../shared/data/sec-10q/docs"
DEFAULT_QNA = REPO / "../shared/data/sec-10q/qna_data.csv"

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the metrics module beside this one
from sec10q_metrics import (  # noqa: E402  (re-exported: other benchmarks import them from here)
    VERIFY_KEYS,
    answer_section,
    answered,
    bm25_baseline,
    cites_gold,
    evidence_text,
    figure_recall,
    figures,
    gold_globs,
    mean,
    ratio,
    report_text,
    verification_counts,
)
from split import PARTS, part_of  # noqa: E402

__all__ = ["figures", "gold_globs", "main"]  # what other benchmarks import from here

# ----------------------------------------------------------------------------- the run


@dataclass
class Outcome:
    question: str
    qtype: str
    status: str
    seconds: float
    gold: bool
    recall: float | None
    cited: list[str] = field(default_factory=list)
    error: str = ""
    verify: dict[str, int] | None = None
    answer_recall: float | None = None
    answered: bool | None = None
    evidence_recall: float | None = None
    part: str = ""
    bm25_top1: float | None = None
    bm25_top3: float | None = None


def load_rows(path: Path, limit: int | None) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows[:limit] if limit else rows


def make_settings(args: argparse.Namespace, tmp: Path, extra: dict[str, Any] | None = None) -> Any:
    """The runs' settings: the corpus ``args.docs`` (none when empty), throwaway state and output
    under ``tmp``, and ``extra`` flags on top (``documents.py``'s web path)."""
    from deepresearch.config.settings import load_settings, overrides_from_flags

    cache = Path(args.cache_dir) if args.cache_dir else tmp / "cache"
    flags: dict[str, Any] = {
        "state_dir": str(tmp / "state"),
        "corpus.path": str(Path(args.docs).resolve()) if args.docs else None,
        "corpus.cache_dir": str(cache),
        "run.output_dir": str(tmp / "out"),
        "llm.provider": args.llm,
        "run.mode": args.mode if args.mode != "both" else "quick",
        "ray.address": getattr(args, "address", None),  # join a running Ray (``ray start --head``)
    }
    flags |= extra or {}
    (tmp / "out").mkdir(parents=True, exist_ok=True)
    return load_settings(None, overrides_from_flags(flags), env={})


def ask(question: str, mode: str, settings: Any) -> tuple[Any, str]:
    """One run in this process on the connected Ray, as the CLI runs it: its summary and its
    report's markdown ("" without a report). Raises what the run raises."""
    from deepresearch.actors import crew
    from deepresearch.run import driver

    summary = driver.execute(driver.prepare(question, mode, settings), crew=crew)
    markdown = Path(summary.report_path).read_text("utf-8") if summary.report_path else ""
    return summary, markdown


def run_one(
    row: dict[str, str], settings: Any, mode: str = "quick", keep: Path | None = None
) -> Outcome:
    question = row["Question"].strip()
    part = part_of(row.get("Original Question", question))
    started = time.monotonic()
    try:
        summary, markdown = ask(question, mode, settings)
    except Exception as exc:  # one broken question must not end the benchmark
        return Outcome(
            question,
            row["Question Type"],
            "failed",
            time.monotonic() - started,
            False,
            None,
            error=f"{type(exc).__name__}: {exc}",
            part=part,
        )
    seconds = time.monotonic() - started
    cited = [(s.title, s.url) for s in summary.sources]
    body = section = ""
    counts = None
    if markdown:
        body = report_text(markdown)
        section = answer_section(body)
        counts = verification_counts(markdown)
    evidence = body  # without a checkpoint, the findings the report shows
    checkpoint = settings.resolved_state_dir() / "runs" / summary.run_id / "checkpoint.json"
    with contextlib.suppress(OSError, ValueError):
        evidence = evidence_text(json.loads(checkpoint.read_text("utf-8")))
    if keep is not None:  # for reading why a question missed, after the run
        keep.mkdir(parents=True, exist_ok=True)
        record = {"question": question, "reviewed": row["Answer"], "answer": section}
        record |= {"report": body, "evidence": evidence}
        (keep / f"{mode}-{_slug(question)}.json").write_text(json.dumps(record, indent=1), "utf-8")
    return Outcome(
        question,
        row["Question Type"],
        summary.status,
        seconds,
        cites_gold(gold_globs(row["Source Docs"]), cited),
        figure_recall(row["Answer"], body),
        cited=[s.location or s.title for s in summary.sources],
        verify=counts,
        answer_recall=figure_recall(row["Answer"], section),
        answered=answered(row["Answer"], section),
        evidence_recall=figure_recall(row["Answer"], evidence),
        part=part,
    )


def aggregate(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    recalls = [o.recall for o in outcomes if o.recall is not None]
    by_type: dict[str, list[bool]] = {}
    for o in outcomes:
        by_type.setdefault(o.qtype, []).append(o.gold)
    verified = [o.verify for o in outcomes if o.verify is not None]

    def total(key: str) -> int:
        return sum(v[key] for v in verified)

    return {
        "questions": n,
        "completed": sum(o.status == "completed" for o in outcomes),
        "no_answer": sum(o.status == "no_answer" for o in outcomes),
        "failed": sum(o.status == "failed" for o in outcomes),
        "gold_doc_recall": round(sum(o.gold for o in outcomes) / n, 4) if n else 0.0,
        "figure_recall": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "figure_questions": len(recalls),
        "answer_figure_recall": mean(
            [o.answer_recall for o in outcomes if o.answer_recall is not None]
        ),
        "answered": mean([float(o.answered) for o in outcomes if o.answered is not None]),
        "evidence_figure_recall": mean(
            [o.evidence_recall for o in outcomes if o.evidence_recall is not None]
        ),
        "citation_precision": ratio(total("verified"), total("cited")),
        "figure_accuracy_in_passages": ratio(total("figures_supported"), total("figures")),
        "claims": {k: total(k) for k in (*VERIFY_KEYS, "figures", "figures_supported")},
        "median_s_per_question": round(statistics.median(o.seconds for o in outcomes), 3)
        if n
        else 0.0,
        "bm25_top1_figure_recall": mean([o.bm25_top1 for o in outcomes if o.bm25_top1 is not None]),
        "bm25_top3_figure_recall": mean([o.bm25_top3 for o in outcomes if o.bm25_top3 is not None]),
        "gold_doc_recall_by_type": {
            t: {"questions": len(v), "gold_doc_recall": round(sum(v) / len(v), 4)}
            for t, v in sorted(by_type.items())
        },
    }


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Every metric over all questions and over each part of the fixed split, side by side."""
    result = {"overall": aggregate(outcomes)}
    for part in PARTS:
        result[part] = aggregate([o for o in outcomes if o.part == part])
    return result


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--docs", default=str(DEFAULT_DOCS), help="corpus folder")
    p.add_argument("--qna", default=str(DEFAULT_QNA), help="QnA CSV")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--llm", default="extractive", help="llm.provider for the run")
    p.add_argument("--mode", choices=("quick", "deep", "both"), default="quick")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--cache-dir", default=None, help="reuse an index cache (default: temporary)")
    p.add_argument(
        "--address", default=None, help="join a running Ray (e.g. auto) to skip its start"
    )
    p.add_argument("--details", default=None, help="write per-question outcomes to this JSON file")
    p.add_argument(
        "--keep", default=None, help="folder to keep each question's report and evidence in"
    )
    p.add_argument(
        "--lowercase",
        action="store_true",
        help="ask each question in lower case, as people type on a terminal",
    )
    return p.parse_args(argv)


def _slug(question: str) -> str:
    words = re.findall(r"[a-z0-9]+", question.lower())
    return "-".join(words[:12])


def run_mode(
    rows: Sequence[dict[str, str]], settings: Any, mode: str, keep: Path | None = None
) -> dict[str, Any]:
    outcomes: list[Outcome] = []
    for i, row in enumerate(rows, start=1):
        o = run_one(row, settings, mode, keep)
        outcomes.append(o)
        mark = "gold" if o.gold else "MISS"
        rec = "-" if o.recall is None else f"{o.recall:.2f}"
        if o.answer_recall is not None and o.evidence_recall is not None:
            rec += f" ans={o.answer_recall:.2f} ev={o.evidence_recall:.2f}"
        v = o.verify or {}
        ver = f"{v.get('verified', 0)}/{v.get('cited', 0)}" if v else "-"
        print(
            f"[{mode} {i}/{len(rows)}] {o.status:9} {mark} fig={rec} cit={ver} {o.seconds:5.1f}s "
            f"{o.question[:70]}" + (f" ({o.error})" if o.error else ""),
            file=sys.stderr,
            flush=True,
        )
    baseline(rows, outcomes, settings)
    result = summarize(outcomes)
    result["outcomes"] = [o.__dict__ for o in outcomes]
    return result


def baseline(rows: Sequence[dict[str, str]], outcomes: Sequence[Outcome], settings: Any) -> None:
    """Plain BM25's best 1 and 3 passages per question, on the index the runs built."""
    index = plain_index(settings)
    if index is None:
        return
    for row, o in zip(rows, outcomes, strict=True):
        o.bm25_top1, o.bm25_top3 = bm25_baseline(
            row["Answer"], index.plain_passages(row["Question"].strip(), 3)
        )


def plain_index(settings: Any) -> Any:
    """The index the runs built over the corpus, for plain BM25; ``None`` (said on stderr) when
    there is none: the baseline is information, its absence must not end the bench."""
    from deepresearch.providers.search.corpus_index import CorpusIndex

    corpus = settings.corpus
    try:
        return CorpusIndex.load_cached(
            Path(corpus.path), settings.resolved_cache_dir(), corpus.passage_chars
        )
    except Exception as exc:
        print(f"no BM25 baseline: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = load_rows(Path(args.qna), args.limit)
    if args.lowercase:  # the split reads the question as written: a question never changes part
        rows = [
            {**row, "Question": row["Question"].lower(), "Original Question": row["Question"]}
            for row in rows
        ]
    from deepresearch.cluster import runtime
    from deepresearch.errors import ConfigError

    modes = ["quick", "deep"] if args.mode == "both" else [args.mode]
    results: dict[str, dict[str, Any]] = {}
    wall = time.monotonic()
    quiet = contextlib.redirect_stdout(sys.stderr)  # stdout carries only the result
    with quiet, tempfile.TemporaryDirectory(prefix="sec10q-bench-") as tmp_name:
        try:
            settings = make_settings(args, Path(tmp_name))
            if args.llm != "extractive":
                import os

                from deepresearch.providers.assembly import from_settings as assembly
                from deepresearch.run import driver

                # an unknown provider or a missing API key fails here, before any run
                assembly.build_llm_provider(settings, driver.keys_from_env(os.environ))
        except ConfigError as exc:
            print(f"skipped: --llm {args.llm}: {exc}", file=sys.stderr)
            print(json.dumps({"skipped": str(exc), "llm": args.llm}) if args.json else "")
            return 0
        connection = runtime.connect(settings.ray)
        try:
            for mode in modes:
                started = time.monotonic()
                keep = Path(args.keep) if args.keep else None
                results[mode] = run_mode(rows, settings, mode, keep)
                results[mode]["wall_s"] = round(time.monotonic() - started, 1)
        finally:
            runtime.disconnect(connection)
    details = {mode: r.pop("outcomes") for mode, r in results.items()}
    result: dict[str, Any] = results[modes[0]] if len(modes) == 1 else dict(results)
    result["wall_s"] = round(time.monotonic() - wall, 1)
    result["llm"] = args.llm
    if args.details:
        Path(args.details).write_text(json.dumps(details, indent=1), encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
