"""What the examples share: where each one works, and running `curate` the way a person types it.

Not an example itself. Every example calls `curate` as a subprocess in its own folder, so the catalog
(`build/catalog.duckdb`), reports, releases and grades land under that folder by the toolkit's own
defaults, and the folder's `curation.toml` (when the example writes one) is the configuration.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout these examples belong to
SHOWN = 40  # lines of a command's output echoed; a long listing (every defect of a release) is cut here


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the option every example takes: where to work."""
    parse = argparse.ArgumentParser(description=description)
    parse.add_argument("--work", type=lambda text: Path(text).resolve(),
                       default=Path(tempfile.gettempdir()).resolve() / "livingscreen-examples",
                       help="folder the examples write under, one sub-folder each (default: "
                            "$TMPDIR/livingscreen-examples)")
    return parse


def fresh_folder(folder: Path) -> Path:
    """`folder`, emptied: an example re-run starts from nothing, as a newcomer's first run does."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def curate(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `curate ARGS` in `folder`, echo the command and what it printed, return its stdout.

    A failure ends the example with curate's own one-line error: an example that half-worked must not
    print a summary as if it had worked."""
    print(f"\n$ curate {shlex.join(args)}", flush=True)
    # this checkout's code whatever the working folder (the same as `.venv/bin/curate` after `make`)
    child_env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "curation.cli", *args], cwd=folder, capture_output=True,
                          text=True, env=child_env, check=False)
    lines = done.stdout.splitlines()
    for line in lines[:SHOWN]:
        print(f"  {line}")
    if len(lines) > SHOWN:
        print(f"  ... ({len(lines) - SHOWN} more lines)")
    if done.returncode != 0:
        sys.exit(f"`curate {shlex.join(args)}` failed in {folder} (exit {done.returncode}):\n{done.stderr.strip()}")
    return done.stdout
