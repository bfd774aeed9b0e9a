"""Installs resolve the same way every time: what the package loads is declared, not left to extras.

One fresh install got lxml 6 without ``lxml_html_clean`` (justext asks for it only through the
extra ``lxml[html_clean]``, which that lxml/pip pair dropped) and every HTML page then failed with
``ImportError: lxml.html.clean module is now a separate project``. These tests read the installed
distribution's own metadata, so they check what ``pip install ray-deep-research`` would resolve.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement

from deepresearch.cluster.dependency_check import RUNTIME_MODULES

DIST = "ray-deep-research"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
NOT_PACKAGE = {"tests", "bench", "build", ".venv", ".venv-local-model"}

# A page with boilerplate around the article and a table: trafilatura keeps the article and the
# table, and drops the navigation and the cookie banner. The markup-stripping fallback keeps all.
PAGE = """<!doctype html><html><head><title>Quarterly results</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop the spring catalogue now</a></nav>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
<article><h1>Quarterly results</h1>
<p>Widget sales rose sharply in the quarter as the new factory reached full output, and the
company said demand from industrial customers stayed strong through the end of the period.</p>
<p>Management expects margins to stay near current levels next quarter, citing stable input
costs and a backlog that covers most of the planned production for the coming months.</p>
<table><tr><th>Segment</th><th>Revenue</th></tr>
<tr><td>Widgets</td><td>1,234</td></tr><tr><td>Gadgets</td><td>567</td></tr></table>
</article>
<footer>Copyright Example Corp. Subscribe to our newsletter for weekly offers.</footer>
</body></html>"""


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(dist: str = DIST) -> dict[str, Requirement]:
    """The distribution's runtime requirements (no extras such as ``dev``), by normalized name."""
    found = {}
    for line in requires(dist) or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            found[norm(req.name)] = req
    return found


def reachable(roots: Iterable[str], deps_of: Callable[[str], list[str]]) -> set[str]:
    """Distributions an install of ``roots`` gets without relying on any extra being honoured."""
    seen: set[str] = set()
    todo = [norm(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for line in deps_of(name):
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue  # only under an extra (or another platform): not something to count on
            todo.append(norm(req.name))  # ``lxml[html_clean]`` counts as lxml alone
    return seen


def installed_deps(name: str) -> list[str]:
    try:
        return list(requires(name) or [])
    except PackageNotFoundError:
        return []


def distributions_of(modules: Iterable[str]) -> dict[str, set[str]]:
    """Top-level module -> the distributions that provide it (stdlib and our own left out)."""
    table = packages_distributions()
    out: dict[str, set[str]] = {}
    for module in modules:
        top = module.split(".", 1)[0]
        if top in sys.stdlib_module_names or top in ("deepresearch", "_distutils_hack"):
            continue
        dists = {norm(d) for d in table.get(top, [])} - {norm(DIST)}
        if dists:
            out[top] = dists
    return out


def package_imports() -> set[str]:
    """Every module the package's own source imports (tests and benchmarks left out)."""
    names: set[str] = set()
    for path in PACKAGE_ROOT.rglob("*.py"):
        if NOT_PACKAGE & set(path.relative_to(PACKAGE_ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return names


def test_every_third_party_import_of_the_package_is_declared() -> None:
    direct = set(declared())
    undeclared = {
        module: dists
        for module, dists in distributions_of(package_imports()).items()
        if not dists & direct
    }
    assert undeclared == {}, f"imported but not in pyproject dependencies: {undeclared}"


def test_the_html_chain_is_declared_not_left_to_an_extra() -> None:
    """trafilatura -> justext -> lxml.html.clean: each link is a declared dependency."""
    direct = set(declared())
    for name in ("trafilatura", "justext", "lxml", "lxml-html-clean"):
        assert name in direct, f"{name} is not declared"
        assert declared()[name].specifier, f"{name} has no lower bound"


def test_the_check_catches_a_dependency_reached_only_through_an_extra() -> None:
    """What the check would have said before the fix: justext reaches lxml_html_clean only via
    ``lxml[html_clean]``, so without our own declaration it is not reachable."""
    roots = set(declared()) - {"lxml-html-clean"}
    assert "lxml-html-clean" not in reachable(roots, installed_deps)
    assert "lxml-html-clean" in reachable(declared(), installed_deps)


EXTRACT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    {block}
    from deepresearch.providers.documents.extracted_doc import html_doc
    doc = html_doc(sys.stdin.read(), "page.html")
    print(json.dumps({{"text": doc.pages[0], "title": doc.title, "modules": sorted(sys.modules)}}))
    """
)

# Hides lxml_html_clean as a broken install would: the import machinery finds no such module.
BLOCK = """
import importlib.abc
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "lxml_html_clean":
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Hide())
"""


def extract_in_fresh_python(block: str = "") -> subprocess.CompletedProcess[str]:
    script = EXTRACT_SCRIPT.format(block=block)
    return subprocess.run(
        [sys.executable, "-c", script],
        input=PAGE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_real_html_extraction_through_the_installed_package() -> None:
    proc = extract_in_fresh_python()
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    text = out["text"]
    # trafilatura's own path ran: the article and its table are kept, the boilerplate is not
    # (the markup-stripping fallback would keep the navigation, cookie banner and footer).
    assert "Widget sales rose sharply" in text
    assert "1,234" in text and "Gadgets" in text
    assert "cookies" not in text and "Subscribe" not in text and "catalogue" not in text
    assert out["title"] == "Quarterly results"
    loaded = distributions_of(out["modules"])
    assert "lxml_html_clean" in loaded, "the HTML path did not load lxml.html.clean"
    # Every distribution the extraction loaded is one an install gets without extras.
    safe = reachable(declared(), installed_deps)
    unsafe = {m: d for m, d in loaded.items() if not d & safe}
    assert unsafe == {}, f"loaded but only reachable through an extra: {unsafe}"


def test_without_lxml_html_clean_html_extraction_fails() -> None:
    """The failure the declaration prevents (so the tests above guard something real)."""
    proc = extract_in_fresh_python(BLOCK)
    assert proc.returncode != 0
    assert "lxml.html.clean" in proc.stderr or "lxml_html_clean" in proc.stderr


def test_the_job_preflight_checks_every_declared_dependency() -> None:
    """A submitted job checks the cluster's Python for exactly what pyproject declares."""
    assert set(RUNTIME_MODULES) == set(declared())
    for dist, module in RUNTIME_MODULES.items():
        top = module.split(".", 1)[0]
        assert dist in distributions_of([module]).get(top, set()), (dist, module)
