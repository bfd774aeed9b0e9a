"""A trend question over real SEC 10-Q filings: the Answer is a period -> value table built from
the cited rows of several filings, in time order, one cited line per quarter."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from deepresearch.actors import crew
from deepresearch.run import driver
from deepresearch.text.question import periods_of

DOCS = Path(__file__).resolve().parents[2] / "../shared/data/sec-10q/docs"
FILINGS = ("2022 Q3 AAPL.pdf", "2023 Q1 AAPL.pdf", "2023 Q2 AAPL.pdf", "2023 Q3 AAPL.pdf")

pytestmark = [
    pytest.mark.usefixtures("ray_session"),
    pytest.mark.slow,
    pytest.mark.skipif(
        not all((DOCS / f).is_file() for f in FILINGS), reason="SEC 10-Q corpus not present"
    ),
]


def test_a_trend_question_is_answered_with_a_table_in_time_order(
    tmp_path: Path, make_settings: Any
) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name in FILINGS:
        shutil.copy(DOCS / name, corpus / name)
    summary = driver.execute(
        driver.prepare(
            "How has Apple's total net sales changed over time?", "quick", make_settings(corpus)
        ),
        crew=crew,
    )
    assert summary.status == "completed"
    report = Path(summary.report_path or "").read_text()
    answer = report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in answer.strip().splitlines() if line.startswith("|")]
    assert lines[0].startswith("| ") and "Total net sales" in lines[0], answer
    cells = [line.split("|") for line in lines[2:]]
    dates = [[p.date for p in periods_of(c[1]) if p.date][-1] for c in cells]
    assert len(dates) >= 3 and dates == sorted(dates) and len(set(dates)) == len(dates)
    # the total is the last column (its parts, when the filings state them, stand before it)
    assert "Total net sales" in lines[0].split("|")[-2], answer
    assert all(re.search(r"\[\d+\]", c[-1]) for c in cells)  # every line cited
    values = {c[-1].split("[")[0].strip() for c in cells}
    assert values & {"81,797", "94,836", "117,154", "82,959"}, answer  # real quarters
