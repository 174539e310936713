"""A stage is an object: its name, the catalog tables it reads and writes, and the
function that does the work. One runner owns everything around that function.

    @stage("keywords", command="curate keywords", reads=("videos",), writes=("keyword_sets",),
           summary="a keyword set per video with each keyword's origin")
    def build_keyword_sets(run: StageRun, config: KeywordsConfig) -> dict[str, int]:
        ...                      # read and write through run.catalog; fill run.counts
        return run.counts

    build_keyword_sets(catalog, config)     # runs it: a row in `runs`, one transaction

The runner takes the stage's lease on the catalog (curation/core/lease.py: a stage whose tables meet
a running stage's waits, then refuses naming it), writes the run row (running -> ok | failed with the
error and its traceback | interrupted, by Ctrl-C or found with no live process behind it), wraps the
work in one transaction unless the stage commits in batches (`batched=True`, for resumable work), and
records the parameters and counts. `curate describe` prints from the same objects.
"""

from __future__ import annotations

import inspect
import json
import re
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from curation.core import lease, lock
from curation.core.catalog import UNIQUE_KEYS, Catalog, code_version, interrupted_query, now
from curation.core.errors import CurationError
from curation.core.executor import Resources
from curation.core.keys import refuse_duplicates
from curation.core.progress import progress
from curation.core.storable import storable

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")
TABLE_NAME = re.compile(r"[a-z][a-z0-9_]*")
# the start of the note a run adds to a bug that failed it: the CLI prints it instead of the traceback
FAILED_RUN_NOTE = "its traceback is kept in the catalog"
STAGES: dict[str, Stage[..., Any]] = {}
# the runs Ctrl-C stopped in this process, in the order they were closed (an outer run last), for the
# command line's message
INTERRUPTED_RUNS: list[str] = []
# the lease each open catalog's running stage holds in this process (a stage it calls runs under it)
_LEASES: dict[Path, Path] = {}
GONE = "its process is gone (killed, or the machine stopped): no live process holds a lease for it"


@dataclass
class StageRun:
    """What a stage's work function gets: the catalog, its run id, and where to put
    parameters and counts. `catalog` is None in a dry run of a stage that allows one."""

    stage: str
    run_id: str | None
    catalog: Catalog | None
    params: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def dry_run(self) -> bool:
        return self.run_id is None

    @property
    def db(self) -> Catalog:
        """The catalog, for stages that always have one."""
        assert self.catalog is not None, f"{self.stage}: no catalog in a dry run"
        return self.catalog

    def progress(self, items: Iterable[T], description: str, total: int | None = None, *,
                 let_go: bool = False) -> Iterator[T]:
        """`items` with a progress bar. With `let_go` (a batched stage whose items are computed lazily and
        need no catalog) the catalog is let go while each next item is computed, so that other commands can
        read it, and the run's row shows how far it got after each item the stage has written."""
        if let_go and self.catalog is not None and not self.dry_run:
            items = self._letting_go(items, total)
        return progress(items, description, total)

    def _letting_go(self, items: Iterable[T], total: int | None) -> Iterator[T]:
        iterator, done = iter(items), 0
        while True:
            with self.db.released():
                try:
                    item = next(iterator)
                except StopIteration:
                    return
            yield item  # the stage writes it, holding the catalog
            done += 1
            progress_text = f"{done:,}/{total:,}" if total else f"{done:,}"
            self.db.con.execute("UPDATE runs SET counts = ? WHERE run_id = ?",
                                [_json({**self.counts, "progress": progress_text}), self.run_id])
            self.db.note_holder(progress=progress_text)

    def clear_rejects(self, *, record_id: str) -> None:
        """Forget this stage's earlier reject of a record (it is being judged again)."""
        self.db.con.execute("DELETE FROM rejects WHERE stage = ? AND record_id = ?", [self.stage, record_id])

    def reject(self, *, source: str, raw_ref: str, reason: str, raw: bytes, record_id: str | None = None) -> None:
        """Record that this stage rejected a record; a re-run replaces, never adds."""
        if record_id is not None:
            self.clear_rejects(record_id=record_id)
        self.db.con.execute("DELETE FROM rejects WHERE stage = ? AND source = ? AND raw_ref = ?",
                            [self.stage, source, raw_ref])
        self.db.insert("rejects", {"run_id": self.run_id, "stage": self.stage, "source": source,
                                   "raw_ref": raw_ref, "record_id": record_id, "reason": reason, "raw": raw})


@dataclass
class RunResult:
    """What a stage hands back: its counts (as recorded in `runs`) and, in subclasses, what it
    returns beside them. Indexing reads the counts."""

    counts: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.counts[key]


@dataclass(frozen=True)
class Stage(Generic[P, R]):
    """Called as its work function is, with the catalog in place of the run: the same parameters and the same
    return type (ParamSpec), for type checkers and for `inspect.signature`."""

    name: str
    command: str
    summary: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    work: Callable[Concatenate[StageRun, P], R]
    batched: bool = False  # commits its own batches (resumable); otherwise one transaction
    check: Callable[..., None] | None = None  # refuses bad arguments before any run row is written
    resources: Resources | None = None  # what one worker needs when the stage runs on an executor
    files: tuple[str, ...] = ()  # files and folders outside the catalog: "in: ..." read, "out: ..." written

    def __post_init__(self) -> None:
        work = inspect.signature(self.work)
        catalog = inspect.Parameter("catalog", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Catalog | None")
        object.__setattr__(self, "__signature__", work.replace(parameters=[catalog, *list(
            work.parameters.values())[1:]]))
        object.__setattr__(self, "__doc__", self.work.__doc__)

    def dry(self, catalog: Catalog | None, *args: P.args, **kwargs: P.kwargs) -> R:
        """The stage without a run: no run row is written and the work must write nothing."""
        if self.check is not None:
            self.check(*args, **kwargs)
        return self.work(StageRun(self.name, None, catalog), *args, **kwargs)

    def __call__(self, catalog: Catalog | None, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run the stage on `catalog` (None: a dry run, see `dry`)."""
        if catalog is None:
            return self.dry(catalog, *args, **kwargs)
        if self.check is not None:
            self.check(*args, **kwargs)
        run = StageRun(self.name, f"{self.name}-{now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}", catalog)
        outer = catalog.in_transaction  # a stage called by another stage joins its transaction
        key = catalog.path.resolve()
        held = _LEASES.get(key)  # a stage called by another runs under its lease
        if held is not None:
            lease.add_run(held, str(run.run_id))
        else:
            _LEASES[key] = self._take_lease(catalog, str(run.run_id))
        try:
            with catalog.transaction():
                # a run marked running that no live process holds a lease for was killed
                catalog.con.execute("UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? "
                                    "WHERE status = 'running' AND NOT list_contains(?, run_id)",
                                    [now(), GONE, sorted(lease.live_runs(catalog.path))])
                catalog.insert("runs", {"run_id": run.run_id, "stage": self.name, "params": "{}",
                                        "code_version": code_version(), "started_at": now(), "status": "running"})
        except BaseException:
            if held is None:
                lease.give_up(_LEASES.pop(key))
            raise
        if not outer:
            catalog.note_holder(stage=self.name, run_id=run.run_id, progress=None)
        try:
            if self.batched or outer:
                result = _work_keeping_keys(self, run, *args, **kwargs)
                self._close(run, "ok")
            else:
                with catalog.transaction():
                    result = _work_keeping_keys(self, run, *args, **kwargs)
                    self._close(run, "ok")
        except KeyboardInterrupt:
            self._interrupted(run, outer)
            raise
        except Exception as exc:  # recorded, then raised on unchanged
            if interrupted_query(exc):  # Ctrl-C that landed inside a DuckDB query
                self._interrupted(run, outer)
                raise KeyboardInterrupt from exc
            if not outer:
                self._close(run, "failed", f"{type(exc).__name__}: {exc}"[:2000], traceback.format_exc()[-20000:])
                if not isinstance(exc, CurationError):  # a bug: say where its traceback is kept
                    exc.add_note(f"{FAILED_RUN_NOTE} {catalog.path}: runs.traceback of run {run.run_id} "
                                 f"(stage {self.name}, failed)")
            raise
        finally:
            if not outer:
                catalog.note_holder(stage=None, run_id=None, progress=None)
            if held is None:
                lease.give_up(_LEASES.pop(key))
        return result

    def conflicts_with(self, other: lease.Lease) -> bool:
        """Whether this stage must not run beside `other`: one writes a table the other reads or writes."""
        reads, writes = set(self.reads), set(self.writes)
        return bool(writes & (set(other.reads) | set(other.writes)) or set(other.writes) & reads)

    def _take_lease(self, catalog: Catalog, run_id: str) -> Path:
        def interrupted(dead: lease.Lease) -> None:
            catalog.con.execute("UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? "
                                "WHERE status = 'running' AND list_contains(?, run_id)", [now(), GONE, dead.runs])

        def wait(seconds: float) -> None:
            with catalog.released():  # let go of the file meanwhile: the holder takes it back between batches
                time.sleep(seconds)

        return lease.take(catalog.path, lease.Lease(self.name, [run_id], list(self.reads), list(self.writes)),
                          self.conflicts_with, lock.WAIT_S, interrupted, wait)

    def _interrupted(self, run: StageRun, outer: bool) -> None:
        if not outer:
            self._close(run, "interrupted", "stopped by the user")
            INTERRUPTED_RUNS.append(str(run.run_id))

    @staticmethod
    def _close(run: StageRun, status: str, error: str | None = None, trace: str | None = None) -> None:
        run.db.con.execute(
            "UPDATE runs SET finished_at = ?, status = ?, params = ?, counts = ?, error = ?, traceback = ? "
            "WHERE run_id = ?", [now(), status, _json(run.params), _json(run.counts), _storable(error),
                                 _storable(trace), run.run_id])

    def describe(self, counts: dict[str, int] | None = None) -> str:
        def show(tables: tuple[str, ...]) -> str:
            return ", ".join(f"{t} ({counts[t]:,})" if counts and t in counts else t for t in tables) or "-"
        mode = "commits in batches (resumable)" if self.batched else "one transaction"
        workers = f"; on an executor: {self.resources.describe()}" if self.resources else ""
        files = f"\n    files: {', '.join(self.files)}" if self.files else ""
        return (f"{self.name}: {self.command}\n    {self.summary}\n"
                f"    reads: {show(self.reads)}\n    writes: {show(self.writes)}{files}\n    {mode}{workers}")


def _work_keeping_keys(stage: Stage[..., Any], run: StageRun, /, *args: Any, **kwargs: Any) -> Any:
    """The stage's work, refused (DuplicateKeyError) when it leaves a key of `UNIQUE_KEYS` twice in a
    table it writes: checked before each commit the work makes itself (a batched stage's batches) and
    when it returns, inside the runner's transaction unless the stage is batched, so nothing commits."""
    tables = tuple(t for t in stage.writes if t in UNIQUE_KEYS)
    if not tables:
        return stage.work(run, *args, **kwargs)
    catalog, run_id = run.db, str(run.run_id)
    before = catalog.before_commit
    catalog.before_commit = (*before, lambda: refuse_duplicates(catalog, tables, run_id, "the batch was not committed"))
    try:
        result = stage.work(run, *args, **kwargs)
    finally:
        catalog.before_commit = before
    refuse_duplicates(catalog, tables, run_id, "nothing was committed" if catalog.in_transaction
                      else "written outside the stage's batches, so committed already")
    return result


def _json(value: dict[str, Any]) -> str:
    return storable(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def _storable(text: str | None) -> str | None:
    """What a run reports, as the catalog can hold it: closing a run never fails on a name that is not UTF-8."""
    return None if text is None else storable(text)


def stage(name: str, *, command: str, summary: str, reads: tuple[str, ...], writes: tuple[str, ...],
          batched: bool = False, check: Callable[..., None] | None = None,
          resources: Resources | None = None, files: tuple[str, ...] = ()
          ) -> Callable[[Callable[Concatenate[StageRun, P], R]], Stage[P, R]]:
    """Declare `work(run, ...)` as a stage; the returned object runs it. `check(...)` gets the same
    arguments (without the run) and raises on arguments that cannot be right. `reads` and `writes` name
    catalog tables only; files and folders go in `files` ("in: the corpus file", "out: a report")."""
    def declare(work: Callable[Concatenate[StageRun, P], R]) -> Stage[P, R]:
        if name in STAGES:
            raise ValueError(f"stage {name!r} declared twice")
        prose = [t for t in (*reads, *writes) if not TABLE_NAME.fullmatch(t)]
        if prose:
            raise ValueError(f"stage {name!r}: reads/writes name catalog tables, not {prose} (put files in files=)")
        if any(not f.startswith(("in: ", "out: ")) for f in files):
            raise ValueError(f"stage {name!r}: each of files= starts with 'in: ' or 'out: '")
        declared = Stage(name, command, summary, reads, writes, work, batched, check, resources, files)
        STAGES[name] = declared
        return declared
    return declare
