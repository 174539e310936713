"""The manual's generated parts stay equal to the code: a part that differs is named by page and part, and every
setting, table and command is documented on exactly one page, so a new one cannot be left out."""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections import Counter
from functools import cache

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from curation.cli import app
from curation.cli.manual_pages import MARK, PAGES, SCHEMA, Code, coverage_errors, differences, read_code
from curation.core.config_fields import settings
from curation.pipeline import all_stages
from tests.cli.test_cli import curate
from tests.conftest import ROOT


@cache
def code() -> Code:
    return read_code(app)


def parts(kind: str) -> dict[str, str]:
    """Each page's generated part of `kind`, as the docs hold it."""
    found = {}
    for page in PAGES:
        for match in MARK.finditer((ROOT / page.file).read_text(encoding="utf-8")):
            if match.group("kind") == kind:
                found[page.file] = match.group("body")
    return found


def test_the_docs_agree_with_the_code():
    assert differences(ROOT, code()) == []


def test_curate_docs_says_so():
    out = curate("docs")
    assert out.returncode == 0 and "agrees with the code" in out.stdout, out.stdout + out.stderr


def test_every_setting_is_on_exactly_one_page():
    listed: Counter[str] = Counter()
    for body in parts("settings").values():
        heading = ""
        for line in body.splitlines():
            if line.startswith("### `"):
                heading = line.strip("#` ")
            elif match := re.match(r"- `(\w+) = ", line):
                key = match.group(1)
                listed[heading if heading == f"[{key}]" else f"{heading} {key}"] += 1
    assert listed == Counter(s.toml for s in settings())


def test_every_table_and_every_declared_table_is_on_exactly_one_page():
    listed = Counter(name for body in parts("tables").values()
                     for name in re.findall(r"^### `(\w+)` (?:table|view)$", body, flags=re.MULTILINE))
    declared = {t for s in all_stages() for t in (*s.reads, *s.writes)}
    assert set(listed.values()) == {1}
    assert set(listed) == {doc.name for doc in code().docs} and declared <= set(listed)


def test_every_command_is_on_exactly_one_page():
    listed = Counter(name for body in parts("commands").values()
                     for name in re.findall(r"^### `(curate [^`]+)`$", body, flags=re.MULTILINE))
    assert listed == Counter(c.path for c in code().commands)


@cache
def generated_lines() -> list[tuple[str, str, int]]:
    """(page, part, line number within the part) of every non-blank line of every generated part."""
    found = []
    for page in PAGES:
        for match in MARK.finditer((ROOT / page.file).read_text(encoding="utf-8")):
            found += [(page.file, match.group("kind"), i) for i, line in enumerate(match.group("body").splitlines())
                      if line.strip()]
    return found


@hypothesis_settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.sampled_from(generated_lines()), edit=st.sampled_from(["drop", "change", "add"]))
def test_a_changed_line_of_a_generated_part_is_named_by_page_and_part(tmp_path_factory, where, edit):
    file, kind, number = where
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", root / "docs")
    path = root / file
    text = path.read_text(encoding="utf-8")
    match = next(m for m in MARK.finditer(text) if m.group("kind") == kind)
    lines = match.group("body").splitlines(keepends=True)
    lines[number:number + 1] = {"drop": [], "change": [lines[number].rstrip("\n") + " (edited)\n"],
                                "add": [lines[number], "- a line written by hand\n"]}[edit]
    path.write_text(text[:match.start("body")] + "".join(lines) + text[match.end("body"):], encoding="utf-8")
    assert differences(root, code()) == [f"{file}, part {kind}: differs from the code (run `curate docs --write`)"]


def test_a_hand_edit_of_the_schema_page_is_named(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    with (tmp_path / SCHEMA).open("a", encoding="utf-8") as page:
        page.write("A line written by hand.\n")
    assert differences(tmp_path, code()) == [f"{SCHEMA}: differs from the catalog's schema (run `curate docs --write`)"]


ITEMS = [(i, field, name) for i, page in enumerate(PAGES) for field in ("stages", "sections", "commands", "tables")
         for name in getattr(page, field)]


@hypothesis_settings(max_examples=25, deadline=None)
@given(item=st.sampled_from(ITEMS), move=st.booleans(), to=st.integers(0, len(PAGES) - 1))
def test_a_stage_setting_command_or_table_on_no_page_or_on_two_is_an_error(item, move, to):
    """Taken off its page, or put on a second one, anything the manual documents is named as missing or doubled."""
    index, field, name = item
    pages = list(PAGES)
    pages[index] = dataclasses.replace(pages[index], **{field: tuple(n for n in getattr(pages[index], field)
                                                                    if n != name)})
    if move and to != index:  # a second page lists it as well as its own
        pages[index] = PAGES[index]
        pages[to] = dataclasses.replace(pages[to], **{field: (*getattr(pages[to], field), name)})
        wanted = "on 2 pages"
    elif move:
        return
    else:
        wanted = "on no page"
    errors = coverage_errors(code(), tuple(pages))
    assert errors and all(wanted in e for e in errors), errors
    assert any(re.search(rf"\b{re.escape(name)}\b", e) for e in errors), errors
