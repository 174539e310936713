"""Who holds the catalog file, and waiting for it.

DuckDB lets one process open a file for writing and then no other process may open it at all. A stage
therefore holds the catalog only while it reads its inputs and writes a batch (`Catalog.released()` lets go
while it computes), and a command that meets the lock waits a little before it gives up. The process that
holds the file for writing notes who it is in a file beside it (`<catalog>.holder.json`: the command, the
stage and run, since when, how far), so that whoever waits in vain can be told which stage holds it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from curation.core.errors import CurationError

# how long a command waits for a catalog another process holds, before it says who holds it
WAIT_S = float(os.environ.get("CURATE_LOCK_WAIT_S", "10"))
# how long a stage that let go between batches waits to take the catalog back (a reader holds it briefly)
TAKE_BACK_WAIT_S = 600.0
POLL_S = 0.1


class CatalogBusyError(CurationError):
    """Another process holds the catalog for writing longer than we waited."""


def holder_path(path: Path) -> Path:
    return path.with_name(path.name + ".holder.json")


def note_holder(path: Path, **fields: Any) -> None:
    """Say who holds `path` for writing (merged into what was said before by this process)."""
    target = holder_path(path)
    said = read_holder(path) or {}
    if said.get("pid") != os.getpid():
        said = {"pid": os.getpid(), "command": " ".join(Path(sys.argv[0]).name.split() + sys.argv[1:]) or "python",
                "since": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")}
    said.update(fields)
    part = target.with_name(target.name + f".{os.getpid()}.part")
    # ASCII: a command line may hold a name that is not UTF-8 (a lone surrogate in Python)
    part.write_text(json.dumps(said, ensure_ascii=True, sort_keys=True), encoding="utf-8")
    part.replace(target)


def clear_holder(path: Path) -> None:
    said = read_holder(path)
    if said is not None and said.get("pid") == os.getpid():
        holder_path(path).unlink(missing_ok=True)


def read_holder(path: Path) -> dict[str, Any] | None:
    try:
        said = json.loads(holder_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return said if isinstance(said, dict) else None


def busy_message(path: Path, waited_s: float, error: str) -> str:
    said = read_holder(path)
    if said is None:  # a process that is not `curate` (a notebook's own DuckDB connection, say)
        return f"catalog {path} is held by another process ({error.split(': ', 1)[-1]}); waited {waited_s:.0f} s"
    stage = f"stage {said['stage']} (run {said.get('run_id')}" + (
        f", {said['progress']}" if said.get("progress") else "") + ")" if said.get("stage") else "no stage"
    return (f"catalog {path} is held by `{said.get('command')}` (pid {said.get('pid')}, {stage}) since "
            f"{said.get('since')}; waited {waited_s:.0f} s: "
            + ("it lets go between batches, try again in a moment" if said.get("progress")
               else "try again when it has finished"))


def connect(path: Path, read_only: bool, wait_s: float = WAIT_S, memory_limit: str = "") -> duckdb.DuckDBPyConnection:
    """A connection to the catalog file, waiting up to `wait_s` while another process holds it."""
    start = time.monotonic()
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only,
                                 config={"memory_limit": memory_limit} if memory_limit else {})
        except duckdb.IOException as exc:
            message = str(exc).splitlines()[0]
            if "lock" not in message.lower():
                raise CurationError(f"catalog {path} cannot be opened: {message}") from None
            if time.monotonic() - start < wait_s:
                time.sleep(POLL_S)
                continue
            raise CatalogBusyError(busy_message(path, time.monotonic() - start, message)) from None
        if not read_only:
            note_holder(path)
        return con
