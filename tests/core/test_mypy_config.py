"""[tool.mypy] in pyproject.toml, held to what it claims against the installed mypy and packages:
the override for new modules turns on exactly the per-module flags `--strict` turns on (it cannot say
`strict = true`, which mypy applies to every module), and each dependency whose missing types are
ignored indeed ships none (when one starts to, its entry goes and mypy checks its uses)."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from mypy.main import process_options
from mypy.options import PER_MODULE_OPTIONS

from tests.conftest import ROOT


def overrides() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    return list(config["overrides"])


def per_module_strict_flags() -> dict[str, object]:
    """The per-module options `--strict` changes in the installed mypy (no config file read)."""
    _, default = process_options(["--config-file=", "-c", "pass"])
    _, strict = process_options(["--config-file=", "--strict", "-c", "pass"])
    before, after = default.snapshot(), strict.snapshot()
    return {k: v for k, v in after.items() if k in PER_MODULE_OPTIONS and before.get(k) != v}


def optional_packages() -> set[str]:
    """The import names of the optional extras' distributions (`fast-hdbscan[nndescent]==…` -> fast_hdbscan)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return {re.split(r"[\[=<>~!; ]", req, maxsplit=1)[0].replace("-", "_").lower()
            for reqs in extras.values() for req in reqs}


def installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def ships_types(package: str) -> bool:
    """A `py.typed` marker in the package, or a `<package>-stubs` distribution installed beside it."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None, f"{package} is not installed"
    marked = spec.submodule_search_locations is not None and (Path(spec.origin).parent / "py.typed").exists()
    return marked or any((Path(entry) / f"{package}-stubs").is_dir() for entry in sys.path if entry)


def test_the_strict_override_spells_out_what_strict_turns_on():
    strict = per_module_strict_flags()
    assert "disallow_untyped_defs" in strict  # what --strict is known for: the derivation found it
    (override,) = [o for o in overrides() if "disallow_untyped_defs" in o]
    assert all(m.startswith("curation.") for m in override["module"]), override["module"]
    assert {k: v for k, v in override.items() if k != "module"} == strict


def test_missing_imports_are_ignored_only_for_dependencies_without_types():
    (untyped,) = [o for o in overrides() if o.get("ignore_missing_imports")]
    packages = [m.removesuffix(".*") for m in untyped["module"]]
    assert packages and all("." not in p for p in packages), packages
    # an extra `make test` does not install (bench's fast-hdbscan) cannot be looked at here, only named
    absent = [p for p in packages if not installed(p)]
    assert set(absent) <= optional_packages(), f"neither installed nor an optional extra: {absent}"
    typed = [p for p in packages if installed(p) and ships_types(p)]
    assert not typed, f"these ship types now, take them out of the ignore_missing_imports list: {typed}"
