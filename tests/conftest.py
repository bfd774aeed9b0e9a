"""Fixtures shared by every tier: small corpora made on the fly (Markdown, HTML, text and real PDFs)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from pdf_layout import write_pdf

REPO = Path(__file__).resolve().parents[1]
SEC_DOCS = REPO.parent / "shared" / "data" / "sec-10q" / "docs"


@pytest.fixture(autouse=True, scope="session")
def ctrl_c_reaches_children() -> Iterator[None]:
    """Tests that type Ctrl-C into a CLI they start need it to start with SIGINT's default
    action. A suite run as a background job (``make test &``) has SIGINT ignored, every child
    inherits that, and Python then installs no KeyboardInterrupt handler: the run ignores the
    test's Ctrl-C and finishes. A handler here is reset to the default in each child at exec."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


@pytest.fixture(autouse=True, scope="session")
def no_foreign_ray() -> Iterator[None]:
    """No test may join a Ray it did not start: ``RAY_ADDRESS`` (or, for ``jobs`` and ``submit``,
    ``RAY_API_SERVER_ADDRESS``) set in the user's shell would send every CLI the tests start
    (they inherit this environment) to that cluster. tests/e2e/test_foreign_head.py checks it."""
    names = ("RAY_ADDRESS", "RAY_API_SERVER_ADDRESS")
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    yield
    os.environ.update(saved)


def build_small_corpus(root: Path) -> Path:
    """A few documents about two fictional companies, in every supported format, plus a corrupt PDF."""
    root.mkdir(parents=True, exist_ok=True)
    write_pdf(
        root / "2024 Q1 ACME.pdf",
        [
            ["ACME Corp quarterly report", "For the quarter ended March 31, 2024"],
            [
                "ACME Corp total net sales were $1,234 million for the quarter ended March 31, 2024.",
                "Total net sales $ 1,234 $ 1,100",
                "Gross margin was 41.5% compared with 39.0% a year earlier.",
            ],
            ["Risk factors: supply chain constraints may affect ACME Corp results."],
        ],
    )
    write_pdf(
        root / "2024 Q1 GLOBEX.pdf",
        [
            ["Globex Inc quarterly report"],
            [
                "Globex Inc revenue was $987 million for the quarter ended March 31, 2024.",
                "Operating expenses increased 12% due to research and development headcount.",
            ],
        ],
    )
    (root / "notes.md").write_text(
        "# Analyst notes\n\nACME Corp opened two factories in 2024. Globex Inc cut prices twice.\n"
    )
    (root / "press.html").write_text(
        "<html><head><title>ACME press release</title></head><body><article><h1>ACME press</h1>"
        "<p>ACME Corp announced a dividend of $0.50 per share in April 2024.</p>"
        "<p>The board approved a share buyback program of $200 million.</p></article></body></html>"
    )
    (root / "memo.txt").write_text(
        "Internal memo: Globex Inc plans to expand into Europe in 2025.\n"
    )
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf \x00\x01\x02")
    return root


@pytest.fixture()
def small_corpus(tmp_path: Path) -> Path:
    return build_small_corpus(tmp_path / "corpus")


@pytest.fixture()
def pdf_writer() -> Callable[[Path, Sequence[Sequence[str]]], Path]:
    return write_pdf
