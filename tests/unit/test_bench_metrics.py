"""The pure metric functions of bench/sec10q.py (loaded by path: bench/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "sec10q.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_sec10q", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


bench = _load()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("total net sales were $81,797 million", {"81797"}),
        ("revenue of $2.4 billion", {"2.4"}),
        ("margin rose 5% and then 12.50 percent", {"5", "12.5"}),
        ("grew 5 percent", {"5"}),
        ("a bare 5 is not a figure, 42 is", {"42"}),
        ("in 2023 and fiscal 1999, versus 2050 units", {"2050"}),
        ("for the quarter ended June 25, 2022", set()),
        ("the Q3 10-Q and FY23 filing", set()),
        ("1. Weakness in currencies\n2) Lower volume\n10. Cost savings", set()),
        ("a loss of (1,234) and 0.5", {"1234", "0.5"}),
        ("sales of 1,234,567 units", {"1234567"}),
    ],
)
def test_figures(text: str, expected: set[str]) -> None:
    assert bench.figures(text) == expected


def test_figures_match_across_formats() -> None:
    answer = "Net sales were $81,797 million, up 5%. (SOURCE: 2023 Q3 AAPL.pdf)"
    report = "| Total net sales | $ 81,797 | $ 82,959 |\nGross margin 5 % higher"
    assert bench.figure_recall(answer, report) == 1.0
    assert bench.figure_recall(answer, "Net sales were 82,959") == 0.0
    assert bench.figure_recall("No figures here.", report) is None


def test_a_figure_in_billions_to_the_million_is_found_in_millions() -> None:
    """ "$23.198 billion" is the table's 23,198 (in millions); "$15.3 billion" is rounded and
    is found only as itself."""
    answer = "Net cash from operations was $23.198 billion; revenue was $15.3 billion."
    assert bench.figure_recall(answer, "Net cash from operations 23,198 24,540") == 0.5
    assert bench.figure_recall(answer, "Revenue 15,338") == 0.0
    assert bench.figure_recall(answer, "$23.198 billion and $15.3 billion") == 1.0
    assert bench.answered("It was $0.530 billion.", "| Other | 530 |")
    assert not bench.answered("It was $1.450 billion.", "| Other | 1,449 |")


def test_gold_globs_and_citation_matching() -> None:
    globs = bench.gold_globs("*2023 Q3 AAPL*,\n*2023 Q2 AAPL*")
    assert globs == ["*2023 Q3 AAPL*", "*2023 Q2 AAPL*"]
    cited = [("2023 Q2 AAPL.pdf", "doc:2023 Q2 AAPL.pdf#page=4")]
    assert bench.cites_gold(globs, cited)
    assert not bench.cites_gold(globs, [("2023 Q3 MSFT.pdf", "doc:2023 Q3 MSFT.pdf#page=1")])
    assert bench.cites_gold(["*NVDA*"], [("", "doc:sub/2023 Q3 NVDA.pdf#page=2")])


def test_report_text_drops_sources_and_footer() -> None:
    md = "# T\n\n## Answer\n\nSales 81,797 [1]\n\n## Sources\n\n1. p. 44\n\n---\n\n- Run 12345\n"
    assert bench.figures(bench.report_text(md)) == {"81797"}


def test_verification_counts_come_from_the_footer_the_report_prints() -> None:
    from deepresearch.reports.markdown import Footer, render
    from deepresearch.schemas import Report, Verification

    v = Verification(claims=9, cited=8, verified=7, rewritten=1, dropped=1, figures=5)
    report = Report(query="q", title="t", answer="a", sections=(), sources=(), verification=v)
    md = render(report, Footer("r.md", "r1", "quick"))
    counts = bench.verification_counts(md)
    assert counts == {
        "claims": 9,
        "cited": 8,
        "verified": 7,
        "rewritten": 1,
        "dropped": 1,
        "figures_supported": 0,
        "figures": 5,
    }
    body_only = md.split("\n---\n")[0]
    assert bench.verification_counts(body_only + "\nClaims: 1 · cited: 1 · verified: 1") is None
    assert bench.ratio(7, 8) == 0.875 and bench.ratio(1, 0) is None


def test_citation_precision_and_figure_accuracy_are_pooled_over_questions() -> None:
    def outcome(verify: dict[str, int] | None) -> object:
        return bench.Outcome("q", "t", "completed", 1.0, True, None, verify=verify)

    keys = ("claims", "cited", "verified", "rewritten", "dropped", "figures", "figures_supported")
    a = dict(zip(keys, (10, 10, 10, 0, 0, 4, 4), strict=True))
    b = dict(zip(keys, (5, 4, 2, 1, 1, 4, 2), strict=True))
    result = bench.aggregate([outcome(a), outcome(b), outcome(None)])  # type: ignore[list-item]
    assert result["citation_precision"] == round(12 / 14, 4)
    assert result["figure_accuracy_in_passages"] == 0.75
    assert result["claims"]["dropped"] == 1


# ------------------------------------------------------------------------------------------------
# The general retrieval rules this benchmark motivated (policies/search/ranking.py); they live here only
# because this is the test file of the benchmark's work — move them beside ranking's tests freely.

np = pytest.importorskip("numpy")


def test_document_prior_prefers_the_named_document_over_a_rare_topic_word() -> None:
    from deepresearch.policies.search.ranking import document_prior

    # 4 documents; "acme" (a name) is all over doc 0, "shift" (a topic word) all over doc 2,
    # "revenue" is everywhere and must not matter.
    acme = (np.array([30, 0, 0, 0]), True)
    shift = (np.array([0, 0, 30, 0]), False)
    revenue = (np.array([20, 20, 20, 20]), False)
    prior = document_prior([acme, shift, revenue])
    assert prior.argmax() == 0 and prior[0] > 2 * prior[2]
    assert prior[1] == pytest.approx(prior[3])
    flat = document_prior([revenue])
    assert flat.max() - flat.min() == pytest.approx(0.0)


def test_cover_date_is_the_latest_full_date() -> None:
    from deepresearch.policies.search.ranking import cover_date

    cover = "For the quarterly period ended July 1, 2023 ... outstanding as of July 21, 2023."
    assert cover_date(cover) > cover_date("For the quarter ended April 1, 2023")
    assert cover_date("Notes due 2042; no full date here") == 0
    assert cover_date("February 30, 2023 is not a date") == 0


def test_recency_prefers_the_newest_relevant_document() -> None:
    from deepresearch.policies.search.ranking import RECENCY_PENALTY, recency_weights, wants_latest

    assert wants_latest("gross margin in the most recent 10-Q")
    assert not wants_latest("gross margin over the last two years")
    prior = np.array([0.9, 0.9, 0.1, 0.0])  # docs 0-1 are about the query, 2 is newest overall
    dates = np.array([738000, 738100, 738500, 0])
    weights = recency_weights(prior, dates)
    assert weights.tolist() == [RECENCY_PENALTY, 1.0, RECENCY_PENALTY, RECENCY_PENALTY]
    assert recency_weights(np.zeros(4), dates).tolist()[2] == 1.0  # nothing named: newest wins
    assert recency_weights(prior, np.zeros(4, dtype=int)).tolist() == [1.0] * 4


def test_answering_row_outranks_a_sentence_that_only_repeats_the_name() -> None:
    from deepresearch.text.sentences import Scorer, build_units

    filler = [
        (3, "Services net sales grew in the quarter for this segment."),
        (3, "Products net sales fell in the quarter for this segment."),
        (3, "Net sales by category were mixed across all regions this year."),
        (3, "Total operating expenses are shown below here."),
    ]
    units = build_units(
        [
            (1, "Wearables total net sales include Acme TV and Acme Watch."),
            (2, "Total net sales $ 81,797 $ 82,959"),
            *filler,
        ]
    )
    scores = Scorer(units).score("How have Acme's total net sales changed?", [])
    assert units[scores.index(max(scores))].source == 2


def test_quick_mode_answer_takes_several_cited_findings() -> None:
    from deepresearch.llm_messages import SourceText, WriteTask
    from deepresearch.providers.llm.extractive import answer_write
    from deepresearch.schemas import Finding, ReportSection

    section = ReportSection(
        heading="Acme net sales",
        findings=(
            Finding(text="Total net sales $ 81,797 $ 82,959", citations=("doc:a",)),
            Finding(text="Total net sales decreased 1% in the quarter.", citations=("doc:b",)),
            Finding(text="The weather was pleasant.", citations=("doc:b",)),
        ),
    )
    sources = tuple(
        SourceText(n=i, url=u, title=u, location=u, text="")
        for i, u in ((1, "doc:a"), (2, "doc:b"))
    )
    draft = answer_write(
        WriteTask(query="Acme total net sales", sections=(section,), sources=sources)
    )
    assert "81,797" in draft.answer and "decreased 1%" in draft.answer
    assert "weather" not in draft.answer
    assert set(draft.answer_sources) == {1, 2}


def test_answer_section_and_answered() -> None:
    md = (
        "# T\n\n## Answer\n\nNet sales were $81,797 million [1].\n\n"
        "## Findings\n\n- Net sales 82,959 [1]\n\n## Sources\n\n1. p. 4\n"
    )
    section = bench.answer_section(bench.report_text(md))
    assert bench.figures(section) == {"81797"}
    answer = "Net sales: $81,797 million and $82,959 million."
    assert bench.figure_recall(answer, section) == 0.5
    assert bench.answered(answer, section) is True
    assert bench.answered("$82,959 million", section) is False
    assert bench.answered("No figures.", section) is None
    assert bench.answer_section("# T\n\nno answer heading\n") == ""


def test_evidence_text_reads_every_finding_of_the_checkpoint() -> None:
    data = {
        "completed": [
            {"findings": [{"text": "Sales 81,797", "citations": ["u"]}]},
            {"findings": [{"text": "Margin 44.5%", "citations": ["v"]}]},
        ]
    }
    text = bench.evidence_text(data)
    assert bench.figure_recall("81,797 and 44.5% and 12,345", text) == 2 / 3
    assert bench.evidence_text({}) == ""


def test_aggregate_reports_answer_and_evidence_recall() -> None:
    def outcome(ans: float | None, ok: bool | None, ev: float | None) -> object:
        return bench.Outcome(
            "q", "t", "completed", 1.0, True, ev, answer_recall=ans, answered=ok, evidence_recall=ev
        )

    result = bench.aggregate(
        [outcome(1.0, True, 1.0), outcome(0.0, False, 0.5), outcome(None, None, None)]
    )
    assert result["answer_figure_recall"] == 0.5
    assert result["answered"] == 0.5
    assert result["evidence_figure_recall"] == 0.75


def test_the_split_is_fixed_by_the_hash_of_the_question_as_written() -> None:
    """The rule is the SHA-256's first hex digit (0-4: validation); padding does not move a
    question, and the reviewed set splits about 100 / 47."""
    assert bench.part_of("What is the total revenue?") == "development"  # sha256 starts with 'c'
    assert bench.part_of("What were the net sales?") == "validation"  # sha256 starts with '4'
    assert bench.part_of("What is the gross margin?") == "validation"  # sha256 starts with '0'
    assert bench.part_of("  What were the net sales?\n") == "validation"
    qna = Path(bench.DEFAULT_QNA)
    if qna.is_file():
        rows = bench.load_rows(qna, None)
        held = sum(bench.part_of(r["Question"]) == "validation" for r in rows)
        assert (len(rows) - held, held) == (99, 48)


def test_summarize_prints_every_metric_per_part_beside_the_bm25_baseline() -> None:
    def outcome(part: str, ans: float, top1: float, top3: float) -> object:
        return bench.Outcome(
            "q",
            "t",
            "completed",
            1.0,
            True,
            ans,
            answer_recall=ans,
            answered=ans > 0,
            evidence_recall=ans,
            part=part,
            bm25_top1=top1,
            bm25_top3=top3,
        )

    result = bench.summarize(
        [outcome("development", 1.0, 0.0, 1.0), outcome("validation", 0.0, 0.5, 0.5)]
    )
    assert set(result) == {"overall", "development", "validation"}
    assert result["development"]["answer_figure_recall"] == 1.0
    assert result["validation"]["answer_figure_recall"] == 0.0
    assert result["overall"]["answer_figure_recall"] == 0.5
    assert result["validation"]["bm25_top1_figure_recall"] == 0.5
    assert result["overall"]["bm25_top3_figure_recall"] == 0.75


def test_bm25_baseline_reads_the_best_one_and_best_three_passages() -> None:
    passages = ["Sales were 81,797.", "Margin 44.5%.", "Costs 12,345.", "Other 99,999."]
    assert bench.bm25_baseline("81,797 and 12,345", passages) == (0.5, 1.0)
    assert bench.bm25_baseline("99,999", passages) == (0.0, 0.0)
    assert bench.bm25_baseline("no figures", passages) == (None, None)
