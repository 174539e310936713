"""The package's layering: an import may only run down. Each layer lists the packages (or
top-level modules) it holds; a module may import its own package and anything in a lower
layer, never a sibling package of its own layer nor anything above. This list is the one
place the order is written."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "curation"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("curation",),  # the package root: its version string, nothing else
    ("core",),  # catalog, config, errors, the stage runner
    ("env",),  # the app as the runner drives it: episode logs, tool calls, the state rebuilt from them, checks
    ("tasks",),  # the task model every stage shares (its proofs play tasks in env's replay)
    ("reports",),  # HTML pages and charts
    ("ingest",),
    ("media",),
    ("corpus",),  # keywords, clusters, feeds
    ("labelstudio",),  # the server, accounts, projects, rendering, the access gate
    ("annotate", "qc"),  # authoring and quality control: siblings, neither imports the other
    ("release",),
    ("grade",),
    ("status", "api", "pipeline"),  # views over the whole catalog and the stage registry
    ("cli",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every curation module `path` imports, wherever the import statement sits."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            # `from curation.x import y` may name a module y of package x
            found.update(f"{target}.{alias.name}" for alias in node.names
                         if (PACKAGE.parent / f"{target}.{alias.name}".replace(".", "/")).with_suffix(".py").exists())
    return {name for name in found if name == "curation" or name.startswith("curation.")}


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_package_has_a_layer():
    assert {unit(m) for m in graph()} <= set(RANK), "a new package needs its place in LAYERS"


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, targets in edges.items():
        for target in targets:
            low, high = unit(target), unit(module)
            if low != high and RANK[low] >= RANK[high]:
                wrong.append(f"{module} imports {target} ({high} is layer {RANK[high]}, {low} is {RANK[low]})")
    return sorted(wrong)


def cycles(edges: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    found = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges.get(module, ())):
            if target not in edges or target == module:  # a package's __init__ naming its own modules
                continue
            if state.get(target) == 1:
                found.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    return found


def test_no_import_runs_up_or_across():
    assert upward_imports(graph()) == []


def test_the_import_graph_has_no_cycle():
    assert cycles(graph()) == []


def test_the_checks_see_what_they_guard():
    """A planted upward import, a planted import between siblings and a planted cycle are all found."""
    edges = graph()
    edges["curation.core.errors"] = edges["curation.core.errors"] | {"curation.qc.funnel"}
    edges["curation.annotate.export"] = edges["curation.annotate.export"] | {"curation.qc.review"}
    assert upward_imports(edges) == [
        "curation.annotate.export imports curation.qc.review (annotate is layer 9, qc is 9)",
        "curation.core.errors imports curation.qc.funnel (core is layer 1, qc is 9)"]
    edges["curation.corpus.cluster"] = edges["curation.corpus.cluster"] | {"curation.corpus.feeds"}
    assert any("curation.corpus.cluster" in c and "curation.corpus.feeds" in c for c in cycles(edges))
