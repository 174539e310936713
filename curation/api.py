"""The catalog from a notebook: Polars DataFrames read straight from DuckDB through Arrow.

    import curation.api
    catalog = curation.api.open("build/catalog.duckdb")
    catalog.tasks().group_by("state").len()

Every frame is one query on a read-only connection, fetched as an Arrow table and handed to Polars
without a copy of its numeric columns (`frame_of`). The connection lives only for that query: DuckDB
lets no process write a file another holds open, so a notebook kept open for hours never blocks a
`curate` stage. Nothing here migrates the file; a catalog an older toolkit made is refused with the
command that brings it up to date. The task states and the funnel come from the modules that own them
(`curation.tasks.lifecycle`, `curation.qc.funnel`), so a notebook counts exactly what the CLI counts.
JSON columns (options, eval_config, answers, edit, extra) stay text: `pl.col(c).str.json_decode()`.
Graded episodes come with their statistics: each model's scores with intervals and every pair of models tested
(`curation.grade.stats`, over the catalog's graded episodes of a release, as `curate grade` computes them), and
the per-task table with its flags that the release's latest `curate grade` wrote (its proofs' verdicts are
computed from the release there, not kept in the catalog).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from curation.core.catalog import MIGRATIONS, Catalog, schema_version_of
from curation.core.errors import PrerequisiteError
from curation.qc.funnel import funnel_rows
from curation.tasks.lifecycle import LATEST_STATES_SQL


def frame_of(table: pa.Table) -> pl.DataFrame:
    """An Arrow table as a Polars frame over the same buffers (no rechunk, which would copy)."""
    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)  # a Table always gives a frame; a bare array would give a Series
    return frame


class CatalogReader:
    """Read-only frames of one catalog file; see the module's docstring."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._check()

    def __repr__(self) -> str:
        return f"CatalogReader({str(self.path)!r})"

    def _check(self) -> None:
        if not self.path.exists():
            raise PrerequisiteError(f"catalog {self.path} does not exist: run `curate ingest` first "
                                    "(or pass the path of an existing catalog)")
        if self.path.is_dir():
            raise PrerequisiteError(f"catalog {self.path} is a folder, not a catalog file")
        version = schema_version_of(self.path)
        if version == 0:
            raise PrerequisiteError(f"catalog {self.path} is a DuckDB file without a catalog schema: "
                                    "not made by `curate`")
        if version < len(MIGRATIONS):
            raise PrerequisiteError(f"catalog {self.path} has schema version {version}, this toolkit reads "
                                    f"{len(MIGRATIONS)}: run `curate --catalog {self.path} migrate` once to bring "
                                    "it up to date (this API never writes the file)")

    @contextmanager
    def _open(self) -> Iterator[Catalog]:
        self._check()  # checked again: the file may have been replaced since; Catalog would migrate an old one
        catalog = Catalog(self.path, read_only=True)
        catalog.con.complete()  # the schema check's half-read result would block the next query
        try:
            yield catalog
        finally:
            catalog.close()

    # -- the data path ---------------------------------------------------------

    def arrow(self, sql: str, params: list[Any] | None = None) -> pa.Table:
        """One query's rows as an Arrow table (DuckDB writes Arrow directly; no Python rows)."""
        with self._open() as catalog:
            return catalog.con.sql(sql, params=params or None).to_arrow_table()

    def sql(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        """Any query on the catalog as a frame; the connection is read-only, so a write is refused."""
        return frame_of(self.arrow(sql, params))

    # -- the catalog's records -------------------------------------------------

    def videos(self, source: str | None = None) -> pl.DataFrame:
        """Every video (or one source's), by id."""
        return self.sql("SELECT * FROM videos WHERE ? IS NULL OR source = ? ORDER BY video_id", [source, source])

    def feeds(self, version: int | None = None, feed_id: str | None = None) -> pl.DataFrame:
        """Each feed as it stands now (its latest version), or at `version` (the feeds that have one)."""
        if version is None:
            return self.sql("SELECT * FROM latest_feeds WHERE ? IS NULL OR feed_id = ? ORDER BY feed_id",
                            [feed_id, feed_id])
        return self.sql("SELECT * FROM feeds WHERE version = ? AND (? IS NULL OR feed_id = ?) ORDER BY feed_id",
                        [version, feed_id, feed_id])

    def tasks(self) -> pl.DataFrame:
        """Every task's latest version with its life-cycle state (`state`, `since`, `fix_reason`), as
        `curate annotate status` reads them (curation/tasks/lifecycle.py)."""
        return self.sql(LATEST_STATES_SQL)

    def transitions(self, task_id: str | None = None) -> pl.DataFrame:
        """Every move of every task version (or one task's), in order: the path each took."""
        return self.sql("SELECT * FROM task_transitions WHERE ? IS NULL OR task_id = ? ORDER BY task_id, version, seq",
                        [task_id, task_id])

    def verdicts(self) -> pl.DataFrame:
        """The shortcut filter's verdicts: one per task version and filter configuration (`config_sha256`);
        `of_record` marks the one that decided the task version, the others are evidence."""
        return self.sql("SELECT v.*, o.task_id IS NOT NULL AS of_record FROM shortcut_verdicts v "
                        "LEFT JOIN shortcut_verdicts_of_record o USING (task_id, task_version, config_sha256) "
                        "ORDER BY v.task_id, v.task_version, v.created_at")

    def reviews(self) -> pl.DataFrame:
        """Blind reviews, one per task version, with their outcome."""
        return self.sql("SELECT * FROM reviews ORDER BY task_id, task_version")

    def decisions(self) -> pl.DataFrame:
        """The group's decisions on escalated task versions (kept, deleted, revised)."""
        return self.sql("SELECT * FROM decisions ORDER BY task_id, task_version")

    def grades(self, release: str | None = None, model: str | None = None) -> pl.DataFrame:
        """Graded episodes of the public runner, one per release, model and task (`episode_grades`)."""
        return self.sql("SELECT * FROM episode_grades WHERE (? IS NULL OR release = ?) AND (? IS NULL OR model = ?) "
                        "ORDER BY release, model, task_id", [release, release, model, model])

    def _graded(self, release: str, include_defective: bool) -> list[dict[str, Any]]:
        with self._open() as catalog:
            rows = catalog.rows("SELECT model, task_id, tier, subcategory, sr, ns, wr, defective FROM episode_grades "
                                "WHERE release = ? ORDER BY model, task_id", [release])
        return [r for r in rows if include_defective or not r["defective"]]

    def grade_intervals(self, release: str, seed: int = 0, include_defective: bool = False) -> pl.DataFrame:
        """Per model (runs `name#run` pooled) and scope (`all`, a tier, `tier/sub-category`): SR, NS and WR with
        95% intervals over tasks and the method of each (`curation/grade/stats.py`)."""
        from curation.grade.evidence import outcomes_of
        from curation.grade.stats import Interval, model_scores

        rows = [asdict(i) for i in model_scores(outcomes_of(self._graded(release, include_defective)), seed)]
        return pl.DataFrame(rows, schema=_schema(Interval))

    def grade_pairs(self, release: str, seed: int = 0, include_defective: bool = False) -> pl.DataFrame:
        """Every pair of models graded on common tasks: the SR difference, its 95% interval and p-values."""
        from curation.grade.evidence import outcomes_of
        from curation.grade.stats import PairTest, pair_tests

        rows = [asdict(p) for p in pair_tests(outcomes_of(self._graded(release, include_defective)), seed)]
        return pl.DataFrame(rows, schema=_schema(PairTest))

    def task_table(self, release: str) -> pl.DataFrame:
        """The per-task table (solve rate, IRT difficulty and discrimination, answers, unmet checks, proofs, flags)
        that the release's latest successful `curate grade` wrote beside its summary (tasks.parquet)."""
        from curation.grade.judged import TASK_FILES

        with self._open() as catalog:
            found = catalog.rows("SELECT run_id, params->>'out' AS out FROM runs WHERE stage = 'grade' AND status = "
                                 "'ok' AND params->>'release' = ? ORDER BY finished_at DESC LIMIT 1", [release])
        if not found:
            raise PrerequisiteError(f"no `curate grade` of release {release} in {self.path}: grade its episodes first")
        path = Path(found[0]["out"]) / TASK_FILES[0]
        if not path.is_file():
            raise PrerequisiteError(f"{path} (written by grade run {found[0]['run_id']}) is gone: grade release "
                                    f"{release} again")
        return pl.read_parquet(path)

    def funnel(self) -> pl.DataFrame:
        """The QC funnel as `curate qc report` counts it: a row for all tasks, each tier and each
        sub-category (`level`, `group`), each task once in its current state (end states, the stages
        it is at or past, its path), the check that the end states add up, and the paper's rates.
        Counted by curation/qc/funnel.py in Python: a summary of a few rows, not an Arrow read."""
        with self._open() as catalog:
            return pl.DataFrame(funnel_rows(catalog), infer_schema_length=None)


_POLARS = {"str": pl.String, "int": pl.Int64, "float": pl.Float64}


def _schema(kind: type) -> dict[str, Any]:
    """A dataclass's fields as a Polars schema (so that an empty list of rows still has its columns)."""
    return {f.name: _POLARS[str(f.type).removesuffix(" | None")] for f in fields(kind)}


def open(path: Path | str = "build/catalog.duckdb") -> CatalogReader:  # noqa: A001  (curation.api.open reads well)
    """The catalog at `path` for reading; a missing file, or one that needs migrating, is refused here."""
    return CatalogReader(path)
