"""The DuckDB catalog: an open file with its schema brought up to date (`migrations.py`), run rows, transactions.

Every table declares its key in the schema but `videos` and `comments` (migration 16), whose keys
are listed in `UNIQUE_KEYS` and checked by the stage runner before a stage's writes commit.

The catalog is the only state shared between stages. Run rows are written by the
stage runner (`curation.core.stage`), never by a stage itself.
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from curation import __version__
from curation.core import lock
from curation.core.errors import CurationError, PrerequisiteError
from curation.core.migrations import MIGRATIONS


@dataclass(frozen=True)
class UniqueKey:
    """A key the schema does not enforce: its columns, and the column naming the run that wrote a row."""

    columns: tuple[str, ...]
    run_column: str


# Keys that hold without a constraint, because migration 16 dropped these for speed. The stage runner
# refuses a run that leaves one of them twice in a table it writes (curation/core/keys.py).
UNIQUE_KEYS: dict[str, UniqueKey] = {
    "videos": UniqueKey(("video_id",), run_column="run_id"),
    "comments": UniqueKey(("video_id", "comment_id"), run_column="run_id"),
}


def sql_literal(text: str) -> str:
    """A string as an SQL literal, for statements that take no parameters (views)."""
    return "'" + text.replace("'", "''") + "'"


def one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple[Any, ...]:
    """The row of a query that yields one by construction (aggregates such as count(*) without GROUP BY)."""
    row = con.execute(sql, params or []).fetchone()
    if row is None:
        raise AssertionError(f"no row from a one-row query: {sql}")
    return row


@cache
def code_version() -> str:
    """The package version, plus the git commit when running from a checkout."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return __version__
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=root,
                             capture_output=True, text=True, timeout=5, check=True)
        return f"{__version__}+{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        return __version__


def interrupted_query(exc: BaseException) -> bool:
    """DuckDB's own word for a query that Ctrl-C stopped (it reports SIGINT as an error of its own)."""
    return isinstance(exc, duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and str(exc) == "Query interrupted")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def schema_version_of(path: Path) -> int:
    """The catalog file's schema version, read without changing the file (0: no catalog schema in it)."""
    try:
        con = lock.connect(path, read_only=True)
    except duckdb.Error as exc:
        raise CurationError(f"catalog {path} cannot be opened: {str(exc).splitlines()[0]}") from None
    try:
        if not one_row(con, "SELECT count(*) FROM information_schema.tables "
                            "WHERE table_name = 'schema_migrations'")[0]:
            return 0
        return int(one_row(con, "SELECT coalesce(max(version), 0) FROM schema_migrations")[0])
    finally:
        con.close()


class Catalog:
    """An open catalog file with its schema brought up to date."""

    # run before every COMMIT of an outermost transaction (the stage runner's key checks)
    before_commit: tuple[Callable[[], None], ...] = ()
    read_only: bool = False

    def __init__(self, path: Path | str, read_only: bool = False, memory_limit: str = "") -> None:
        self.path = Path(path)
        self.memory_limit = memory_limit  # `[catalog] memory_limit`, kept for every reconnection
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise PrerequisiteError(f"catalog {self.path} does not exist: run `curate ingest` first")
        self.con = self._connect(read_only)
        self._depth = 0
        if not read_only:
            self._migrate()
        elif (version := self.schema_version) < len(MIGRATIONS):
            self.con.close()  # a read-only open never writes, not even a migration
            raise PrerequisiteError(f"catalog {self.path} has schema version {version}, this toolkit reads "
                                    f"{len(MIGRATIONS)}: run `curate --catalog {self.path} migrate` once to bring "
                                    "it up to date")

    def _connect(self, read_only: bool, wait_s: float = lock.WAIT_S) -> duckdb.DuckDBPyConnection:
        self.read_only = read_only
        return lock.connect(self.path, read_only, wait_s, self.memory_limit)

    def close(self) -> None:
        self.con.close()
        if not self.read_only:
            lock.clear_holder(self.path)

    def note_holder(self, **fields: Any) -> None:
        """Tell whoever waits for this catalog what holds it (the stage, its run, how far it got)."""
        if not self.read_only:
            lock.note_holder(self.path, **fields)

    @contextmanager
    def released(self) -> Iterator[None]:
        """Let go of the file for the length of the block (a stage computing between batches), so that
        other commands can read it; take it back afterwards, waiting while a reader holds it. Inside a
        transaction, or read-only, the block runs holding the file as before."""
        if self._depth or self.read_only:
            yield
            return
        said = lock.read_holder(self.path) or {}
        self.close()
        try:
            yield
        finally:
            pressed = False
            while True:  # the catalog is taken back even when Ctrl-C lands while it is being taken
                try:
                    self.con = self._connect(False, wait_s=lock.TAKE_BACK_WAIT_S)
                    break
                except KeyboardInterrupt:
                    pressed = True
            self.note_holder(**{k: v for k, v in said.items() if k in ("stage", "run_id", "progress")})
            if pressed:
                raise KeyboardInterrupt

    @contextmanager
    def reader(self) -> Iterator[Catalog]:
        """The same catalog through a connection of its own, for reading in another thread while this one goes
        on (a DuckDB connection serves one thread at a time). It sees what was committed; it never writes."""
        view = copy.copy(self)
        view.con, view._depth = self.con.cursor(), 0
        try:
            yield view
        finally:
            view.con.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        row = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        ).fetchone()
        if not row or row[0] == 0:
            return 0
        version = self.con.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(version[0] or 0) if version else 0

    def _migrate(self, migrations: list[str] | None = None) -> None:
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER, applied_at TIMESTAMP)"
        )
        current = self.schema_version
        for version, sql in enumerate(migrations or MIGRATIONS, start=1):
            if version <= current:
                continue
            try:
                with self.transaction():
                    self.con.execute(sql)
                    self.con.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                                     [version, now()])
            except duckdb.Error as exc:
                raise CurationError(f"catalog {self.path}: schema migration {version} failed: "
                                    f"{str(exc).splitlines()[0]}") from None

    # -- transactions and writes ---------------------------------------------

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One transaction; a nested block joins the enclosing one."""
        if self._depth:
            self._depth += 1
            try:
                yield self.con
            finally:
                self._depth -= 1
            return
        self.con.execute("BEGIN TRANSACTION")
        self._depth = 1
        try:
            yield self.con
            for check in self.before_commit:  # a check that raises rolls the transaction back
                check()
        except BaseException:
            self._depth = 0
            self.con.execute("ROLLBACK")
            raise
        self._depth = 0
        self.con.execute("COMMIT")

    @contextmanager
    def staged(self, **tables: Any) -> Iterator[None]:
        """Arrow tables visible to SQL under the given names for the length of the block."""
        self.con.complete()  # a half-read result from an earlier execute() would block register()
        for name, table in tables.items():
            self.con.register(name, table)
        try:
            yield
        finally:
            for name in tables:
                self.con.unregister(name)

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """One row, by column name."""
        names = ", ".join(row)
        self.con.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})",
                         list(row.values()))

    def insert_staged(self, table: str, staged: str, columns: list[str] | tuple[str, ...],
                      where: str = "", params: list[Any] | None = None) -> None:
        """Rows of a staged Arrow table (or any relation), by column name."""
        names = ", ".join(columns)
        self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {staged} {where}",
                         params or [])

    def rows(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def scalar(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> Any:
        rows = self.con.execute(sql, params or []).fetchall()
        return rows[0][0] if rows else None

    def tables(self) -> list[str]:
        return [r[0] for r in self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]

    def row_counts(self, names: set[str] | list[str]) -> dict[str, int]:
        """Rows in each of `names` that is a table of this catalog (other names are left out)."""
        present = sorted(set(names) & set(self.tables()))
        return {t: int(self.scalar(f"SELECT count(*) FROM {t}")) for t in present}
