"""The README and the manual in docs/ stay true where they can be checked: the stage table is the registry, the
layer table is the one `tests/test_layers.py` enforces, every script or test a figure points at exists, the
README stays a short way in (at most 15 KB) and every document it names is there."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from curation.pipeline import all_stages
from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
FIGURES = (ROOT / "docs" / "figures.md").read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end > 0 else None]


def test_the_readme_is_a_short_way_in_and_names_only_documents_that_exist():
    assert len(README.encode("utf-8")) <= 15 * 1024
    named = set(re.findall(r"`(docs/[\w.-]+\.md)`", README))
    assert {"docs/manual.md", "docs/deployment.md", "docs/figures.md", "docs/development.md"} <= named
    assert all((ROOT / doc).is_file() for doc in named), named


def table_rows(text: str, header: str) -> list[list[str]]:
    lines = text[text.index(header):].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows


def test_the_stage_table_is_the_registry():
    rows = table_rows(section("## How the code is laid out", DEVELOPMENT), "| stage | command | work function |")
    listed = [(r[0].strip("`"), r[1].strip("`").replace("\\|", "|"), r[2]) for r in rows]
    expected = [(s.name, s.command, f"`{Path(inspect.getsourcefile(s.work)).relative_to(ROOT)}` `{s.work.__name__}`")
                for s in all_stages()]
    assert listed == expected


def test_the_layer_table_is_the_one_the_import_test_enforces():
    rows = table_rows(section("## How the code is laid out", DEVELOPMENT), "| layer | package | what it holds |")
    named = [[re.sub(r"^curation/|/$|\.py$", "", p.strip("` ")) for p in r[1].split(",")] for r in rows]
    named = [["curation" if n == "__init__" else n for n in layer] for layer in named]
    present = {"curation", *(p.stem for p in (ROOT / "curation").iterdir() if not p.name.startswith("__"))}
    assert [sorted(layer) for layer in named] == [sorted(n for n in layer if n in present) for layer in LAYERS]


def test_every_package_is_on_the_map():
    packages = {p.name for p in (ROOT / "curation").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    packages |= {p.stem for p in (ROOT / "curation").glob("*.py") if p.stem != "__init__"}
    on_map = {n for layer in LAYERS for n in layer}
    assert packages <= on_map
    layout = section("## How the code is laid out", DEVELOPMENT)
    missing = [p for p in packages if f"`{p}/`" not in layout and f"`{p}.py`" not in layout]
    assert not missing, f"packages the README's layout does not name: {missing}"


def test_every_figure_points_at_something_that_exists():
    rows = table_rows(section("## Figures the docs quote", FIGURES), "| figure | command that reproduces it |")
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
