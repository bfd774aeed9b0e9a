"""The house stays one-way: each folder imports only the folders ``MAY_IMPORT`` lets it, and no
module import circle exists anywhere in the package.

A folder (a "room") is a package folder, or a module at the root (``cli``, ``errors``,
``schemas``, ...). The table reads top to bottom as the program runs: the CLI and its commands,
the service, the driver side of a run, Ray's actors and the plain objects a run host holds,
then providers, pure policies and the text analysis they share, and the config, errors and
messages everything uses. Pure policies never reach into providers or actors: a rule that did
would drag their dependencies into every decision. Read with ``ast``, so an import inside a
function or under ``TYPE_CHECKING`` counts as much as one at the top.

The house also stays low: ``MAX_FLOORS`` bounds the longest chain of rooms each importing the next,
so a newcomer following a run from the entry point down to ``errors`` enters at most that many.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOT_PACKAGE = {"tests", "bench", "build", ".venv", ".venv-local-model"}

BASE = {"config", "errors", "schemas", "llm_messages", "text"}  # what anything may use
DOMAIN_IMPLEMENTATIONS = {"domains/generic", "domains/filings"}  # loaded by the registry only
POLICY = BASE | {"policies"}  # a pure policy: the shared URL rules and the base, no more
PROVIDER = BASE | {"policies", "policies/resilience", "providers"}
ALL_POLICIES = {
    "policies",
    "policies/follow_up",
    "policies/gate",
    "policies/lifecycle",
    "policies/resilience",
    "policies/search",
    "policies/synthesis",
    "policies/verification",
}
ALL_PROVIDERS = {
    "providers",
    "providers/assembly",
    "providers/documents",
    "providers/llm",
    "providers/search",
    "providers/testing",
    "providers/web",
}

MAY_IMPORT: dict[str, set[str]] = {
    "__init__": set(),
    "__main__": {"cli", "cluster"},
    "cli": BASE | {"commands", "run", "actors", "cluster", "storage"},
    "commands": BASE
    | {"service", "run", "actors", "per_run", "cluster", "storage"}
    | ALL_POLICIES
    | ALL_PROVIDERS,
    "service": BASE
    | {"run", "actors", "cluster", "storage", "reports"}
    | ALL_POLICIES
    | ALL_PROVIDERS,
    "run": BASE | {"per_run", "cluster", "storage", "reports"} | ALL_POLICIES | ALL_PROVIDERS,
    "actors": BASE | {"per_run", "cluster"} | ALL_POLICIES | ALL_PROVIDERS,
    "per_run": BASE | {"storage", "reports", "providers/llm"} | ALL_POLICIES,
    "reports": BASE | {"policies/verification"},
    "providers/testing": BASE | {"providers/web"},
    "providers/assembly": PROVIDER
    | {"providers/llm", "providers/search", "providers/documents", "providers/web"},
    "providers/llm": PROVIDER | {"prompts", "domains", "policies/verification"},
    "providers/search": PROVIDER | {"storage", "policies/search", "domains", "providers/documents"},
    "providers/web": BASE | {"policies", "providers/documents", "domains"},
    "providers/documents": BASE,
    "providers": PROVIDER - {"providers"},
    "prompts": BASE | {"domains"},
    "policies/lifecycle": POLICY
    | {"policies/follow_up", "policies/search", "policies/verification"},
    "policies/synthesis": POLICY | {"policies/search", "policies/verification"},
    "policies/gate": POLICY | {"policies/verification", "policies/follow_up"},
    "policies/follow_up": POLICY,
    "policies/verification": POLICY,
    "policies/search": POLICY,
    "policies/resilience": set(),  # parameters as plain dataclasses: providers/breakers reads config
    # the domain seam: the registry and its protocol; each implementation only the protocol
    # and the base (core code reaches one through the registry, never by import)
    "domains": BASE,
    "domains/generic": BASE | {"domains"},
    "domains/filings": BASE | {"domains"},
    "policies": {"text"},  # rules every policy shares: urls, unsourced
    "cluster": {"config", "errors", "schemas"},
    "storage": {"config", "errors", "schemas"},
    "text": set(),
    "config": {"errors"},
    "llm_messages": {"schemas"},
    "schemas": set(),
    "errors": set(),
}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (a package by its folder)."""
    found: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if NOT_PACKAGE & set(rel.parts) or any(p.startswith(".") for p in rel.parts):
            continue
        parts = rel.with_suffix("").parts
        name = ".".join(("deepresearch", *(parts[:-1] if parts[-1] == "__init__" else parts)))
        found[name] = path
    return found


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


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a name resolves to its longest module)."""
    mods = modules(root)

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        for target in imported_modules(path.read_text("utf-8")):
            if target.startswith("deepresearch"):
                found = resolve(target)
                if found and found not in (name, "deepresearch"):
                    graph[name].add(found)
    return graph


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def room(name: str, path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    return "/".join(rel.parent.parts) if len(rel.parts) > 1 else rel.stem


def wrong_way(root: Path, table: Mapping[str, set[str]]) -> list[str]:
    mods = modules(root)
    out: list[str] = []
    for name, targets in sorted(import_graph(root).items()):
        here = room(name, mods[name], root)
        if here not in table:
            out.append(f"{here} is in no row of MAY_IMPORT: place it")
            continue
        for target in sorted(targets):
            there = room(target, mods[target], root)
            if there != here and there not in table[here]:
                out.append(f"{name} imports {target}: {here} may not import {there}")
    return sorted(set(out))


def room_graph(root: Path) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import."""
    mods = modules(root)
    rooms: dict[str, set[str]] = {}
    for name, targets in import_graph(root).items():
        here = room(name, mods[name], root)
        rooms.setdefault(here, set()).update(
            there for t in targets if (there := room(t, mods[t], root)) != here
        )
    return rooms


def tallest_chain(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """The longest chain of rooms each importing the next (a room on the way is not re-entered)."""
    best: dict[str, list[str]] = {}

    def down(node: str, above: frozenset[str]) -> list[str]:
        if node not in best:
            below = [down(n, above | {node}) for n in sorted(graph.get(node, ())) if n not in above]
            best[node] = [node, *max(below, key=len, default=[])]
        return best[node]

    return max((down(node, frozenset()) for node in sorted(graph)), key=len, default=[])


MAX_FLOORS = 10


def test_the_house_has_at_most_max_floors() -> None:
    chain = tallest_chain(room_graph(ROOT))
    assert len(chain) <= MAX_FLOORS, " -> ".join(chain)


def test_floors_count_rooms_not_modules(tmp_path: Path) -> None:
    """Two modules of one folder are one floor; an import inside a function adds a floor."""
    (tmp_path / "top.py").write_text("def f():\n    from deepresearch.mid import a\n")
    (tmp_path / "mid").mkdir()
    (tmp_path / "mid" / "__init__.py").write_text("")
    (tmp_path / "mid" / "a.py").write_text("from deepresearch.mid import b\n")
    (tmp_path / "mid" / "b.py").write_text("import deepresearch.low\n")
    (tmp_path / "low.py").write_text("x = 1\n")
    assert tallest_chain(room_graph(tmp_path)) == ["top", "mid", "low"]


def test_no_module_import_circles() -> None:
    assert circles(import_graph(ROOT)) == []


def test_each_folder_imports_only_what_the_table_allows() -> None:
    assert wrong_way(ROOT, MAY_IMPORT) == []


def test_only_the_registry_loads_a_domain_implementation() -> None:
    """No module outside an implementation's folder imports it, not even the registry (it loads
    one by name, with importlib): core code knows a domain only through the seam."""
    mods = modules(ROOT)
    found = []
    for name, targets in sorted(import_graph(ROOT).items()):
        here = room(name, mods[name], ROOT)
        for target in targets:
            there = room(target, mods[target], ROOT)
            if there in DOMAIN_IMPLEMENTATIONS and there != here:
                found.append(f"{name} imports {target}")
    assert found == []
    assert not DOMAIN_IMPLEMENTATIONS & set().union(
        *(MAY_IMPORT[r] for r in MAY_IMPORT if r not in DOMAIN_IMPLEMENTATIONS)
    )


def test_the_table_points_one_way() -> None:
    """Allowed directions have no loop, so the table itself is a stack of floors."""
    graph = {room: {t for t in targets if t in MAY_IMPORT} for room, targets in MAY_IMPORT.items()}
    assert circles(graph) == []
    assert all(room not in targets for room, targets in graph.items())


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"a.py": "from deepresearch import b\n", "b.py": "import deepresearch.a\n"}, 1),
        (
            {
                "a.py": "def f():\n    from deepresearch.b import x\n",
                "b.py": "from deepresearch.a import y\n",
            },
            1,
        ),
        ({"a.py": "from deepresearch import b\n", "b.py": "x = 1\n"}, 0),
    ],
)
def test_the_circle_check_sees_every_form_of_import(
    tmp_path: Path, files: dict[str, str], expected: int
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert len(circles(import_graph(tmp_path))) == expected


def test_the_table_check_names_the_wrong_way_import(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "__init__.py").write_text("")
    (tmp_path / "policies" / "rule.py").write_text("from deepresearch.actors import host\n")
    (tmp_path / "actors").mkdir()
    (tmp_path / "actors" / "__init__.py").write_text("")
    (tmp_path / "actors" / "host.py").write_text("from deepresearch.policies import rule\n")
    found = wrong_way(tmp_path, {"policies": set(), "actors": {"policies"}})
    assert (
        "deepresearch.policies.rule imports deepresearch.actors.host: policies may not import actors"
        in found
    )
    assert not [line for line in found if line.startswith("deepresearch.actors")]
