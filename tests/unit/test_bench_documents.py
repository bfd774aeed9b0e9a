"""bench/documents.py and its corpora: scoring, the split, the questions (loaded by path: bench/ is
not a package). No corpus is built and nothing is downloaded here."""

from __future__ import annotations

import fnmatch
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


bench = _load("bench_documents", BENCH / "documents.py")
build = sys.modules["corpora.build"]
CORPORA = build.corpus_names()


@pytest.mark.parametrize(
    ("alternatives", "text", "held"),
    [
        (["-6"], "The default compression level is -6 (that is", True),
        (["-6"], "a level of -60 is not it", False),
        (["follow symbolic links"], "-L  Follow symbolic links.", True),
        (["follow symbolic links"], "it follows symbolic links", False),
        (["1000-59999"], "1000-59999:Dynamically allocated", True),
        (["CTRL-]"], "press CTRL-] (jump to tag)", True),
        (["CTRL-]"], "press CTRL-T to go back", False),
        (["--null", "-0"], "use xargs -0 here", True),
        (["--null", "-0"], "use xargs --nul here", False),
        ([":q!"], "\t:q!\n", True),
    ],
)
def test_a_key_is_held_by_one_alternative_as_whole_tokens(
    alternatives: list[str], text: str, held: bool
) -> None:
    assert bench.holds_key(alternatives, text) is held


def test_every_key_must_be_held() -> None:
    keys = [("mode",), ("ownership",), ("timestamps", "times")]
    assert bench.holds_all(keys, "preserve MODE, ownership and times")
    assert not bench.holds_all(keys, "preserve mode and ownership")
    assert not bench.holds_all([("",)], "anything")  # an empty key holds nothing


def test_the_split_is_the_sec_benchs_rule_and_stable() -> None:
    split = sys.modules["split"]
    assert bench.part_of is split.part_of  # one rule for every bench
    q = bench.Question("What is X?", "value", (("x",),), ("a.txt",))
    assert q.part == split.part_of("What is X?") == split.part_of("  What is X? ")
    # fixed once: these never change part
    assert split.part_of("Question number 0?") == "validation"
    assert split.part_of("Question number 1?") == "development"


@pytest.mark.parametrize("name", CORPORA)
def test_each_corpus_has_30_questions_with_kinds_keys_and_gold_in_its_manifest(name: str) -> None:
    manifest = build.load_manifest(name)
    questions = bench.load_questions(name)
    assert len(questions) >= 30
    assert len({q.text for q in questions}) == len(questions)
    patterns = [build.output_name(Path(f), manifest.convert) for f in manifest.files]
    for q in questions:
        assert q.kind in bench.KINDS
        assert q.keys and all(alt.strip() for key in q.keys for alt in key)
        for gold in q.gold:
            assert any(fnmatch.fnmatch(gold, p) for p in patterns), (name, gold)
    parts = [q.part for q in questions]
    assert parts.count("validation") >= 5 and parts.count("development") >= 15


def test_the_corpora_span_three_formats_from_pinned_packages() -> None:
    manifests = [build.load_manifest(n) for n in CORPORA]
    assert len({m.format for m in manifests}) >= 3
    for m in manifests:
        assert m.packages and all(len(p.sha256) == 64 and p.version for p in m.packages)


def test_a_man_page_becomes_a_pdf_named_after_its_command() -> None:
    assert build.output_name(Path("usr/share/man/man1/find.1.gz"), "man-pdf") == "find.pdf"
    assert build.output_name(Path("doc/usr_01.txt"), "copy") == "usr_01.txt"
    assert build.output_name(Path("doc/page.html.gz"), "copy") == "page.html"


def test_the_corpus_digest_follows_names_and_contents(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    first = build.digest(tmp_path)
    assert build.digest(tmp_path) == first
    (tmp_path / "a.txt").write_text("two")
    assert build.digest(tmp_path) != first


def _outcome(part: str, **kw: object) -> object:
    base: dict[str, object] = {"status": "completed", "seconds": 1.0}
    return bench.Outcome("c", "quick", part, "Which secret question?", **{**base, **kw})


def test_aggregate_counts_shares_failures_and_citation_precision() -> None:
    outcomes = [
        _outcome("development", answer=True, report=True, bm25_top3=True, gold=True,
                 verify={"verified": 3, "cited": 4}, answer_chars=300),
        _outcome("development", report=True, verify={"verified": 1, "cited": 1},
                 answer_chars=100),
        _outcome("development", status="failed", seconds=3.0),
        _outcome("development", status="no_answer", seconds=5.0),
    ]  # fmt: skip
    figures = bench.aggregate(outcomes)
    assert figures["n"] == 4 and figures["answer"] == 0.25 and figures["report"] == 0.5
    assert figures["bm25@1"] == 0.0 and figures["bm25@3"] == 0.25 and figures["gold"] == 0.25
    assert figures["failed"] == 1 and figures["no_ans"] == 1
    assert figures["cit_prec"] == 0.8 and figures["median_s"] == 2.0
    assert figures["ans_chars"] == 50  # median of 300, 100, 0, 0
    assert "answer" in bench.table([("c", "development", "quick", figures)]).splitlines()[0]


def test_a_run_whose_every_researcher_failed_counts_as_failed() -> None:
    reason = "Could not research this question: every researcher failed. No answer is given."
    assert bench.run_status("no_answer", reason) == "failed"
    assert bench.run_status("no_answer", "nothing in the corpus supports an answer") == "no_answer"
    assert bench.run_status("completed", "") == "completed"


def test_a_validation_run_prints_neither_its_question_nor_its_score(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.progress(_outcome("validation", answer=True), 1, 2)
    bench.progress(_outcome("development", answer=True), 2, 2)
    val, dev = capsys.readouterr().err.splitlines()
    assert "secret" not in val and "ans=" not in val
    assert "secret" in dev and "ans=Y" in dev


def test_an_unknown_corpus_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--corpus", "no-such-corpus"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no-such-corpus" in err


def test_an_unbuilt_corpus_says_how_to_build_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--corpus", CORPORA[0], "--root", str(tmp_path)]) == 2
    assert "build.py" in capsys.readouterr().err


def test_a_served_page_counts_as_its_gold_document() -> None:
    assert bench.cites_gold(["ch-files.html"], [("Files", "http://127.0.0.1:8/ch-files.html")])
    assert bench.cites_gold(["find.pdf"], [("find.pdf", "doc:find.pdf#page=2")])
    assert not bench.cites_gold(["ch-files.html"], [("Files", "http://127.0.0.1:8/ch-docs.html")])


def test_the_web_search_ranks_one_result_per_document_as_served_urls() -> None:
    from deepresearch.schemas import SearchHit

    web_corpus = _load("bench_web_corpus", BENCH / "web_corpus.py")

    class Index:
        def search(self, query: str, limit: int) -> list[SearchHit]:
            hits = [("a.html", 1), ("a.html", 2), ("b.html", None)]
            return [
                SearchHit(url=f"doc:{n}" + (f"#page={p}" if p else ""), title=n.upper(),
                          snippet=query, provider="local", rank=i)
                for i, (n, p) in enumerate(hits, 1)
            ]  # fmt: skip

    rank = web_corpus.ranked_pages(Index(), lambda name: f"http://127.0.0.1:9/{name}")
    results = rank("q")
    assert [r["url"] for r in results] == ["http://127.0.0.1:9/a.html", "http://127.0.0.1:9/b.html"]
    assert results[0]["title"] == "A.HTML" and results[0]["content"] == "q"


def test_the_web_path_takes_html_corpora_only(capsys: pytest.CaptureFixture[str]) -> None:
    other = next(n for n in CORPORA if build.load_manifest(n).format != "html")
    assert bench.main(["--corpus", other, "--search", "searxng"]) == 2
    assert "HTML" in capsys.readouterr().err
