"""Every stage's declared command (`@stage(command=...)`, which `curate describe` and docs/development.md print) is
a command `curate` has, and every option it names is one that command takes: a stage added, or a command renamed,
cannot leave the declaration pointing at nothing."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.core import TyperGroup

from curation.cli import app
from curation.pipeline import all_stages


def resolved(words: list[str]) -> tuple[Any, list[str]]:
    """The command `curate <words>` runs, as the parser resolves it (a group's default included), and the words
    left for it. (Typer parses with its own copy of click: its classes, not click's.)"""
    command: Any = typer.main.get_command(app)
    context = typer.Context(command, info_name="curate")
    while isinstance(command, TyperGroup):
        _, found, words = command.resolve_command(context, words)
        assert found is not None, words
        command = found
        context = typer.Context(command, parent=context, info_name=command.name)
    return command, words


@pytest.mark.parametrize("stage", all_stages(), ids=lambda s: s.name)
def test_a_stages_command_is_a_command_with_the_options_it_names(stage):
    prog, *words = stage.command.split()
    assert prog == "curate", stage.command
    command, rest = resolved(words)
    named = {word.strip("[]").split("=")[0] for word in rest if word.strip("[").startswith("--")}
    takes = {option for param in command.params for option in [*param.opts, *param.secondary_opts]}
    assert named <= takes, f"{stage.name}: {stage.command!r} names {sorted(named - takes)}, not options of it"
