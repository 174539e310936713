"""No module in curation/ imports a private module of another package (`from typer._click.exceptions import
...`, `import huggingface_hub.utils._runtime`): such a module is the package's own business and changes without
notice between versions. The standard library's underscored modules and the toolkit's own are not in question.
A private attribute reached through a public module (tests/test_private_apis.py pins those) is not an import.
"""

from __future__ import annotations

import ast
import sys

from tests.conftest import ROOT

# Private modules the toolkit may import, each with the reason it has no public way: none.
ALLOWED: dict[str, str] = {}


def _private(module: str) -> bool:
    """`module` names a private module of another package: a dotted part starts with `_` (not a dunder such as
    `__future__`), and the top package is neither the toolkit nor the standard library."""
    parts = module.split(".")
    if parts[0] == "curation" or parts[0] in sys.stdlib_module_names:
        return False
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts)


def private_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) for each import of a private module of another package in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _private(node.module):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _private(alias.name)]
    return found


def test_the_check_sees_both_forms_and_nothing_else():
    source = """
from __future__ import annotations
import _thread
from curation._internal import helper
import typer
from typer._click.exceptions import ClickException
def later():
    import huggingface_hub.utils._runtime as runtime
from . import _sibling
"""
    assert private_imports(source) == [(6, "typer._click.exceptions"), (8, "huggingface_hub.utils._runtime")]


def test_no_module_in_curation_imports_a_private_module_of_a_dependency():
    found = [f"{path.relative_to(ROOT).as_posix()}:{line}: {module}"
             for path in sorted((ROOT / "curation").rglob("*.py"))
             for line, module in private_imports(path.read_text(encoding="utf-8"))
             if module not in ALLOWED]
    assert not found, "imports of private modules (use the package's public API): " + "; ".join(found)
