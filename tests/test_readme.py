"""The README and the manual in docs/ stay true where they can be checked: the README's pipeline picture opens every
stage's page in one click, every link between the documents lands on a file and a heading that exist, the stage
table is the registry, the layer table is the one `tests/test_layers.py` enforces, every command a figure is
reproduced by exists, and the README stays a short way in (at most 15 KB)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import typer

from curation.cli import app
from curation.cli.manual_pages import PAGES
from curation.cli.manual_sections import commands_of, headings
from curation.pipeline import all_stages
from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DEVELOPMENT = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def section(title: str, text: str = README) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:end if end > 0 else None]


def outside_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def links(text: str) -> list[str]:
    """The relative targets of Markdown links and HTML anchors outside fenced code."""
    text = outside_code(text)
    found = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'href="([^"]+)"', text)
    return [t for t in found if not re.match(r"[a-z]+:", t)]


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {anchor for level in range(1, 7) for _, anchor in headings(text, "#" * level)}


def test_the_readme_is_a_short_way_in_and_names_only_documents_that_exist():
    assert len(README.encode("utf-8")) <= 15 * 1024
    named = set(re.findall(r"`(docs/[\w.-]+\.md)`", README))
    assert {"docs/manual.md", "docs/deployment.md", "docs/figures.md", "docs/development.md"} <= named
    assert all((ROOT / doc).is_file() for doc in named), named


def test_the_pipeline_picture_opens_every_stage_page():
    picture = README[README.index("<pre>"):README.index("</pre>")]
    linked = set(re.findall(r'href="([^"]+)"', picture))
    assert {page.file for page in PAGES if page.stages or page.api} <= linked
    assert "examples/README.md" in links(README)
    assert "docs/development.md#what-the-suite-needs" in links(README)


def test_every_link_between_the_documents_lands_on_a_file_and_a_heading():
    broken = []
    for document in DOCUMENTS:
        for target in links(document.read_text(encoding="utf-8")):
            file, _, anchor = target.partition("#")
            path = (document.parent / file).resolve() if file else document
            if not path.exists():
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_nothing_names_a_section_of_the_old_one_page_manual():
    """The manual was one page; its sections are stage pages now, and `docs/manual.md` is their index: a
    document, a message or a test that sends people to a quoted section of `docs/manual.md` sends them nowhere."""
    files = [*DOCUMENTS, *ROOT.glob("examples/*.md"), *ROOT.glob("annotation/*"), *ROOT.glob("qc/*.md"),
             *ROOT.glob("curation/**/*.py"), *ROOT.glob("tests/**/*.py")]
    quoted = [f"{f.relative_to(ROOT)}: {' '.join(m.split())}" for f in files if f.is_file()
              for m in re.findall(r'manual\.md`?,? "[^"]+"', f.read_text(encoding="utf-8"))]
    assert quoted == []


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


def figures() -> list[tuple[str, str]]:
    """(page, item) for every item of every page's Figures section."""
    found = []
    for page in PAGES:
        text = (ROOT / page.file).read_text(encoding="utf-8")
        if "\n## Figures\n" in text:
            body = section("\n## Figures\n", text)
            found += [(page.file, item) for item in re.split(r"\n(?=- )", body) if item.startswith("- ")]
    return found


def test_every_figure_says_how_to_reproduce_it_with_what_exists():
    commands = [c.path for c in commands_of(typer.main.get_command(app))]
    items = figures()
    assert len(items) >= 20 and {page for page, _ in items} >= {"docs/corpus.md", "docs/qc.md", "docs/release.md"}
    for page, item in items:
        figure, _, how = item.partition("Reproduce:")
        assert how, f"{page}: {figure[:60]!r}... says no command that reproduces it"
        how = " ".join(how.split())
        paths = re.findall(r"((?:bench|tests)/[\w/]+\.py)", how)
        typed = re.findall(r"`(curate [^`]+)`", how) + re.findall(r"&& (curate [^`]+)", how)
        assert paths or typed or "make " in how, f"{page}: {figure[:60]!r}: no command"
        for path in paths:
            assert (ROOT / path).is_file(), f"{page}: {path} does not exist"
        for line in typed:
            line = re.sub(r"--(?:config|catalog) \S+ ", "", line)  # the options every command takes first
            words = [w for w in line.split() if not w.startswith("-")]
            assert any(words[:len(c.split())] == c.split() for c in commands), f"{page}: no command {line!r}"


def test_the_manual_reads_in_a_terminal():
    """Prose lines of the manual's pages stay within 120 characters (code blocks and tables cannot wrap, and a
    single word longer than that is left whole)."""
    long = []
    for page in PAGES:
        for line in outside_code((ROOT / page.file).read_text(encoding="utf-8")).splitlines():
            if len(line) > 120 and not line.startswith("|") and " " in line.strip():
                long.append(f"{page.file}: {line[:60]}… ({len(line)} characters)")
    assert long == []
