"""PDFs written for tests: plain text pages, or laid out cell by cell the way filings print tables.

A module of its own, not conftest: the integration tier has a conftest too, and a test that
imports ``conftest`` gets whichever was loaded first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from deepresearch.providers.testing.fake_web import assemble_pdf, build_pdf, escape_pdf_text


def write_pdf(path: Path, pages: Sequence[Sequence[str]]) -> Path:
    """A minimal valid text PDF at ``path``: one Helvetica line per string, a list per page."""
    path.write_bytes(build_pdf(pages))
    return path


# Helvetica advance widths (1/1000 em) of the characters tables print; other glyphs ~ 556
_HELVETICA = {
    **dict.fromkeys("0123456789$", 556),
    ",": 278,
    ".": 278,
    " ": 278,
    "(": 333,
    ")": 333,
    "%": 889,
    "\u2014": 1000,
    "*": 389,
}


def text_width(text: str, size: float = 9.0) -> float:
    """Width of ``text`` in Helvetica at ``size`` points, to right-align numbers in a column."""
    return sum(_HELVETICA.get(ch, 556) for ch in text) * size / 1000


Placed = tuple[float, float, str]  # (x, y, text): text drawn with its left baseline at (x, y)


def write_positioned_pdf(path: Path, pages: Sequence[Sequence[Placed]], size: float = 9.0) -> Path:
    """A PDF whose strings sit at given positions (WinAnsi Helvetica, so "\u2014" prints), the
    way filings lay out tables: each cell placed on its own, numbers right-aligned by the caller."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    kids = []
    for placed in pages:
        ops = ["BT", f"/F1 {size:g} Tf"]
        for x, y, text in placed:
            body = escape_pdf_text(text).encode("cp1252").decode("latin-1")
            ops.append(f"1 0 0 1 {x:.2f} {y:.2f} Tm ({body}) Tj")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        kids.append(len(objects) + 1)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects) + 2} "
            "0 R /Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    refs = " ".join(f"{k} 0 R" for k in kids)
    objects[1] = f"<< /Type /Pages /Kids [{refs}] /Count {len(kids)} >>".encode()
    path.write_bytes(assemble_pdf(objects))
    return path
