"""`curate docs`: the parts of docs/ printed from the code (curation/cli/manual_pages.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curation.cli.base import app
from curation.core.errors import CurationError

ROOT = Path(__file__).resolve().parents[2]


@app.command("docs")
def docs(write: Annotated[bool, typer.Option(
        "--write/--check", help="Rewrite the generated parts, or list those that differ from the code (exit 1).")]
         = False) -> None:
    """The manual's generated parts (commands, settings, tables, contents, docs/schema.md) against the code."""
    from curation.cli.manual_pages import differences, read_code
    from curation.cli.manual_pages import write as write_pages

    if not (ROOT / "docs").is_dir():
        raise CurationError(f"{ROOT / 'docs'} does not exist: `curate docs` works in a checkout of the toolkit")
    code = read_code(app)
    if write:
        try:
            changed = write_pages(ROOT, code)
        except ValueError as exc:
            raise CurationError(str(exc)) from None
        typer.echo(f"rewrote {', '.join(changed)}" if changed else "docs/ already agrees with the code")
        return
    found = differences(ROOT, code)
    for line in found:
        typer.echo(line)
    if found:
        raise typer.Exit(1)
    typer.echo("docs/ agrees with the code")
