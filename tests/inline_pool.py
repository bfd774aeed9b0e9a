"""An extraction pool that extracts in the test's own process, for tests about which files reach
extraction (the real pool's processes, deadlines and crashes are tested in test_extract)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from deepresearch.errors import ExtractionError
from deepresearch.providers.documents.extract import ExtractionPool, extract_path
from deepresearch.providers.documents.extracted_doc import ExtractedDoc


class InlinePool(ExtractionPool):
    """Extracts in this process (fast tests); records every file it was asked for in ``log``."""

    def __init__(self, log: list[Path] | None = None) -> None:
        super().__init__(1, 30, 2048)
        self.log = log if log is not None else []

    def extract_many(self, paths: Sequence[Path]) -> dict[Path, ExtractedDoc | ExtractionError]:
        out: dict[Path, ExtractedDoc | ExtractionError] = {}
        for path in paths:
            self.log.append(path)
            try:
                out[path] = extract_path(path)
            except ExtractionError as exc:
                out[path] = exc
        return out
