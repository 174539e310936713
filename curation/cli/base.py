"""The Typer app, what every command shares (config, the catalog), and the one error
boundary: a `CurationError` becomes one line on stderr and its exit code (1 bad input,
2 usage); anything else is a bug and keeps its traceback."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console

from curation.core.catalog import Catalog
from curation.core.config import Config, ExecutorConfig, config_source, load_config
from curation.core.errors import CurationError, PrerequisiteError, UsageError

# Typer 0.2x parses with a vendored copy of click whose exceptions are not click's own.
USAGE_ERRORS: tuple[type[Exception], ...] = (click.ClickException,)
try:
    from typer._click.exceptions import ClickException as _VendoredClickException

    USAGE_ERRORS += (_VendoredClickException,)
except ImportError:  # an older Typer that uses click itself
    pass

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LivingScreen curation toolkit: corpora -> catalog -> feeds -> releases.")
console = Console()
STATE: dict[str, Any] = {}
# the options that name people accept only known ones (curation/labelstudio/people.py)
ADD_HELP = ("A new person (repeatable, or comma-separated): their account is made and they take part as if "
            "listed. Names the catalog does not know are refused unless given here.")


def config() -> Config:
    return STATE["config"]


def config_origin() -> str:
    """Where the configuration in force came from (its file, absolute, and how it was found)."""
    return STATE["config_source"]


def executor_config(kind: str | None) -> ExecutorConfig:
    """[executor] from the config, with --executor laid over it."""
    from dataclasses import replace

    if kind is not None and kind not in ("local", "ray"):
        raise UsageError(f"--executor {kind!r}: write local or ray")
    current = config().executor
    return replace(current, kind=kind) if kind else current


def catalog_path() -> Path:
    return STATE.get("catalog") or Path(config().catalog.path)


def open_catalog(read_only: bool = False, create: bool = False) -> Catalog:
    """The catalog; only the commands that bring data in (`create`) may start a new one."""
    path = catalog_path()
    if not create and not path.exists():
        raise PrerequisiteError(f"catalog {path} does not exist: run `curate ingest` first")
    return Catalog(path, read_only=read_only)


@app.callback()
def main_options(
    catalog: Annotated[Path | None, typer.Option(help="Catalog file (default: [catalog] path).")] = None,
    config_file: Annotated[Path | None, typer.Option(
        "--config", help="TOML laid over the defaults (default: $CURATE_CONFIG or ./curation.toml).")] = None,
) -> None:
    STATE["config"] = load_config(config_file)
    STATE["config_source"] = config_source(config_file)
    STATE["catalog"] = catalog


def main(argv: list[str] | None = None) -> None:
    """`curate`: run the command; user-facing failures are one line, bugs keep their traceback."""
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="curate", standalone_mode=False)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except (click.exceptions.Abort, typer.Abort):
        print("error: stopped", file=sys.stderr)
        sys.exit(130)
    except USAGE_ERRORS as exc:  # a missing argument, an unknown option: click's own one-line message
        exc.show()
        sys.exit(exc.exit_code)
    except (click.exceptions.Exit, typer.Exit) as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
