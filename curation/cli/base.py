"""The Typer app and what every command shares: config, the catalog, one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from curation.catalog import Catalog
from curation.config import load_config

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LivingScreen curation toolkit: corpora -> catalog -> feeds -> releases.")
console = Console()
STATE: dict[str, Any] = {}


def fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def config() -> dict[str, Any]:
    return STATE["config"]


def catalog_path() -> Path:
    return STATE.get("catalog") or Path(config()["catalog"]["path"])


def open_catalog(read_only: bool = False) -> Catalog:
    try:
        return Catalog(catalog_path(), read_only=read_only)
    except FileNotFoundError as exc:
        fail(str(exc))
        raise


@app.callback()
def main(
    catalog: Annotated[Path | None, typer.Option(help="Catalog file (default from config).")] = None,
    config_file: Annotated[Path | None, typer.Option("--config", help="TOML laid over curation.toml.")] = None,
) -> None:
    try:
        STATE["config"] = load_config(config_file)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    STATE["catalog"] = catalog


