"""`curate ... --help` as `curate` prints it, for every command: a flag (an option that takes no value, `--help`
included) shows no value placeholder such as `<bool>`, and an option that takes a value still shows one."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import pytest
import typer
from rich.text import Text
from typer.core import TyperCommand, TyperGroup, TyperOption

from curation.cli.base import cli, main

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def command_paths(command: TyperGroup | TyperCommand, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], TyperGroup | TyperCommand]]:
    yield path, command
    if isinstance(command, TyperGroup):
        for name, sub in command.commands.items():
            assert isinstance(sub, TyperGroup | TyperCommand), (path, name, type(sub))
            yield from command_paths(sub, (*path, name))


def shown_help(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    """What `curate <path> --help` prints, through the command's entry point."""
    with pytest.raises(SystemExit) as exited:
        main([*path, "--help"])
    assert exited.value.code == 0, path
    return ANSI.sub("", capsys.readouterr().out)


def after_names(text: str, option: TyperOption) -> str:
    """The first word after an option's names in its row of the options panel ('' when the row ends there)."""
    names = {*option.opts, *option.secondary_opts}
    for line in text.splitlines():
        if not line.startswith("│"):  # not a row of a panel
            continue
        words = line.strip("│ ").split()
        if words[:1] == ["*"]:  # a required option's mark
            words = words[1:]
        named = 0
        while named < len(words) and set(words[named].split(",")) <= names:
            named += 1
        if named:
            return words[named] if named < len(words) else ""
    raise AssertionError(f"no row for {sorted(names)} in:\n{text}")


def test_flags_show_no_value_and_options_with_one_do(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # one line per row: the names and the cell after them side by side
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # main() installs its own; put back after the test
    seen = {"flags": 0, "valued": 0}
    for path, command in command_paths(cli()):
        text = shown_help(path, capsys)
        for param in command.get_params(typer.Context(command)):
            if not isinstance(param, TyperOption) or param.hidden:
                continue
            where = " ".join(("curate", *path, param.opts[0]))
            help_words = Text.from_markup(param.help or "").plain.split()
            cell, help_start = after_names(text, param), help_words[0] if help_words else ""
            if param.is_flag or param.count:  # its help right after its names
                seen["flags"] += 1
                assert cell == help_start, f"{where} shows {cell!r} before its help {help_start!r}"
            else:  # what it takes between its names and its help
                seen["valued"] += 1
                assert cell and cell != help_start, f"{where} shows no value placeholder"
    # every command has --help, and `curate` itself --debug and --catalog
    assert seen["flags"] > len(list(command_paths(cli()))) and seen["valued"] > 0


def test_ingest_names_exactly_the_adapters_there_are():
    """The help is written where the command is (importing every adapter at each start would slow all of
    `curate`); this keeps it equal to the registry."""
    import typing

    from curation.cli.corpus import ingest
    from curation.ingest import ADAPTERS

    shown = typing.get_type_hints(ingest, include_extras=True)["adapter"].__metadata__[0].help
    assert shown.split(" | ") == list(ADAPTERS)
