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
