"""The DuckDB catalog: schema migrations, run records and the rejects table.

The catalog is the only state shared between stages. Every stage opens it,
records a run, writes inside one transaction, and closes the run with counts.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from curation import __version__
from curation.config import PROJECT_ROOT

# Each entry moves the schema one version forward; never edit a released entry,
# append a new one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE runs (
        run_id VARCHAR, stage VARCHAR, params JSON, code_version VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, status VARCHAR, counts JSON
    );
    CREATE TABLE videos (
        video_id VARCHAR NOT NULL, source VARCHAR NOT NULL, native_id VARCHAR NOT NULL,
        title VARCHAR, description VARCHAR, hashtags VARCHAR[], keywords VARCHAR[],
        author_name VARCHAR, author_bio VARCHAR, author_verified BOOLEAN,
        like_count BIGINT, comment_count BIGINT, collect_count BIGINT, share_count BIGINT,
        duration_s DOUBLE, published_at TIMESTAMP, label VARCHAR, category VARCHAR,
        synthetic BOOLEAN NOT NULL DEFAULT false, media_path VARCHAR,
        raw_ref VARCHAR, ingest_run VARCHAR, extra JSON, record_hash VARCHAR
    );
    CREATE TABLE comments (
        comment_id VARCHAR NOT NULL, video_id VARCHAR NOT NULL, parent_id VARCHAR,
        author VARCHAR, text VARCHAR, like_count BIGINT, time_s DOUBLE,
        created_at TIMESTAMP, ingest_run VARCHAR
    );
    CREATE TABLE rejects (
        run_id VARCHAR, stage VARCHAR, source VARCHAR, raw_ref VARCHAR,
        record_id VARCHAR, reason VARCHAR, raw BLOB
    );
    """,
    """
    CREATE TABLE keyword_sets (
        video_id VARCHAR NOT NULL, keywords VARCHAR[], origins VARCHAR[],
        text VARCHAR, text_sha256 VARCHAR, run_id VARCHAR
    );
    CREATE TABLE embeddings (
        model_id VARCHAR NOT NULL, text_sha256 VARCHAR NOT NULL, vector FLOAT[],
        run_id VARCHAR
    );
    CREATE TABLE clusters (
        run_id VARCHAR, cluster_id INTEGER, size INTEGER, top_keywords VARCHAR[],
        medoid_video VARCHAR, mean_similarity DOUBLE
    );
    CREATE TABLE cluster_members (
        run_id VARCHAR, video_id VARCHAR, cluster_id INTEGER, probability DOUBLE
    );
    CREATE TABLE feeds (
        feed_id VARCHAR NOT NULL, version INTEGER NOT NULL, anchor_cluster INTEGER,
        cluster_run VARCHAR, keyword_videos VARCHAR[], other_videos VARCHAR[],
        video_feed VARCHAR[], ratio DOUBLE, seed BIGINT, run_id VARCHAR,
        total_runtime_s DOUBLE, edit JSON, created_at TIMESTAMP
    );
    """,
    """
    CREATE TABLE media_files (
        video_id VARCHAR NOT NULL, path VARCHAR NOT NULL, root VARCHAR, matched_by VARCHAR,
        run_id VARCHAR
    );
    CREATE TABLE media_probes (
        video_id VARCHAR NOT NULL, path VARCHAR, sha256 VARCHAR, size_bytes BIGINT,
        container VARCHAR, video_codec VARCHAR, audio_codec VARCHAR, width INTEGER,
        height INTEGER, rotation INTEGER, fps DOUBLE, variable_fps BOOLEAN, duration_s DOUBLE,
        has_audio BOOLEAN, run_id VARCHAR
    );
    CREATE TABLE media_outputs (
        video_id VARCHAR NOT NULL, input_sha256 VARCHAR, settings_sha256 VARCHAR,
        output_path VARCHAR, poster_path VARCHAR, frames_dir VARCHAR, frames INTEGER,
        width INTEGER, height INTEGER, fps DOUBLE, duration_s DOUBLE, run_id VARCHAR
    );
    """,
    """
    CREATE TABLE ls_projects (
        base_url VARCHAR, annotator VARCHAR, project_id INTEGER, title VARCHAR,
        config_sha256 VARCHAR, run_id VARCHAR
    );
    CREATE TABLE ls_tasks (
        base_url VARCHAR, project_id INTEGER, ls_task_id INTEGER, feed_id VARCHAR,
        feed_version INTEGER, annotator VARCHAR, run_id VARCHAR
    );
    CREATE TABLE tasks (
        task_id VARCHAR NOT NULL, version INTEGER NOT NULL, author VARCHAR,
        feed_id VARCHAR, base_feed_version INTEGER, feed_version INTEGER,
        tier VARCHAR, subcategory VARCHAR, eval_type VARCHAR, instruction VARCHAR,
        options JSON, eval_config JSON, feed_edits VARCHAR, status VARCHAR, reasons JSON,
        ls_project_id INTEGER, ls_task_id INTEGER, ls_annotation_id INTEGER,
        annotation_sha256 VARCHAR, lead_time_s DOUBLE, annotated_at TIMESTAMP,
        run_id VARCHAR, created_at TIMESTAMP
    );
    """,
    """
    CREATE TABLE llm_calls (
        endpoint VARCHAR, model VARCHAR, prompt_sha256 VARCHAR, sample INTEGER,
        temperature DOUBLE, response VARCHAR, run_id VARCHAR, created_at TIMESTAMP
    );
    CREATE TABLE shortcut_verdicts (
        task_id VARCHAR, task_version INTEGER, verdict VARCHAR, rule VARCHAR,
        answers JSON, run_id VARCHAR, created_at TIMESTAMP
    );
    """,
    """
    CREATE VIEW latest_tasks AS
    SELECT * FROM tasks QUALIFY version = max(version) OVER (PARTITION BY task_id);
    """,
]


@cache
def code_version() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5, check=True,
        )
        return f"{__version__}+{out.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        return __version__


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class Run:
    run_id: str
    stage: str
    params: dict[str, Any]
    counts: dict[str, Any] = field(default_factory=dict)


class Catalog:
    """An open catalog file with its schema brought up to date."""

    def __init__(self, path: Path | str, read_only: bool = False) -> None:
        self.path = Path(path)
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise FileNotFoundError(f"catalog {self.path} does not exist: run `curate ingest` first")
        self.con = duckdb.connect(str(self.path), read_only=read_only)
        if not read_only:
            self._migrate()

    def close(self) -> None:
        self.con.close()

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

    def _migrate(self) -> None:
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER, applied_at TIMESTAMP)"
        )
        current = self.schema_version
        for version, sql in enumerate(MIGRATIONS, start=1):
            if version <= current:
                continue
            self.con.execute("BEGIN TRANSACTION")
            self.con.execute(sql)
            self.con.execute("INSERT INTO schema_migrations VALUES (?, ?)", [version, now()])
            self.con.execute("COMMIT")

    # -- runs -------------------------------------------------------------

    def start_run(self, stage: str, params: dict[str, Any]) -> Run:
        run_id = f"{stage}-{now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        # The file lock admits one writer, so a run of this stage still marked running
        # was killed: say so rather than leave it looking alive.
        self.con.execute("UPDATE runs SET status = 'interrupted' WHERE stage = ? "
                         "AND status = 'running'", [stage])
        self.con.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, NULL, 'running', NULL)",
            [run_id, stage, json.dumps(params, ensure_ascii=False, sort_keys=True, default=str),
             code_version(), now()],
        )
        return Run(run_id, stage, params)

    def finish_run(self, run: Run, status: str = "ok") -> None:
        self.con.execute(
            "UPDATE runs SET finished_at = ?, status = ?, counts = ? WHERE run_id = ?",
            [now(), status, json.dumps(run.counts, ensure_ascii=False, sort_keys=True), run.run_id],
        )

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    @contextmanager
    def staged(self, **tables: Any) -> Iterator[None]:
        """Arrow tables visible to SQL under the given names for the length of the block."""
        for name, table in tables.items():
            self.con.register(name, table)
        try:
            yield
        finally:
            for name in tables:
                self.con.unregister(name)

    def rows(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
