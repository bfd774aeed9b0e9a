"""The README demo question over the real SEC 10-Q filings: the Answer states the figure with its
period and unit, taken from the self-describing table row of the right filing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from deepresearch.actors import crew
from deepresearch.run import driver

DOCS = Path(__file__).resolve().parents[2] / "../shared/data/sec-10q/docs"
# another company whose quarter ended the same day (July 1, 2023) competes too
FILINGS = (
    "2022 Q3 AAPL.pdf",
    "2023 Q2 AAPL.pdf",
    "2023 Q3 AAPL.pdf",
    "2023 Q3 MSFT.pdf",
    "2023 Q2 INTC.pdf",
)

pytestmark = [
    pytest.mark.usefixtures("ray_session"),
    pytest.mark.slow,
    pytest.mark.skipif(
        not all((DOCS / f).is_file() for f in FILINGS), reason="SEC 10-Q corpus not present"
    ),
]


def test_demo_question_is_answered_with_the_figure(tmp_path: Path, make_settings: Any) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name in FILINGS:  # a few real filings: other quarters and another company compete
        shutil.copy(DOCS / name, corpus / name)
    settings = make_settings(corpus)
    question = "What was Apple's total net sales for the quarter ended July 1, 2023?"
    summary = driver.execute(driver.prepare(question, "quick", settings), crew=crew)
    assert summary.status == "completed"
    report = Path(summary.report_path or "").read_text()
    answer = report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    first = answer.strip().split("\n\n")[0]
    assert "81,797" in first and "Three Months Ended July 1, 2023" in first
    assert "in millions" in first
    assert re.search(r"\[\d+\]", first)  # cited
    cited = {s.n: s.title for s in summary.sources}
    n = int(re.findall(r"\[(\d+)\]", first)[0])
    assert cited[n] == "2023 Q3 AAPL.pdf"
