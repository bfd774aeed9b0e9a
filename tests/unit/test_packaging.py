"""What a fresh clone's install and runs leave behind: a quiet build, and reports git ignores.

A folder of files the package reads that setuptools' ``packages`` does not name makes every
install print a page of "Package would be ignored" warnings (``service/static`` did, in
``make demo``). A report written into the repository root (the default output directory of a
run started there) must not show up in ``git status``, whatever its format.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from deepresearch.storage.report_path import report_name

ROOT = Path(__file__).resolve().parents[2]
NOT_SHIPPED = {"tests", "bench", "docs", "build", "dist", ".venv", ".git", "__pycache__"}


def shipped_folders() -> list[str]:
    """Every folder under the package root that holds files, as a dotted package name."""
    found = []
    for path in sorted(ROOT.rglob("*")):
        parts = path.relative_to(ROOT).parts
        if not path.is_dir() or any(p in NOT_SHIPPED or p.startswith(".") for p in parts):
            continue
        if any(p.endswith(".egg-info") for p in parts):
            continue
        if any(child.is_file() for child in path.iterdir()):
            found.append(".".join(("deepresearch", *parts)))
    return found


def test_every_folder_of_package_files_is_a_listed_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    assert "deepresearch.service.static" in shipped_folders()  # the check sees data folders
    # Both ways: a folder left out is missing from every wheel (though editable installs and
    # tests still work); a package listed but gone breaks the build.
    assert sorted(listed) == sorted(["deepresearch", *shipped_folders()])


@pytest.mark.parametrize("extension", ["md", "json", "html"])
def test_a_report_in_the_repository_root_is_ignored_by_git(extension: str) -> None:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    name = report_name("What were ACME Corp total net sales?", "salt", extension)
    for candidate in (name, name.replace(f".{extension}", f"-1.{extension}")):
        proc = subprocess.run(
            [git, "check-ignore", "--no-index", "-q", candidate], cwd=ROOT, check=False
        )
        assert proc.returncode == 0, f"{candidate} would show in git status"
