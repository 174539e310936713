"""Which stage runs on a catalog, for the whole of its run.

DuckDB's file lock says who holds the file at this moment, and a long stage lets go of the file
between batches so that readers can answer (`Catalog.released`). The lease says who is *running*:
a writing stage takes one for its whole run, a file in `<catalog>.leases/` with its pid, host,
stage, runs and start. Readers never need one. A stage whose tables meet those of a stage holding
a lease (`Stage.conflicts_with`) waits a bounded time and then refuses, naming the holder. A lease
whose process is gone was left by a killed run: it is taken over, and its runs are interrupted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from curation.core.errors import CurationError


class StageBusyError(CurationError):
    """A stage that reads or writes what a running stage writes refused to start beside it."""


def _process_start(pid: int) -> str | None:
    """When a process started (Linux: clock ticks since boot), so that a pid used again is not taken for it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19] if ")" in stat else None


@dataclass
class Lease:
    stage: str
    runs: list[str]                       # the stage's run, and the runs of stages it calls
    reads: list[str]
    writes: list[str]
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    command: str = field(default_factory=lambda: " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) or "python")
    process_start: str | None = None

    def __post_init__(self) -> None:
        if self.process_start is None and self.pid == os.getpid():
            self.process_start = _process_start(self.pid)

    @property
    def alive(self) -> bool:
        """Whether the process that took it still runs. On another host nobody here can tell: it counts as alive."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # another user's process: it exists
        return self.process_start is None or _process_start(self.pid) in (None, self.process_start)

    def who(self) -> str:
        return (f"stage {self.stage} (run {self.runs[0]}, `{self.command}`, pid {self.pid} on {self.host}, "
                f"since {self.started})")


def lease_dir(catalog: Path) -> Path:
    return catalog.with_name(catalog.name + ".leases")


@contextlib.contextmanager
def _exclusive(catalog: Path) -> Iterator[Path]:
    """The lease folder, with no other process taking or giving up a lease meanwhile."""
    folder = lease_dir(catalog)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield folder
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read(path: Path) -> Lease | None:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        return Lease(**body)
    except (OSError, ValueError, TypeError):
        return None


def _write(path: Path, lease: Lease) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(asdict(lease), ensure_ascii=True, sort_keys=True), encoding="utf-8")
    part.replace(path)


def leases(catalog: Path) -> list[Lease]:
    """Every lease on record for `catalog`, alive or left by a killed run."""
    folder = lease_dir(catalog)
    return [lease for p in sorted(folder.glob("*.json")) if (lease := _read(p))] if folder.is_dir() else []


def live_runs(catalog: Path) -> set[str]:
    """The runs a live process is running now."""
    return {run for lease in leases(catalog) if lease.alive for run in lease.runs}


def take(catalog: Path, lease: Lease, conflicts: Callable[[Lease], bool], wait_s: float,
         on_dead: Callable[[Lease], None], wait: Callable[[float], None] = time.sleep) -> Path:
    """Record `lease` for `catalog`, waiting up to `wait_s` while a live lease conflicts with it (`wait` sleeps:
    the caller lets go of the catalog file meanwhile); a dead lease is handed to `on_dead` and removed."""
    start = time.monotonic()
    while True:
        with _exclusive(catalog) as folder:
            holders = []
            for path in sorted(folder.glob("*.json")):
                found = _read(path)
                if found is None or not found.alive:
                    if found is not None:
                        on_dead(found)
                    path.unlink(missing_ok=True)
                elif conflicts(found):
                    holders.append(found)
            if not holders:
                path = folder / f"{lease.runs[0]}.json"
                _write(path, lease)
                return path
        waited = time.monotonic() - start
        if waited >= wait_s:
            raise StageBusyError(
                f"stage {lease.stage} cannot run now: " + "; ".join(h.who() for h in holders)
                + f" is running and reads or writes what {lease.stage} reads or writes; waited {waited:.0f} s. "
                  "Run it when that has finished (`curate status` shows how far it got)")
        wait(min(0.5, max(wait_s - waited, 0.05)))


def add_run(path: Path, run_id: str) -> None:
    """A stage called by the stage holding the lease at `path` runs under it."""
    lease = _read(path)
    if lease is not None and run_id not in lease.runs:
        lease.runs.append(run_id)
        _write(path, lease)


def give_up(path: Path) -> None:
    path.unlink(missing_ok=True)

