"""The generated parts of the manual's pages, each printed from what the code declares: a command's
options from the Typer app, a setting from its dataclass field, a table from the stage declarations and
the catalog's own schema, the notebook API from `curation.api`. `manual_pages.py` says which page shows what."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from curation.core.config_fields import Setting
from curation.core.schema import NOT_STAGES, RUN_COLUMN, TableDoc, paragraph, prose
from curation.core.stage import Stage


@dataclass(frozen=True)
class Command:
    """A leaf command of the app as a person types it (`curate grade`, whose word `logs` is hidden)."""

    path: str
    help: str
    options: tuple[tuple[str, str], ...]  # (how it is written, what it does) as `--help` shows them


def commands_of(group: Any, words: tuple[str, ...] = ("curate",)) -> list[Command]:
    """Every leaf command of a Click group (`typer.main.get_command(app)`), in the order they were added."""
    found = []
    for name, command in group.commands.items():
        path = words if getattr(command, "hidden", False) else (*words, name)
        if hasattr(command, "commands"):
            found += commands_of(command, path)
            continue
        context = command.make_context(name, [], resilient_parsing=True)
        records = [param.get_help_record(context) for param in command.params]
        found.append(Command(" ".join(path), inspect.cleandoc(command.help or ""),
                             tuple(r for r in records if r is not None)))
    return found


def command_of_stage(stage: Stage[..., Any], commands: Sequence[Command]) -> Command:
    """The command that runs `stage`: the longest command path its declared command line starts with."""
    words = stage.command.split()
    matching = [c for c in commands if words[:len(c.path.split())] == c.path.split()]
    if not matching:
        raise ValueError(f"stage {stage.name}: no command of the app is {stage.command!r}")
    return max(matching, key=lambda c: len(c.path.split()))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(text: str, level: str = "##") -> list[tuple[str, str]]:
    """(heading, anchor) of every heading of `level` outside fenced code, in order; repeats numbered as GitHub does."""
    seen: dict[str, int] = {}
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            marks, _, title = line.partition(" ")
            anchor = slug(title)
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            if marks == level:
                out.append((title, anchor if count == 0 else f"{anchor}-{count}"))
    return out


def contents(text: str) -> list[str]:
    return ["Contents:", "", *[f"- [{title}](#{anchor})" for title, anchor in headings(text)]]


def table_link(name: str, kind: str, page: str | None, here: str) -> str:
    target = "" if page == here else (page or "schema.md")
    return f"[`{name}`]({target}#{name}-{kind})"


def _tables(names: Iterable[str], link: Callable[[str], str]) -> str:
    return ", ".join(link(n) for n in names) or "nothing"


def commands_section(listed: Sequence[tuple[Command, Stage[..., Any] | None]],
                     link: Callable[[str], str]) -> list[str]:
    lines = ["## Commands", ""]
    for command, stage in listed:
        lines += [f"### `{command.path}`", "", *paragraph(prose(" ".join(command.help.split()))), ""]
        for written, what in command.options:
            lines += paragraph(f"- `{written}`: {prose(what)}" if what else f"- `{written}`", indent="  ")
        if command.options:
            lines.append("")
        if stage is not None:
            mode = "commits in batches (resumable)" if stage.batched else "one transaction"
            workers = f"; on an executor, {stage.resources.describe()}" if stage.resources else ""
            files = f" Files: {prose('; '.join(stage.files))}." if stage.files else ""
            lines += [*paragraph(f"Stage `{stage.name}` ({prose(stage.summary)}; {mode}{workers}). Reads "
                                 f"{_tables(stage.reads, link)}. Writes {_tables(stage.writes, link)}.{files}"), ""]
    return lines


def settings_section(settings: Sequence[Setting]) -> list[str]:
    lines = ["## Settings", "", *paragraph(
        "Each setting as a TOML file writes it, with its default, its type and the environment variable that "
        "overrides it (its value written as TOML: `CURATE__CLUSTER__BACKEND=hdbscan`, `…=[\"L2\", \"L3\"]`); "
        "`{}` is a table of defaults. How files and variables combine: [the catalog page](catalog.md#configuration)."),
        ""]
    group = None
    for setting in settings:
        heading = setting.toml.rpartition(" ")[0] if setting.section else f"[{setting.key}]"
        if heading != group:
            lines += [f"### `{heading}`", ""] if group is None else ["", f"### `{heading}`", ""]
            group = heading
        env = f", `{setting.env}`" if setting.env else ", no variable of its own"
        lines += paragraph(f"- `{setting.key} = {setting.default}` ({setting.type}{env}): {prose(setting.help)}",
                           indent="  ")
    return [*lines, ""]


def tables_section(owned: Sequence[TableDoc], read: Sequence[str], owner: dict[str, str | None],
                   writers: dict[str, list[str]], readers: dict[str, list[str]],
                   link: Callable[[str], str]) -> list[str]:
    lines = ["## Tables", "", *paragraph(
        "The tables this page's stages own (a table's owner is the first stage of the pipeline that writes it), "
        "with their keys and references; every column with its type is in [the schema](schema.md). "
        f"Every `{RUN_COLUMN}` names the run that wrote the row."), ""]
    for doc in owned:
        refs = [f"`{ref.columns[0]}` → `{ref.table}.{ref.target_columns[0]}`" if len(ref.columns) == 1
                else ref.markdown() for ref in doc.references if ref.columns != (RUN_COLUMN,)]
        about = [f"Owned by `{owner[doc.name]}`." if owner[doc.name] else
                 f"Written by {NOT_STAGES.get(doc.name, 'no stage')}.",
                 f"Key `({', '.join(doc.key)})`." if doc.key else "",
                 f"References {', '.join(refs)}." if refs else "",
                 f"Reads {_tables(doc.sources, link)}." if doc.sources else "",
                 f"Also written by {', '.join(f'`{w}`' for w in writers[doc.name][1:])}."
                 if writers[doc.name][1:] else "",
                 f"Read by {', '.join(f'`{r}`' for r in readers[doc.name])}." if readers[doc.name] else "",
                 f"Columns: [schema](schema.md#{doc.name}-{doc.kind})."]
        lines += [f"### `{doc.name}` {doc.kind}", "", *paragraph(prose(doc.description or "")), "",
                  *paragraph(" ".join(a for a in about if a)), ""]
    if read:
        lines += paragraph(f"Read here, owned elsewhere: {_tables(read, link)}.")
        lines.append("")
    return lines


def api_section(reader: type, module: Any) -> list[str]:
    """The notebook API: `open` and each public method of the reader, with its signature and docstring."""
    lines = ["## Functions", ""]
    members = [("curation.api.open", module.open)] + [
        (f"catalog.{name}", member) for name, member in vars(reader).items()
        if inspect.isfunction(member) and not name.startswith("_")]
    for name, function in members:
        signature = inspect.signature(function)
        params = [p for p in signature.parameters.values() if p.name != "self"]
        written = ", ".join(_param(p) for p in params)
        returns = "" if signature.return_annotation is inspect.Signature.empty else f" -> {signature.return_annotation}"
        doc = " ".join((function.__doc__ or "").split())
        lines += [f"### `{name}({written}){returns}`", "", *paragraph(prose(doc)), ""]
    return lines


def _param(param: inspect.Parameter) -> str:
    text = f"{param.name}: {param.annotation}" if param.annotation is not inspect.Parameter.empty else param.name
    return text + (f" = {param.default!r}" if param.default is not inspect.Parameter.empty else "")


def index_section(pages: Sequence[tuple[str, str, Sequence[str]]]) -> list[str]:
    """The manual's index: each page, its first line, and the commands it documents."""
    lines = []
    for file, title, paths in pages:
        shown = f": {', '.join(f'`{p}`' for p in paths)}" if paths else ""
        lines += paragraph(f"- [{title}]({file}){shown}", indent="  ")
    return [*lines, ""]
