"""Report naming and the directory rules of DESIGN §7, with an injected filesystem."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from deepresearch.storage.report_path import (
    choose_directory,
    default_directory,
    is_system_directory,
    report_name,
    slugify,
)

HOME = Path("/home/ann")
TMP = Path("/tmp")


@pytest.mark.parametrize(
    ("query", "slug"),
    [
        (
            "How did Apple's gross margin change in 2023?",
            "how-did-apple-s-gross-margin-change-in-2023",
        ),
        ("  --Hello,   World!!  ", "hello-world"),
        ("ÜBER café", "ber-caf"),
        ("", "report"),
        ("???", "report"),
        ("日本語", "report"),
    ],
)
def test_slugify(query: str, slug: str) -> None:
    assert slugify(query) == slug


def test_slug_is_cut_at_a_hyphen_boundary() -> None:
    query = "word " * 30
    slug = slugify(query)
    assert len(slug) <= 60
    assert slug.endswith("word")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)


def test_slug_without_hyphen_is_hard_cut() -> None:
    assert slugify("a" * 100) == "a" * 60


def test_report_name() -> None:
    name = report_name("What is BM25?", "s1")
    digest = hashlib.sha256(b"What is BM25?\0s1").hexdigest()[:8]
    assert name == f"deep-research-what-is-bm25-{digest}.md"
    assert report_name("What is BM25?", "s2") != name
    assert report_name("What is BM25?", "s1") == name


def _choose(cwd: Path, dirs: dict[Path, list[str]], output_dir: Path | None = None) -> Path:
    """choose_directory over a fake filesystem: ``dirs`` maps a directory to its sub-directories."""
    subdirs = {parent / child for parent, children in dirs.items() for child in children}
    return choose_directory(
        cwd,
        HOME,
        output_dir,
        temp_dir=TMP,
        is_dir=lambda p: p in subdirs,
        list_dir=lambda p: list(dirs.get(p, [])),
    )


def test_output_dir_wins() -> None:
    out = Path("/somewhere")
    assert _choose(HOME, {}, out) == out


@pytest.mark.parametrize(
    "cwd", ["/", "/usr", "/usr/local/bin", "/etc/ssl", "/proc/1", "/var", "/opt", "/bin", "/lib"]
)
def test_system_directories_go_to_temp(cwd: str) -> None:
    assert _choose(Path(cwd), {Path(cwd): ["docs"]}) == TMP


def test_home_goes_to_temp() -> None:
    assert _choose(HOME, {HOME: ["notes"]}) == TMP


def test_sub_paths_of_var_and_opt_are_allowed() -> None:
    project = Path("/var/work/project")
    assert not is_system_directory(project)
    assert _choose(project, {}) == project


def test_windows_system_paths() -> None:
    assert is_system_directory(Path("C:\\Windows\\System32"))
    assert not is_system_directory(Path("/home/ann/windows"))


def test_preferred_sub_directory_by_order_any_case() -> None:
    cwd = HOME / "proj"
    assert _choose(cwd, {cwd: ["Notes", "DOCS", "src"]}) == cwd / "DOCS"
    assert _choose(cwd, {cwd: ["references", "Research"]}) == cwd / "Research"


def test_file_named_like_a_preferred_dir_is_ignored() -> None:
    cwd = HOME / "proj"
    # "research" is listed but is a file: the next preferred name that is a directory wins.
    got = choose_directory(
        cwd,
        HOME,
        None,
        temp_dir=TMP,
        is_dir=lambda p: p.name == "notes",
        list_dir=lambda p: ["research", "notes"],
    )
    assert got == cwd / "notes"


def test_plain_cwd() -> None:
    cwd = HOME / "proj"
    assert _choose(cwd, {cwd: ["src", "README.md"]}) == cwd


def test_unlistable_cwd_falls_back_to_cwd() -> None:
    def boom(_: Path) -> list[str]:
        raise PermissionError("denied")

    cwd = HOME / "proj"
    got = choose_directory(cwd, HOME, None, temp_dir=TMP, is_dir=lambda p: True, list_dir=boom)
    assert got == cwd


def test_default_directory_uses_real_fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Docs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert default_directory(None) == tmp_path.resolve() / "Docs"
    assert default_directory(tmp_path / "x") == tmp_path / "x"
