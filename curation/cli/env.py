"""`curate env show`: the runner profile releases target, and the check vocabulary it grades."""

from __future__ import annotations

from typing import Annotated

import typer

from curation.cli.base import app

env_app = typer.Typer(no_args_is_help=True, help="The environment releases target: the runner profile.")
app.add_typer(env_app, name="env")


@env_app.command("show")
def env_show(
    checks: Annotated[bool, typer.Option("--checks", help="Also list every check with its arguments and "
                                                          "authoring verb.")] = False,
    as_toml: Annotated[bool, typer.Option("--toml", help="Print the profile's TOML as written instead: the start of "
                                                         "a team's own profile.")] = False,
) -> None:
    """The runner profile in force ([runner] profile): sources, checked positions, the do-nothing window, and the
    checks the runner cannot grade."""
    from curation.env.profile import default_profile, default_profile_text
    from curation.env.vocabulary import ARG_TYPES, VOCABULARY

    profile = default_profile()
    if as_toml:
        typer.echo(default_profile_text(), nl=False)
        return
    typer.echo(profile.show())
    if checks:
        typer.echo("  checks:")
        for spec in VOCABULARY.values():
            args = ", ".join(f"{name} ({ARG_TYPES[kind]}{'' if name in spec.required else ', optional'})"
                             for name, kind in spec.args.items())
            graded = "cannot be graded there" if spec.func in profile.ungradable else "graded"
            typer.echo(f"    {spec.func:<19} '{spec.verb} …'  {graded}; {args}")
