"""The Typer app, what every command shares (config, the catalog), and the one error
boundary: a `CurationError` becomes one line on stderr and its exit code (1 bad input,
2 usage); Ctrl-C one line naming the run it interrupted (exit 130); anything else is a bug:
exit 1, and its traceback is printed, or, when a stage run already kept it in the catalog, one line
says where (`--debug` prints it anyway)."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Annotated, Any, Protocol, runtime_checkable

import typer
from rich.console import Console
from typer.core import TyperCommand, TyperGroup, TyperOption

from curation.core.catalog import Catalog
from curation.core.config import Config, ExecutorConfig, as_dict, build, config_source, load_config
from curation.core.errors import ConfigError, CurationError, PrerequisiteError, UsageError
from curation.core.stage import FAILED_RUN_NOTE


@runtime_checkable
class CommandLineMistake(Protocol):
    """A command-line mistake as Typer's parser reports it (its copy of click's ClickException, which Typer
    does not export): `show` prints the usage, a hint and the message."""

    exit_code: int

    def show(self, file: IO[Any] | None = None) -> None: ...


app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LivingScreen curation toolkit: corpora -> catalog -> feeds -> releases.")
console = Console()
STATE: dict[str, Any] = {}
# the options that name people accept only known ones (curation/labelstudio/people.py)
ADD_HELP = ("A new person (repeatable, or comma-separated; a name or an e-mail): their account is made and they "
            "take part as if listed. Names the catalog does not know are refused unless given here; a name that is "
            "a known person in another case or as an e-mail is refused here.")


def config() -> Config:
    return STATE["config"]


def config_origin() -> str:
    """Where the configuration in force came from (its file, absolute, and how it was found)."""
    return STATE["config_source"]


def executor_config(kind: str | None) -> ExecutorConfig:
    """[executor] from the config, with --executor laid over it and checked as the config file's value is."""
    current = config().executor
    if not kind:
        return current
    try:
        laid_over: ExecutorConfig = build(ExecutorConfig, {**as_dict(current), "kind": kind}, "executor")
    except ConfigError as exc:
        raise UsageError(f"--executor {kind!r}: {exc}") from None
    return laid_over


def catalog_path() -> Path:
    return STATE.get("catalog") or Path(config().catalog.path)


def served_media(cat: Catalog) -> Path:
    """Where the catalog's normalised media are, wherever `curate` runs (see `media_root`)."""
    from curation.media.normalise import media_root

    return media_root(cat, Path(config().media.output_dir))


def open_catalog(read_only: bool = False, create: bool = False) -> Catalog:
    """The catalog; only the commands that bring data in (`create`) may start a new one."""
    path = catalog_path()
    if not create and not path.exists():
        raise PrerequisiteError(f"catalog {path} does not exist: run `curate ingest` first")
    return Catalog(path, read_only=read_only, memory_limit=config().catalog.memory_limit)


@app.callback()
def main_options(
    catalog: Annotated[Path | None, typer.Option(help="Catalog file (default: \\[catalog] path).")] = None,
    config_file: Annotated[Path | None, typer.Option(
        "--config", help="TOML laid over the defaults (default: $CURATE_CONFIG or ./curation.toml).")] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", help="On a bug, print the whole traceback here, not only where the catalog keeps it.")] = False,
) -> None:
    STATE["debug"] = debug
    STATE["config"] = load_config(config_file)
    from curation.env.profile import use_profile

    use_profile(STATE["config"].runner.profile, STATE["config"].runner.accept_ungradable)
    STATE["config_source"] = config_source(config_file)
    STATE["catalog"] = catalog


def report_bug(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
    """What an exception no one meant looks like (installed as `sys.excepthook`; Python then exits 1):
    a run that recorded it as failed gets one line and where its traceback is kept; anything
    else prints its traceback, which nothing else keeps."""
    kept = [n for n in getattr(exc, "__notes__", None) or [] if n.startswith(FAILED_RUN_NOTE)]
    if STATE.get("debug") or not kept or not isinstance(exc, Exception):
        sys.__excepthook__(kind, exc, trace)
        return
    summary = f"{kind.__name__}: {exc}".splitlines()[0]  # the class's own name, wherever it is defined
    print(f"error: unexpected {summary} (a bug, not bad input)\n  {kept[0]}\n"
          "  `curate --debug ...` prints it here", file=sys.stderr)


def stopped_by_the_user() -> str:
    """The line for Ctrl-C, naming the run it interrupted (the runner recorded it as interrupted)."""
    from curation.core.stage import INTERRUPTED_RUNS

    if INTERRUPTED_RUNS:
        return f"error: stopped by the user (run {INTERRUPTED_RUNS[-1]} interrupted; re-run to finish)"
    return "error: stopped by the user (no run was under way, so none is recorded as interrupted)"


def main(argv: list[str] | None = None) -> None:
    """`curate`: run the command; user-facing failures are one line, bugs keep their traceback."""
    pressed: list[int] = []

    def ctrl_c(signum: int, frame: FrameType | None) -> None:
        # Typer turns the KeyboardInterrupt into a bare exit code 130: remember that the user asked for it
        pressed.append(signum)
        signal.default_int_handler(signum, frame)

    # only the main thread may set handlers; a SIGINT the parent ignores (a background job) stays ignored
    watch = threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) not in (
        signal.SIG_IGN, None)
    previous = signal.signal(signal.SIGINT, ctrl_c) if watch else None
    try:
        code = _run(argv, pressed)
    except KeyboardInterrupt:  # pressed outside Typer's own handling
        code = 130
        pressed.append(signal.SIGINT)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if pressed and code == 130:
        print(stopped_by_the_user(), file=sys.stderr)
    sys.exit(code)


def flags_shown_as_flags(command: TyperGroup | TyperCommand) -> None:
    """Blank the type column of every flag under `command`, `--help` included: Typer's help prints one for every
    option, so `--debug <bool>` read as if it took a value. An empty metavar is how an option names no value."""
    for param in command.get_params(typer.Context(command)):
        if isinstance(param, TyperOption) and (param.is_flag or param.count):
            param.metavar = ""
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            if isinstance(sub, TyperGroup | TyperCommand):
                flags_shown_as_flags(sub)


def cli() -> TyperGroup:
    """The `curate` command tree as it parses and prints its help."""
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup), "the app has sub-commands, so Typer makes it a group"
    flags_shown_as_flags(command)
    return command


def _run(argv: list[str] | None, pressed: list[int]) -> int:
    command = cli()
    sys.excepthook = report_bug
    try:
        code = command.main(args=argv, prog_name="curate", standalone_mode=False)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except typer.Abort:
        if not pressed:  # stopped at a prompt (end of input); Ctrl-C has its own line
            print("error: stopped", file=sys.stderr)
        return 130
    except typer.TyperException as exc:  # a missing argument, an unknown option: the parser's own message
        if isinstance(exc, CommandLineMistake):
            exc.show()
        else:
            print(f"Error: {exc.format_message()}", file=sys.stderr)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    return code if isinstance(code, int) else 0
