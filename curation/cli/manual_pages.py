"""The manual in docs/: which page documents which stages, commands, settings and tables, and the parts of
each page printed from the code, between markers:

    <!-- generated:settings -->
    ...
    <!-- /generated -->

`curate docs --write` rewrites every such part (and docs/schema.md whole); `curate docs` lists each part
that differs from the code. A stage, a setting section, a command or a table that no page documents, or
that two pages do, is an error, so a new one cannot be left out: it needs its place in `PAGES`."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

import curation.api
from curation.cli.manual_sections import (
    Command,
    api_section,
    command_of_stage,
    commands_of,
    commands_section,
    contents,
    index_section,
    settings_section,
    table_link,
    tables_section,
)
from curation.core.catalog import Catalog
from curation.core.config_fields import Setting, settings
from curation.core.schema import TableDoc, owners, read_schema, schema_markdown
from curation.core.stage import Stage
from curation.pipeline import all_stages

MARK = re.compile(r"<!-- generated:(?P<kind>[a-z]+) -->\n(?P<body>.*?)<!-- /generated -->", re.DOTALL)
SCHEMA = "docs/schema.md"  # generated whole


@dataclass(frozen=True)
class Page:
    file: str
    stages: tuple[str, ...] = ()  # their commands and the tables they own
    sections: tuple[str, ...] = ()  # top-level configuration sections
    commands: tuple[str, ...] = ()  # commands that run no stage
    tables: tuple[str, ...] = ()  # tables no stage writes
    api: bool = False
    index: bool = False

    def kinds(self) -> tuple[str, ...]:
        """The generated parts the page holds, in the order they appear in it."""
        wanted = {"index": self.index, "contents": not self.index, "commands": bool(self.stages or self.commands),
                  "api": self.api, "settings": bool(self.sections), "tables": bool(self.stages or self.tables)}
        return tuple(kind for kind, held in wanted.items() if held)


PAGES = (
    Page("docs/manual.md", index=True),
    Page("docs/catalog.md", sections=("catalog", "reports"), tables=("runs", "schema_migrations"), commands=(
        "curate status", "curate explain", "curate describe", "curate schema", "curate migrate", "curate config",
        "curate docs")),
    Page("docs/ingest.md", stages=("ingest",), sections=("ingest",)),
    Page("docs/corpus.md", stages=("keywords", "embed", "cluster"), sections=("keywords", "embedding", "cluster")),
    Page("docs/feeds.md", stages=("feeds", "feeds-edit", "feeds-export"), sections=("feeds", "sources"),
         commands=("curate feeds show", "curate feeds list", "curate feeds drift")),
    Page("docs/media.md", stages=("media-scan", "media-probe", "media-normalise", "media-register-synthetic"),
         sections=("media",)),
    Page("docs/annotation.md", stages=("annotate-export", "annotate-import"), commands=("curate annotate status",)),
    Page("docs/qc.md", stages=("qc-calibrate-export", "qc-calibrate-import", "qc-validate", "qc-accept-imported",
                               "qc-shortcut", "qc-review-export", "qc-review-import", "qc-adjudicate-export",
                               "qc-adjudicate-import", "qc-audit-tasks-export", "qc-audit-tasks-import",
                               "qc-report"), sections=("runner", "qc"),
         commands=("curate env show", "curate qc shortcut-config show", "curate qc shortcut-config adopt")),
    Page("docs/release.md", stages=("release-build", "release-publish", "release-import-livingscreen",
                                    "release-export-livingscreen", "release-env-feeds"), sections=("release",),
         commands=("curate release verify", "curate release list")),
    Page("docs/grading.md", stages=("grade", "rewards-build", "grade-audit-export", "grade-audit-import"),
         sections=("grade",)),
    Page("docs/api.md", api=True),
    Page("docs/scale.md", sections=("executor",)),
    Page("docs/deployment.md"),
    Page("docs/access-gate.md"),
    Page("docs/figures.md"),
)


@dataclass(frozen=True)
class Code:
    """What the code declares, read once: the stages, the app's commands, the settings, the schema."""

    stages: list[Stage[..., Any]]
    commands: list[Command]
    settings: list[Setting]
    docs: list[TableDoc]
    version: int


def read_code(app: typer.Typer) -> Code:
    with tempfile.TemporaryDirectory() as folder, Catalog(Path(folder) / "catalog.duckdb") as catalog:
        docs, version = read_schema(catalog), catalog.schema_version
    return Code(all_stages(), commands_of(typer.main.get_command(app)), list(settings()), docs, version)


def coverage_errors(code: Code, pages: tuple[Page, ...] = PAGES) -> list[str]:
    """Every stage, setting section, command and table on exactly one page; every name a page lists exists."""
    owned = owners(code.docs, code.stages)
    by_stage = {s.name: s for s in code.stages}
    stage_commands = {s.name: command_of_stage(s, code.commands).path for s in code.stages}
    declared: dict[str, tuple[set[str], Callable[[Page], tuple[str, ...]]]] = {
        "stage": ({s.name for s in code.stages}, lambda p: p.stages),
        "setting section": ({s.top for s in code.settings}, lambda p: p.sections),
        "command": ({c.path for c in code.commands},
                    lambda p: (*p.commands, *(stage_commands[s] for s in p.stages if s in by_stage))),
        "table": ({d.name for d in code.docs},
                  lambda p: (*p.tables, *(t for t, o in owned.items() if o in p.stages))),
    }
    errors = []
    for what, (names, listed) in declared.items():
        counts = Counter(name for page in pages for name in listed(page))
        errors += [f"{what} {name} is on no page of the manual: give it one in PAGES ({__name__})"
                   for name in sorted(names - set(counts))]
        errors += [f"{what} {name} is on {n} pages of the manual, it belongs on one" for name, n in
                   sorted(counts.items()) if n > 1]
        errors += [f"{what} {name} is listed in PAGES but the code has none" for name in sorted(set(counts) - names)]
    return errors


def _title(root: Path, file: str) -> str:
    path = root / file
    first = path.read_text(encoding="utf-8").splitlines()[0] if path.is_file() else ""
    return first.removeprefix("# ") if first.startswith("# ") else file


def expected_parts(page: Page, code: Code, root: Path) -> dict[str, list[str]]:
    """The generated parts of `page` but its contents (which depend on the rest of the page)."""
    owned = owners(code.docs, code.stages)
    page_of_table = {t: p.file for p in PAGES for t in (*p.tables, *(t for t, o in owned.items() if o in p.stages))}
    kinds = {d.name: d.kind for d in code.docs}
    here = page.file

    def link(table: str) -> str:
        return table_link(table, kinds[table], Path(page_of_table[table]).name, Path(here).name)

    parts: dict[str, list[str]] = {}
    stages = [s for s in code.stages if s.name in page.stages]
    if "commands" in page.kinds():
        commands = {c.path: c for c in code.commands}
        listed: list[tuple[Command, Stage[..., Any] | None]] = [(command_of_stage(s, code.commands), s)
                                                                for s in stages]
        listed += [(commands[path], None) for path in page.commands]
        parts["commands"] = commands_section(listed, link)
    if "settings" in page.kinds():
        parts["settings"] = settings_section([s for s in code.settings if s.top in page.sections])
    if "tables" in page.kinds():
        mine = [d for d in code.docs if page_of_table[d.name] == here]
        read = sorted({t for s in stages for t in s.reads} - {d.name for d in mine})
        writers = {d.name: [s.name for s in code.stages if d.name in s.writes] for d in code.docs}
        readers = {d.name: [s.name for s in code.stages if d.name in s.reads] for d in code.docs}
        parts["tables"] = tables_section(mine, read, owned, writers, readers, link)
    if page.api:
        parts["api"] = api_section(curation.api.CatalogReader, curation.api)
    if page.index:
        parts["index"] = index_section([
            (Path(p.file).name, _title(root, p.file), [*(command_of_stage(s, code.commands).path for s in code.stages
                                                         if s.name in p.stages), *p.commands])
            for p in PAGES if not p.index] + [(Path(SCHEMA).name, _title(root, SCHEMA), [])])
    return parts


def _body(lines: list[str]) -> str:
    while lines and not lines[-1]:
        lines = lines[:-1]
    return "\n".join(lines) + "\n"


def render(page: Page, text: str, code: Code, root: Path) -> tuple[str, list[str]]:
    """`text` with its generated parts as the code has them now, and the problems with its markers."""
    found = [m.group("kind") for m in MARK.finditer(text)]
    problems = [f"{page.file}: no <!-- generated:{k} --> part" for k in page.kinds() if k not in found]
    problems += [f"{page.file}: a generated part {k} it should not have" for k in found if k not in page.kinds()]
    problems += [f"{page.file}: {n} generated parts {k}" for k, n in Counter(found).items() if n > 1]
    parts = {kind: _body(lines) for kind, lines in expected_parts(page, code, root).items()}
    text = MARK.sub(lambda m: m.group(0) if m.group("kind") not in parts else
                    f"<!-- generated:{m.group('kind')} -->\n{parts[m.group('kind')]}<!-- /generated -->", text)
    if "contents" in page.kinds():
        listed = _body(contents(text))  # the headings of the whole page, generated parts included
        text = MARK.sub(lambda m: m.group(0) if m.group("kind") != "contents" else
                        f"<!-- generated:contents -->\n{listed}<!-- /generated -->", text)
    return text, problems


def differences(root: Path, code: Code) -> list[str]:
    """Each generated part of docs/ that differs from the code, named by page and part; [] when all agree."""
    found = coverage_errors(code)
    for page in PAGES:
        path = root / page.file
        if not path.is_file():
            found.append(f"{page.file}: missing")
            continue
        text = path.read_text(encoding="utf-8")
        new, problems = render(page, text, code, root)
        found += problems
        old_parts = {m.group("kind"): m.group("body") for m in MARK.finditer(text)}
        new_parts = {m.group("kind"): m.group("body") for m in MARK.finditer(new)}
        found += [f"{page.file}, part {kind}: differs from the code (run `curate docs --write`)"
                  for kind in new_parts if old_parts.get(kind) != new_parts[kind]]
    schema = root / SCHEMA
    if not schema.is_file() or schema.read_text(encoding="utf-8") != schema_text(code):
        found.append(f"{SCHEMA}: differs from the catalog's schema (run `curate docs --write`)")
    return found


def schema_text(code: Code) -> str:
    return schema_markdown(code.docs, code.version, code.stages) + "\n"


def write(root: Path, code: Code) -> list[str]:
    """Rewrite every generated part; the files changed. Refuses (ValueError) while a page lacks a marker or
    something is on no page, since there is nowhere to write it."""
    problems = coverage_errors(code)
    rendered = {}
    for page in PAGES:
        text, found = render(page, (root / page.file).read_text(encoding="utf-8"), code, root)
        problems += found
        rendered[page.file] = text
    if problems:
        raise ValueError("; ".join(problems))
    rendered[SCHEMA] = schema_text(code)
    changed = [file for file, text in rendered.items() if not (root / file).is_file()
               or (root / file).read_text(encoding="utf-8") != text]
    for file in changed:
        (root / file).write_text(rendered[file], encoding="utf-8")
    return changed
