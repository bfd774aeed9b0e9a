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
* ``median_s_per_question``, counts by status, and gold_doc_recall per question type.

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
import fnmatch
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO / "../shared/data/sec-10q/docs"
DEFAULT_QNA = REPO / "../shared/data/sec-10q/qna_data.csv"

# ----------------------------------------------------------------------------- pure metrics

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# "June 25, 2022" / "25 June 2022": the day of a date is not a figure.
_DATE_DAY = re.compile(rf"\b{_MONTH}\s+\d{{1,2}}\b|\b\d{{1,2}}\s+{_MONTH}\b", re.IGNORECASE)
# "1. ", "2) " at the start of a line: list numbering, not a figure.
_LIST_NUMBER = re.compile(r"(?m)^\s*(?:[-*]\s*)?\d{1,3}[.)]\s")
# A number not glued to a word ("Q3", "10-Q", "FY23", "H1" are labels, not figures).
_NUMBER = re.compile(r"(?<![\w.,\-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(%|percent\b))?(?![\w-])")


def _canonical(integer: str, fraction: str) -> str:
    whole = integer.replace(",", "").lstrip("0") or "0"
    frac = fraction.rstrip("0").rstrip(".") if fraction else ""
    return whole + frac


def figures(text: str) -> set[str]:
    """The figures of ``text`` in canonical form (``"81,797"`` -> ``"81797"``, ``"2.40"`` -> ``"2.4"``).

    A figure is a number that has a decimal part or a percent sign, or at least two significant
    digits (``"$2.4 billion"`` -> ``"2.4"``, ``"5%"`` -> ``"5"``, ``"81,797"``; a bare ``"5"`` is not).
    Thousands separators are dropped and units ignored, so ``$81,797 million`` and ``81,797``
    match. Not figures: plain years 1990–2035, days inside dates (``June 25``), list numbering at
    a line start (``1.``), and numbers glued to letters (``Q3``, ``10-Q``, ``FY23``).
    """
    text = _LIST_NUMBER.sub(" ", text)
    text = _DATE_DAY.sub(" ", text)
    out: set[str] = set()
    for m in _NUMBER.finditer(text):
        integer, fraction, percent = m.group(1), m.group(2) or "", m.group(3)
        value = _canonical(integer, fraction)
        plain = not fraction and not percent and "," not in integer
        if plain and len(integer) == 4 and 1990 <= int(integer) <= 2035:
            continue
        if fraction or percent or len(integer.replace(",", "").lstrip("0")) >= 2:
            out.add(value)
    return out


def figure_recall(answer: str, report_body: str) -> float | None:
    """Share of the answer's figures found in the report body; ``None`` when it has none."""
    wanted = figures(answer)
    if not wanted:
        return None
    return len(wanted & figures(report_body)) / len(wanted)


_HEADING = re.compile(r"(?m)^## ")


def answer_section(markdown: str) -> str:
    """The text of a rendered report's ``## Answer`` section ("" when it has none)."""
    start = re.search(r"(?m)^## Answer[ \t]*$", markdown)
    if start is None:
        return ""
    rest = markdown[start.end() :]
    nxt = _HEADING.search(rest)
    return rest[: nxt.start()] if nxt else rest.split("\n---\n", 1)[0]


def answered(answer: str, section: str) -> bool | None:
    """True when ``section`` states at least one of the answer's figures; ``None`` without any."""
    wanted = figures(answer)
    return bool(wanted & figures(section)) if wanted else None


def evidence_text(checkpoint: dict[str, Any]) -> str:
    """Every finding the researchers handed to the writer, from a run's checkpoint data."""
    lines: list[str] = []
    for report in checkpoint.get("completed", []):
        lines.extend(str(f.get("text", "")) for f in report.get("findings", []))
    return "\n".join(lines)


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def gold_globs(cell: str) -> list[str]:
    """The ``Source Docs`` cell as a list of globs (comma- or newline-separated)."""
    return [g.strip() for g in re.split(r"[,\n]", cell) if g.strip()]


def source_file_name(title: str, url: str) -> list[str]:
    """File names a cited source can be matched by: its title and the path inside its doc id."""
    names = [title] if title else []
    if url.startswith("doc:"):
        path = url[4:].split("#", 1)[0]
        names.append(path.rsplit("/", 1)[-1])
    return names


def cites_gold(globs: Sequence[str], sources: Iterable[tuple[str, str]]) -> bool:
    """True when any cited (title, url) has a file name matching any gold glob."""
    names = [n for title, url in sources for n in source_file_name(title, url)]
    return any(fnmatch.fnmatch(n, g) for g in globs for n in names)


_VERIFY_LINE = re.compile(
    r"Claims: (\d+) · cited: (\d+) · verified: (\d+) · rewritten: (\d+) · dropped: (\d+)"
)
_FIGURES_LINE = re.compile(r"found in their cited passages \(as drafted\): (\d+) of (\d+)")
VERIFY_KEYS = ("claims", "cited", "verified", "rewritten", "dropped")


def verification_counts(markdown: str) -> dict[str, int] | None:
    """The citation verifier's counts from a report's footer; ``None`` when it has none."""
    footer = markdown.rsplit("\n---\n", 1)[-1] if "\n---\n" in markdown else ""
    match = _VERIFY_LINE.search(footer)
    if match is None:
        return None
    counts = dict(zip(VERIFY_KEYS, (int(g) for g in match.groups()), strict=True))
    figs = _FIGURES_LINE.search(footer)
    counts["figures_supported"], counts["figures"] = (
        (int(figs.group(1)), int(figs.group(2))) if figs else (0, 0)
    )
    return counts


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def report_text(markdown: str) -> str:
    """The part of a rendered report a reader takes figures from: above footer and source list."""
    body = markdown.split("\n---\n", 1)[0]
    return body.split("\n## Sources", 1)[0]


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


def load_rows(path: Path, limit: int | None) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows[:limit] if limit else rows


def make_settings(args: argparse.Namespace, tmp: Path) -> Any:
    from deepresearch.config.settings import load_settings, overrides_from_flags

    cache = Path(args.cache_dir) if args.cache_dir else tmp / "cache"
    flags: dict[str, Any] = {
        "state_dir": str(tmp / "state"),
        "corpus.path": str(Path(args.docs).resolve()),
        "corpus.cache_dir": str(cache),
        "run.output_dir": str(tmp / "out"),
        "llm.provider": args.llm,
        "run.mode": args.mode if args.mode != "both" else "quick",
    }
    (tmp / "out").mkdir(parents=True, exist_ok=True)
    return load_settings(None, overrides_from_flags(flags), env={})


def run_one(
    row: dict[str, str], settings: Any, mode: str = "quick", keep: Path | None = None
) -> Outcome:
    from deepresearch import driver

    question = row["Question"].strip()
    started = time.monotonic()
    try:
        prep = driver.prepare(question, mode, settings)
        summary = driver.execute(prep)
    except Exception as exc:  # one broken question must not end the benchmark
        return Outcome(
            question,
            row["Question Type"],
            "failed",
            time.monotonic() - started,
            False,
            None,
            error=f"{type(exc).__name__}: {exc}",
        )
    seconds = time.monotonic() - started
    cited = [(s.title, s.url) for s in summary.sources]
    body = section = ""
    counts = None
    if summary.report_path:
        markdown = Path(summary.report_path).read_text("utf-8")
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
        "gold_doc_recall_by_type": {
            t: {"questions": len(v), "gold_doc_recall": round(sum(v) / len(v), 4)}
            for t, v in sorted(by_type.items())
        },
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--docs", default=str(DEFAULT_DOCS), help="corpus folder")
    p.add_argument("--qna", default=str(DEFAULT_QNA), help="QnA CSV")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--llm", default="extractive", help="llm.provider for the run")
    p.add_argument("--mode", choices=("quick", "deep", "both"), default="quick")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--cache-dir", default=None, help="reuse an index cache (default: temporary)")
    p.add_argument("--details", default=None, help="write per-question outcomes to this JSON file")
    p.add_argument(
        "--keep", default=None, help="folder to keep each question's report and evidence in"
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
    result = aggregate(outcomes)
    result["outcomes"] = [o.__dict__ for o in outcomes]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = load_rows(Path(args.qna), args.limit)
    from deepresearch import runtime
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

                from deepresearch import assembly, driver

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
