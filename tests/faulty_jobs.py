"""An extraction job for ``ExtractionPool`` tests, importable by its forkserver workers."""

from __future__ import annotations

import os
import time
from pathlib import Path

from deepresearch.providers.documents.extract import extract_path
from deepresearch.providers.documents.extracted_doc import ExtractedDoc


def faulty_job(path: Path) -> ExtractedDoc:
    """Files named ``hang*`` never finish and ``crash*`` kill their worker."""
    if path.name.startswith("hang"):
        time.sleep(3600)
    if path.name.startswith("crash"):
        os._exit(70)
    return extract_path(path)
