"""Quality bench on documentation corpora of other kinds than SEC filings: the Answer beside plain BM25.

Each corpus under ``bench/corpora/NAME`` (``manifest.yaml``: the pinned Debian packages it is built
from, ``questions.yaml``: questions written by reading its documents, each with a kind, key strings
and gold documents) is built by ``bench/corpora/build.py`` into the user's cache. For every corpus,
mode and part of the fixed split (``split.py``, the rule the SEC bench uses) it prints:

* ``answer`` — share of questions whose report's Answer section holds every key;
* ``report`` — the same over the whole report body (findings included);
* ``bm25@1`` / ``bm25@3`` — the same over the best 1 / 3 passages of plain BM25 on the index the
  runs built (``CorpusIndex.plain_passages``): what quoting search results verbatim would hold;
* ``gold`` — share of questions citing a gold document among the Sources;
* ``failed`` / ``no_ans`` — runs that raised or whose every researcher failed / other runs that
  ended without an answer;
* ``cit_prec`` — cited sentences the verifier found supported, over all cited;
* ``median_s`` — median seconds per question;
* ``ans_chars`` — the Answer section's median length in characters (how much a reader reads
  first: quoting more holds more keys, so the share above is read beside it; a BM25 passage is
  about 700).

A key is held when one of its alternatives appears as whole tokens (case-insensitive): ``-6`` is
not held by ``-60``, ``follow symbolic links`` not by ``follows symbolic links``. Validation is
printed only as aggregates: never a question, a miss or a per-question line.

Runs go through the same in-process driver as ``sec10q.py`` (``ask``), on one Ray for every corpus;
``--address auto`` joins a ``ray start --head`` so repeated runs skip Ray's start.

Usage: ``python bench/documents.py [--corpus NAME ...] [--mode quick|deep|both] [--part dev|val|both]
[--address ADDR] [--search local|searxng] [--limit N] [--json] [--show-misses]``. With
``--search searxng`` the HTML corpora are read from the web instead: their pages served on
loopback behind a SearXNG-compatible search (``web_corpus.py``), fetched by the safe fetcher.
Needs the corpora built first (``python bench/corpora/build.py``: apt-get, dpkg-deb, and groff for
the man-page PDFs).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the modules beside this one (bench/ is not a package)
from corpora.build import ROOT, corpus_names, docs_dir, load_manifest  # noqa: E402
from sec10q import ask, make_settings, plain_index  # noqa: E402
from sec10q_metrics import (  # noqa: E402
    answer_section,
    ratio,
    report_text,
    source_file_name,
    verification_counts,
)
from split import part_of  # noqa: E402

CORPORA = HERE / "corpora"
KINDS = ("value", "name", "definition", "comparison", "howto", "why", "list")
PART_NAMES = {"dev": "development", "val": "validation"}
COLUMNS = (
    "answer",
    "report",
    "bm25@1",
    "bm25@3",
    "gold",
    "failed",
    "no_ans",
    "cit_prec",
    "median_s",
    "ans_chars",
)


class QuestionsError(Exception):
    """A questions file that does not hold what the bench needs: one line, no traceback."""


@dataclass(frozen=True)
class Question:
    text: str
    kind: str
    keys: tuple[tuple[str, ...], ...]  # every key must be held; a key by any of its alternatives
    gold: tuple[str, ...]  # file names in the corpus's docs folder

    @property
    def part(self) -> str:
        return part_of(self.text)


def load_questions(name: str) -> list[Question]:
    path = CORPORA / name / "questions.yaml"
    rows = yaml.safe_load(path.read_text("utf-8")) or []
    out: list[Question] = []
    for i, row in enumerate(rows, 1):
        try:
            keys = tuple(
                tuple(map(str, k)) if isinstance(k, list) else (str(k),) for k in row["keys"]
            )
            q = Question(str(row["q"]).strip(), str(row["kind"]), keys, tuple(row["gold"]))
        except (KeyError, TypeError) as exc:
            raise QuestionsError(f"{name} question {i}: missing or malformed {exc}") from None
        if q.kind not in KINDS or not q.keys or not q.gold:
            raise QuestionsError(f"{name} question {i}: needs a kind in {KINDS}, keys and gold")
        out.append(q)
    return out


# ----------------------------------------------------------------------------- scoring

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Words and single punctuation marks, lower-cased: what a key is matched on."""
    return _TOKEN.findall(text.lower())


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    if n == 0:
        return False
    first = needle[0]
    return any(
        haystack[i] == first and list(haystack[i : i + n]) == list(needle)
        for i in range(len(haystack) - n + 1)
    )


def holds_key(alternatives: Sequence[str], text: str) -> bool:
    """True when ``text`` holds one of the alternatives as whole tokens."""
    have = tokens(text)
    return any(_contains(have, tokens(alt)) for alt in alternatives)


def holds_all(keys: Sequence[Sequence[str]], text: str) -> bool:
    """True when ``text`` holds every key (each by one of its alternatives)."""
    have = tokens(text)
    return all(any(_contains(have, tokens(alt)) for alt in key) for key in keys)


def cites_gold(gold: Sequence[str], sources: Sequence[tuple[str, str]]) -> bool:
    """True when a cited source is a gold document: a corpus document or a served page (its
    URL's last path segment) of that file name."""
    names = {n for title, url in sources for n in source_file_name(title, url)}
    names |= {url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] for _, url in sources}
    return any(g in names for g in gold)


# ----------------------------------------------------------------------------- the runs


@dataclass
class Outcome:
    corpus: str
    mode: str
    part: str
    question: str
    status: str
    seconds: float
    answer: bool = False
    report: bool = False
    gold: bool = False
    bm25_top1: bool = False
    bm25_top3: bool = False
    verify: dict[str, int] | None = None
    error: str = ""
    answer_chars: int = 0


_ALL_FAILED = "every researcher failed"  # the run's reason when no research step succeeded


def run_status(status: str, reason: str) -> str:
    """The run's status as the bench counts it: a run that ends without an answer because every
    researcher failed (an error, not a lack of evidence) is ``failed``, as a run that raised."""
    return "failed" if status == "no_answer" and _ALL_FAILED in reason else status


def run_one(corpus: str, q: Question, settings: Any, mode: str) -> Outcome:
    started = time.monotonic()
    try:
        summary, markdown = ask(q.text, mode, settings)
    except Exception as exc:  # one broken question must not end the bench
        return Outcome(
            corpus,
            mode,
            q.part,
            q.text,
            "failed",
            time.monotonic() - started,
            error=f"{type(exc).__name__}: {exc}",
        )
    body = report_text(markdown) if markdown else ""
    answer = answer_section(body)
    sources = [(s.title, s.url) for s in summary.sources]
    status = run_status(str(summary.status), summary.reason)
    return Outcome(
        corpus,
        mode,
        q.part,
        q.text,
        status,
        time.monotonic() - started,
        answer=holds_all(q.keys, answer),
        answer_chars=len(answer.strip()),
        report=holds_all(q.keys, body),
        gold=cites_gold(q.gold, sources),
        verify=verification_counts(markdown) if markdown else None,
        error=summary.reason if status == "failed" else "",
    )


def add_baseline(questions: Sequence[Question], outcomes: Sequence[Outcome], index: Any) -> None:
    """Plain BM25's best 1 and 3 passages per question, on the index the runs built."""
    if index is None:
        return
    for q, o in zip(questions, outcomes, strict=True):
        passages = index.plain_passages(q.text, 3)
        o.bm25_top1 = holds_all(q.keys, "\n".join(passages[:1]))
        o.bm25_top3 = holds_all(q.keys, "\n".join(passages[:3]))


def aggregate(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    n = len(outcomes)

    def share(flag: str) -> float | None:
        return round(sum(bool(getattr(o, flag)) for o in outcomes) / n, 2) if n else None

    verified = [o.verify for o in outcomes if o.verify is not None]
    return {
        "n": n,
        "answer": share("answer"),
        "report": share("report"),
        "bm25@1": share("bm25_top1"),
        "bm25@3": share("bm25_top3"),
        "gold": share("gold"),
        "failed": sum(o.status == "failed" for o in outcomes),
        "no_ans": sum(o.status == "no_answer" for o in outcomes),
        "cit_prec": ratio(sum(v["verified"] for v in verified), sum(v["cited"] for v in verified)),
        "median_s": round(statistics.median(o.seconds for o in outcomes), 1) if n else None,
        "ans_chars": round(statistics.median(o.answer_chars for o in outcomes)) if n else None,
    }


def progress(o: Outcome, i: int, n: int) -> None:
    """One stderr line per run; a validation run shows only that it ran (no question, no score)."""
    head = f"[{o.corpus} {o.mode} {i}/{n}]"
    if o.part == "validation":
        print(f"{head} validation run {o.seconds:5.1f}s", file=sys.stderr, flush=True)
        return
    marks = f"ans={'Y' if o.answer else '-'} rep={'Y' if o.report else '-'}"
    print(
        f"{head} {o.status:9} {marks} gold={'Y' if o.gold else '-'} {o.seconds:5.1f}s "
        f"{o.question[:70]}" + (f" ({o.error[:120]})" if o.error else ""),
        file=sys.stderr,
        flush=True,
    )


def table(rows: Sequence[tuple[str, str, str, dict[str, Any]]]) -> str:
    """One line per (corpus, part, mode): the figures in ``COLUMNS``, aligned."""
    head = f"{'corpus':10} {'part':11} {'mode':5} {'n':>3} " + " ".join(f"{c:>8}" for c in COLUMNS)
    lines = [head]
    for corpus, part, mode, figures in rows:
        cells = " ".join(f"{'-' if figures[c] is None else figures[c]:>8}" for c in COLUMNS)
        lines.append(f"{corpus:10} {part:11} {mode:5} {figures['n']:>3} {cells}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--corpus", action="append", default=None, help="a corpus (default: all)")
    p.add_argument("--mode", choices=("quick", "deep", "both"), default="quick")
    p.add_argument("--part", choices=("dev", "val", "both"), default="both")
    p.add_argument("--address", default=None, help="join a running Ray (e.g. auto)")
    p.add_argument(
        "--search",
        choices=("local", "searxng"),
        default="local",
        help="searxng: HTML corpora served on loopback behind a SearXNG-compatible search",
    )
    p.add_argument("--root", default=str(ROOT), help="where build.py put the corpora")
    p.add_argument("--cache-dir", default=None, help="index cache (default: ROOT/NAME/index)")
    p.add_argument("--llm", default="extractive", help="llm.provider for the runs")
    p.add_argument("--limit", type=int, default=None, help="first N questions per corpus")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--show-misses", action="store_true", help="list development misses")
    return p.parse_args(argv)


def _selected(args: argparse.Namespace) -> list[tuple[str, list[Question]]]:
    known = corpus_names()
    names = args.corpus or known
    parts = set(PART_NAMES.values()) if args.part == "both" else {PART_NAMES[args.part]}
    out: list[tuple[str, list[Question]]] = []
    for name in names:
        if name not in known:
            raise QuestionsError(f"no corpus {name!r} (known: {', '.join(known)})")
        if args.search == "searxng" and load_manifest(name).format != "html":
            if args.corpus:
                raise QuestionsError(f"{name}: --search searxng serves HTML corpora only")
            continue  # the web path is measured on the corpora a web server would serve
        folder = docs_dir(name, Path(args.root).expanduser())
        if not folder.is_dir() or not any(folder.iterdir()):
            raise QuestionsError(f"{name} is not built: python bench/corpora/build.py {name}")
        questions = [q for q in load_questions(name) if q.part in parts]
        out.append((name, questions[: args.limit] if args.limit else questions))
    return out


@contextlib.contextmanager
def _searched(search: str, settings: Any, ns: argparse.Namespace, tmp: Path) -> Iterator[Any]:
    """The settings the runs use: the local corpus as is, or (``searxng``) no corpus and web
    search over the corpus's pages served on loopback (``web_corpus.py``), ranked by the corpus
    index, which is built first when it is not cached yet."""
    if search == "local":
        yield settings
        return
    import os

    from web_corpus import ServedCorpus

    from deepresearch.run import driver

    driver.build_index(settings)
    web = make_settings(
        argparse.Namespace(**{**vars(ns), "docs": None}),
        tmp / "web",
        {
            "search.providers": "searxng",
            "web.allow_private_urls": True,  # the pages are on loopback
            "web.per_host_delay_s": 0.0,
        },
    )
    before = os.environ.get("SEARXNG_URL")
    with ServedCorpus(Path(ns.docs), plain_index(settings)) as searxng_url:
        os.environ["SEARXNG_URL"] = searxng_url  # the driver hands it to the search gateway
        try:
            yield web
        finally:
            if before is None:
                os.environ.pop("SEARXNG_URL", None)
            else:
                os.environ["SEARXNG_URL"] = before


def main(argv: Sequence[str] | None = None) -> int:
    import json

    args = parse_args(argv)
    try:
        selected = _selected(args)
    except Exception as exc:  # bad input: one line, exit 2
        print(f"documents.py: {exc}", file=sys.stderr)
        return 2
    from deepresearch.cluster import runtime

    modes = ["quick", "deep"] if args.mode == "both" else [args.mode]
    rows: list[tuple[str, str, str, dict[str, Any]]] = []
    misses: list[str] = []
    quiet = contextlib.redirect_stdout(sys.stderr)  # stdout carries only the result
    with quiet, tempfile.TemporaryDirectory(prefix="documents-bench-") as tmp_name:
        connection = None
        try:
            for name, questions in selected:
                root = Path(args.root).expanduser()
                ns = argparse.Namespace(
                    docs=str(docs_dir(name, root)),
                    cache_dir=args.cache_dir or str(root / name / "index"),
                    llm=args.llm,
                    mode=modes[0],
                    address=args.address,
                )
                settings = make_settings(ns, Path(tmp_name) / name)
                if connection is None:
                    connection = runtime.connect(settings.ray)
                label = name if args.search == "local" else f"{name}/web"
                with _searched(args.search, settings, ns, Path(tmp_name) / name) as run_settings:
                    for mode in modes:
                        outcomes: list[Outcome] = []
                        for i, q in enumerate(questions, 1):
                            outcomes.append(run_one(label, q, run_settings, mode))
                            progress(outcomes[-1], i, len(questions))
                        add_baseline(questions, outcomes, plain_index(settings))
                        for part in PART_NAMES.values():
                            chosen = [o for o in outcomes if o.part == part]
                            if chosen:
                                rows.append((label, part, mode, aggregate(chosen)))
                    misses += [
                        f"{name} {mode} {o.status}: {o.question}"
                        for o in outcomes
                        if o.part == "development" and not o.answer
                    ]
        finally:
            if connection is not None:
                runtime.disconnect(connection)
    if args.json:
        print(json.dumps({"llm": args.llm, "rows": [[c, p, m, f] for c, p, m, f in rows]}))
    else:
        print(table(rows))
        if args.show_misses:
            print("\n".join(["development misses (Answer lacks a key):", *misses]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
