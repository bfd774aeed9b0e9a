"""Deep mode with the model-free planner on generated documents of two kinds (a tool's manual
and a company's quarterly figures): a question about two things is researched whole, as quick
mode does, then in whole-question parts, and the deep Answer holds all that quick's does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from report_checks import body_of

from deepresearch.actors import crew
from deepresearch.run import driver

pytestmark = pytest.mark.usefixtures("ray_session")

MANUAL = """# packtool manual

## Options

The -f option names the archive file that packtool reads or writes, for example -f backup.pak.

The -x option extracts every member of the archive into the current directory.

The -v option lists each member as it is processed.

## Exit status

packtool exits with status 0 when every member was processed and 2 on a usage error.
"""

FIGURES = """Initech quarterly report

Initech's net sales were $4,812 million for the quarter ended March 31, 2024.

Initech's net sales were $4,305 million for the quarter ended March 31, 2023.

Operating expenses grew because of hiring in the services segment.
"""


def corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "packtool.md").write_text(MANUAL)
    (root / "initech-q1.txt").write_text(FIGURES)
    return root


def section(report: str, name: str) -> str:
    return report.split(f"## {name}\n\n", 1)[-1].split("\n## ", 1)[0]


def headings(report: str) -> list[str]:
    shown = re.findall(r"^## (.+)$", report, re.MULTILINE)
    return [h for h in shown if h not in {"Answer", "Gaps and limits", "Sources", "Findings"}]


def run(question: str, mode: str, settings: Any) -> str:
    summary = driver.execute(driver.prepare(question, mode, settings), crew=crew)
    assert summary.status == "completed", summary
    return body_of(Path(summary.report_path or "").read_text())


@pytest.mark.parametrize(
    ("question", "needles"),
    [
        ("What do the -f and -x options of packtool do?", ("-f option", "-x option")),
        (
            "What were Initech's net sales for the quarters ended March 31, 2024 and 2023?",
            ("$4,812", "$4,305"),
        ),
    ],
)
def test_a_split_question_is_researched_whole_then_in_whole_question_parts(
    question: str, needles: tuple[str, ...], tmp_path: Path, make_settings: Any
) -> None:
    settings = make_settings(corpus(tmp_path / "docs"), **{"deep.max_parallel": 3})
    quick, deep = run(question, "quick", settings), run(question, "deep", settings)
    shown = headings(deep)
    # every section heading is a whole question: the question itself, then its parts
    assert shown[0] == question and len(shown) == 3, shown
    assert all(h.endswith("?") and h[0].isupper() for h in shown), shown
    assert all(len(h.split()) >= 5 for h in shown), shown
    # deep's Answer opens with quick's and holds every figure and passage it does
    quick_answer, deep_answer = section(quick, "Answer"), section(deep, "Answer")
    assert deep_answer.startswith(quick_answer.split("\n\n")[0])
    figures = set(re.findall(r"\$[\d,.]+", quick_answer))
    assert figures <= set(re.findall(r"\$[\d,.]+", deep_answer))
    assert all(n in deep_answer for n in needles), deep_answer
    # a passage is quoted once in the Answer
    paragraphs = [p for p in deep_answer.split("\n\n") if p.strip()]
    assert len(paragraphs) == len(set(paragraphs))


def test_a_question_that_stays_whole_says_so_and_runs_as_quick_does(
    tmp_path: Path, make_settings: Any
) -> None:
    settings = make_settings(corpus(tmp_path / "docs"))
    question = "What does the -v option do and when should it be used?"
    quick, deep = run(question, "quick", settings), run(question, "deep", settings)
    gaps = section(deep, "Gaps and limits")
    assert "Not split into sub-questions: researched whole, as quick mode does" in gaps
    assert "two clauses" in gaps
    assert section(deep, "Answer") == section(quick, "Answer")
