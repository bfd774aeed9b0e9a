"""The layers stay one-way: ``text`` <- ``policies`` <- ``providers`` / ``actors``.

Pure policies that reach into a provider module drag its dependencies (and its private names) into
every rule; text analysis they both need lives in ``text``. Read with ``ast``, so an import inside a
function counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "policies": ("deepresearch.providers", "deepresearch.actors"),
    "text": ("deepresearch.providers", "deepresearch.actors", "deepresearch.policies"),
}


def imported_modules(source: str) -> list[str]:
    """Every module an import statement names (``from a import b`` gives ``a`` and ``a.b``)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
            out.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def violations(package: str) -> list[str]:
    found: list[str] = []
    for path in sorted((ROOT / package).glob("*.py")):
        for module in imported_modules(path.read_text(encoding="utf-8")):
            if any(module == f or module.startswith(f"{f}.") for f in FORBIDDEN[package]):
                found.append(f"{package}/{path.name} imports {module}")
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layers_import_nothing_from_higher_ones(package: str) -> None:
    assert list((ROOT / package).glob("*.py")), f"no modules found under {package}/"
    assert violations(package) == []


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import deepresearch.providers.llm.rules\n"
        "from deepresearch import providers\n"
        "def f():\n"
        "    from deepresearch.providers.llm.sentences import _NAME\n"
    )
    modules = imported_modules(source)
    assert "deepresearch.providers.llm.rules" in modules
    assert "deepresearch.providers" in modules
    assert "deepresearch.providers.llm.sentences" in modules
