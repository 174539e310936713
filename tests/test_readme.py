"""The README stays true where it can be checked: the stage table is the registry, the layer table
is the one `tests/test_layers.py` enforces, and every script or test a figure points at exists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from curation.pipeline import all_stages
from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + len(title))
    return README[start:end if end > 0 else None]


def table_rows(text: str, header: str) -> list[list[str]]:
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def test_the_stage_table_is_the_registry():
    rows = table_rows(section("### How the code is laid out"), "| stage | command | work function |")
    listed = [(r[0].strip("`"), r[1].strip("`").replace("\\|", "|"), r[2]) for r in rows]
    expected = [(s.name, s.command, f"`{Path(inspect.getsourcefile(s.work)).relative_to(ROOT)}` `{s.work.__name__}`")
                for s in all_stages()]
    assert listed == expected


def test_the_layer_table_is_the_one_the_import_test_enforces():
    rows = table_rows(section("### How the code is laid out"), "| layer | package | what it holds |")
    named = [[re.sub(r"^curation/|/$|\.py$", "", p.strip("` ")) for p in r[1].split(",")] for r in rows]
    named = [["curation" if n == "__init__" else n for n in layer] for layer in named]
    present = {"curation", *(p.stem for p in (ROOT / "curation").iterdir() if not p.name.startswith("__"))}
    assert [sorted(layer) for layer in named] == [sorted(n for n in layer if n in present) for layer in LAYERS]


def test_every_package_is_on_the_map():
    packages = {p.name for p in (ROOT / "curation").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    packages |= {p.stem for p in (ROOT / "curation").glob("*.py") if p.stem != "__init__"}
    on_map = {n for layer in LAYERS for n in layer}
    assert packages <= on_map
    layout = section("### How the code is laid out")
    missing = [p for p in packages if f"`{p}/`" not in layout and f"`{p}.py`" not in layout]
    assert not missing, f"packages the README's layout does not name: {missing}"


def test_every_figure_points_at_something_that_exists():
    rows = table_rows(section("## Figures this README quotes"), "| figure | command that reproduces it |")
    assert len(rows) >= 6
    for figure, command in rows:
        paths = re.findall(r"((?:bench|tests)/[\w/]+\.py)", command)
        commands = re.findall(r"curate ([a-z-]+(?: [a-z-]+)?)", command)
        assert paths or commands or "make " in command, f"{figure}: no command"
        for path in paths:
            assert (ROOT / path).is_file(), f"{figure}: {path} does not exist"
        for name in commands:
            assert any(s.command.startswith(f"curate {name}") for s in all_stages()) or \
                name.split()[0] in {"qc", "release", "grade"}, f"{figure}: no stage runs `curate {name}`"
