"""A warm run's driver checks that the cached corpus index is fresh without loading it: the
crew's processes search it, and loading it cost the driver bm25s and the whole passage table
(bench/startup.py --head prints the split). A fact about ``sys.modules`` in a fresh process and
about the check's answers, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inline_pool import InlinePool

from deepresearch.providers.search.corpus_index import CorpusIndex
from deepresearch.providers.search.corpus_store import index_is_fresh

PASSAGE_CHARS = 1000  # the settings' default: the driver's check looks for that index

# The driver's index step in a fresh process: its warnings and what the step alone imported.
SCRIPT = r"""
import json, sys
from pathlib import Path
from deepresearch.run import driver
from deepresearch.config.settings import load_settings, overrides_from_flags

corpus, cache, state = (Path(a) for a in sys.argv[1:4])
flags = {"corpus.path": corpus, "corpus.cache_dir": cache, "state_dir": state}
settings = load_settings(None, overrides_from_flags(flags), env={})
before = set(sys.modules)
warnings = driver.build_index(settings)
print(json.dumps({"warnings": warnings, "imported": sorted(set(sys.modules) - before)}))
"""
HEAVY = ("bm25s", "numpy", "pypdfium2", "trafilatura", "snowballstemmer", "rich")
HEAVY += ("deepresearch.providers.search.corpus_index", "deepresearch.text")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "notes.md").write_text("# Widgets\nWidget production doubled in 2023 at the plant.\n")
    (root / "guide.txt").write_text("Solar panel efficiency depends on temperature and shading.\n")
    (root / "broken.pdf").write_bytes(os.urandom(2048))  # its failure is cached, then reported
    return root


def build(corpus: Path, cache: Path) -> list[tuple[str, str]]:
    warnings: list[tuple[str, str]] = []
    CorpusIndex.open(
        corpus,
        cache,
        passage_chars=PASSAGE_CHARS,
        pool_factory=InlinePool,
        on_warning=lambda kind, text: warnings.append((kind, text)),
    )
    return warnings


def test_a_fresh_index_is_checked_without_loading_it(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    built = build(corpus, cache)
    assert [kind for kind, _ in built] == ["extract_failed"]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(corpus), str(cache), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [tuple(w) for w in out["warnings"]] == built  # the failed file, as opening says it
    assert "deepresearch.providers.search.corpus_store" in out["imported"]  # the check ran
    assert [m for m in out["imported"] if m.split(".")[0] in HEAVY or m.startswith(HEAVY)] == []


def quiet(kind: str, text: str) -> None:
    """The scan's warnings are not what these checks are about."""


def test_a_changed_corpus_or_another_index_is_not_fresh(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert not index_is_fresh(corpus, cache, PASSAGE_CHARS, quiet)  # nothing built yet
    build(corpus, cache)
    assert index_is_fresh(corpus, cache, PASSAGE_CHARS, quiet)
    assert not index_is_fresh(corpus, cache, PASSAGE_CHARS + 1, quiet)  # another passage size
    (corpus / "notes.md").write_text("# Widgets\nWidget production tripled.\n")
    assert not index_is_fresh(corpus, cache, PASSAGE_CHARS, quiet)
    build(corpus, cache)
    assert index_is_fresh(corpus, cache, PASSAGE_CHARS, quiet)
    # an index folder without its document list (damaged) is rebuilt, not trusted
    for listed in (cache / "bm25").glob("*/docs.json"):
        listed.unlink()
    assert not index_is_fresh(corpus, cache, PASSAGE_CHARS, quiet)
