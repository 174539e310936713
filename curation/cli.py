"""`curate <stage>`: a thin command line over the stage modules."""

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


@app.command()
def ingest(
    adapter: Annotated[str, typer.Argument(help="fakesv | kuairec | livebot | generic")],
    path: Annotated[Path, typer.Argument(help="Corpus file (or folder for livebot).")],
    mapping: Annotated[Path | None, typer.Option(help="TOML field mapping (generic).")] = None,
    dry_run: Annotated[bool, typer.Option(help="Validate and count; write nothing.")] = False,
) -> None:
    """Load a corpus into the catalog; bad records go to `rejects` with their reason."""
    from curation.ingest import ingest_path
    from curation.ingest.generic import MappingError

    max_bytes = int(config()["ingest"]["max_field_bytes"])
    try:
        if dry_run:
            result = ingest_path(None, adapter, path, mapping=mapping, max_field_bytes=max_bytes)
        else:
            with open_catalog() as cat:
                result = ingest_path(cat, adapter, path, mapping=mapping, max_field_bytes=max_bytes)
    except (FileNotFoundError, ValueError, MappingError) as exc:
        fail(str(exc))
        return
    typer.echo(result.summary())
    for reason, count in sorted((result.rejects_by_reason or {}).items(), key=lambda x: -x[1]):
        typer.echo(f"  rejected {count:,}: {reason}")


@app.command()
def status() -> None:
    """Per-source counts, rejects by reason, recent runs."""
    from curation.inspect import status_report

    with open_catalog(read_only=True) as cat:
        console.print(status_report(cat))


@app.command()
def explain(record_id: Annotated[str, typer.Argument(help="A video_id, or a raw_ref of a reject.")]) -> None:
    """A video's record, its comments count and runs; or why a record was rejected."""
    from curation.inspect import explain_record

    with open_catalog(read_only=True) as cat:
        text = explain_record(cat, record_id)
    if text is None:
        fail(f"{record_id} is neither a video in the catalog nor a rejected record", 1)
    typer.echo(text)


if __name__ == "__main__":
    app()
