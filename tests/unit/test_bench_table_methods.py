"""bench/table_methods.py counts what a reader can interpret: an answer figure counts only as a
value of a gold filing's row whose headers name a period; a method without its package is skipped
(loaded by path: bench/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pdf_layout import Placed, write_positioned_pdf
from test_pdf_tables import row

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # it imports sec10q beside it
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_table_methods", BENCH / "table_methods.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


bench = _load()
R2 = [480.0, 570.0]


def _filing(path: Path) -> Path:
    page: list[Placed] = [(50.0, 780, "Net sales (in millions):")]
    page += [(R2[0] - 40, 766, "July 1, 2023"), (R2[1] - 40, 766, "June 25, 2022")]
    page += row(752, "Products", ["60,584", "63,355"], R2)
    page += row(740, "Services", ["21,213", "19,604"], R2)
    page += [
        (50.0, 700, "Employees by region:"),
        (R2[0] - 30, 686, "Europe"),
        (R2[1] - 30, 686, "Asia"),
    ]
    page += row(672, "Engineers", ["12,500", "31,700"], R2)
    page += row(660, "Sales", ["4,100", "8,800"], R2)
    return write_positioned_pdf(path, [page])


def test_only_figures_in_rows_with_a_period_header_count_as_readable(tmp_path: Path) -> None:
    docs = [_filing(tmp_path / "2023 Q3 ACME.pdf"), _filing(tmp_path / "2023 Q3 OTHER.pdf")]
    questions = [
        (["*ACME*"], {"60584", "12500"}),  # a dated row's figure, an undated row's figure
        (["*NONE*"], {"21213"}),  # no gold filing extracted: not found
    ]
    result = bench.measure("ours", docs, questions)
    assert result["rows"] == 8
    assert result["answer_figures"] == 3
    assert result["answer_figures_in_rows"] == round(2 / 3, 4)
    assert result["answer_figures_readable"] == round(1 / 3, 4)


def test_a_method_whose_package_is_missing_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    qna = tmp_path / "qna.csv"
    qna.write_text('Question,Source Docs,Answer\nQ,*ACME*,"$60,584 million"\n', encoding="utf-8")
    _filing(tmp_path / "2023 Q3 ACME.pdf")
    monkeypatch.setattr(bench.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(
        sys,
        "argv",
        ["table_methods.py", "--methods", "kreuzberg", "--docs", str(tmp_path), "--qna", str(qna)],
    )
    bench.main()
    assert capsys.readouterr().out == "kreuzberg: skipped: kreuzberg is not installed\n"
