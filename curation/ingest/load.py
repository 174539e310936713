"""The ingest end every adapter shares: normalised rows in, duplicates out, merge.

Adapters hand over candidate rows (each with `ord`, its place in the file) and the
records already rejected with a reason. Here the first of several rows with one
video id wins, the content fingerprint is computed, and everything a run changes is
written in one transaction at the end, so a killed ingest leaves the catalog exactly
as it was. Unchanged records (same fingerprint) are not touched, which makes
re-ingesting a file a no-op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from curation.core.catalog import one_row, sql_literal
from curation.core.fingerprint import record_hash_select
from curation.core.progress import note
from curation.core.stage import StageRun
from curation.core.storable import storable
from curation.core.video_columns import ARROW_TYPES, VIDEO_TABLE, names
from curation.ingest.records import RecordError, SourceRecord, normalise_record

VIDEO_COLUMNS = names(ingested=True)  # curation/core/video_columns.py
# `known_hash`: a row's fingerprint where its path already computed it (else null)
CANDIDATE_COLUMNS = ("ord", "record_id", *(c for c in VIDEO_COLUMNS if c not in ("run_id", "record_hash")),
                     "known_hash")
COMMENT_COLUMNS = ("comment_id", "video_id", "parent_id", "author", "text", "like_count",
                   "time_s", "created_at", "run_id")

_VIDEO_TYPES = {"ord": pa.int64(), **{c.name: ARROW_TYPES[c.kind] for c in VIDEO_TABLE if c.kind in ARROW_TYPES
                                       and c.name in VIDEO_COLUMNS}}
_COMMENT_TYPES = {"like_count": pa.int64(), "time_s": pa.float64(),
                  "created_at": pa.timestamp("us"), "ord": pa.int64()}
Reject = tuple[str, str, bytes, str | None]  # raw_ref, reason, raw bytes, record id


@dataclass
class IngestResult:
    run_id: str | None
    read: int
    accepted: int
    rejected: int
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    rejects_by_reason: dict[str, int] | None = None
    first_rejected: dict[str, str] = field(default_factory=dict)  # reason kind -> where it first occurred
    warnings: list[str] = field(default_factory=list)  # one line each: what loaded, but not as written

    def reject_lines(self) -> list[str]:
        """A line per kind of reject, most frequent first, with where it first occurred."""
        return [f"rejected {count:,}: {kind}" + (f" (first at {self.first_rejected[kind]})"
                                                 if kind in self.first_rejected else "")
                for kind, count in sorted((self.rejects_by_reason or {}).items(), key=lambda x: -x[1])]

    def summary(self) -> str:
        line = f"{self.read:,} read, {self.accepted:,} accepted, {self.rejected:,} rejected"
        if self.run_id is None:
            return line + " (dry run: nothing written)"
        changed = self.new + self.updated
        return (f"{line}; {changed:,} changed ({self.new:,} new, {self.updated:,} updated, "
                f"{self.unchanged:,} unchanged)")


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...],
           types: dict[str, pa.DataType]) -> pa.Table:
    arrays = {c: pa.array([r[c] for r in rows], type=types.get(c, pa.string())) for c in columns}
    return pa.table(arrays)


def _reason_kind(reason: str) -> str:
    """The reason without record-specific detail, for the per-reason tally."""
    if reason.startswith("duplicate video_id "):
        return "duplicate video_id"
    return reason.split(":")[0].split(" (")[0]


def record_id_of(source: str, record: SourceRecord) -> str | None:
    """The id a record would have, as the catalog can store it (a lone surrogate escaped): what
    `curate explain` finds its reject by."""
    native_id = (record.fields or {}).get("native_id")
    return storable(f"{source}/{native_id}") if native_id not in (None, "") else None


@dataclass
class Normalised:
    """What the per-record path makes of a stream of records."""

    videos: pa.Table  # CANDIDATE_COLUMNS
    comments: pa.Table  # with the `ord` of their row
    rejects: list[Reject]
    raws: dict[int, bytes]  # the accepted records' bytes by `ord`, for a duplicate's reject
    read: int


def normalise_records(run: StageRun, source: str, records: Iterable[tuple[int, SourceRecord]],
                      max_field_bytes: int, total: int | None = None) -> Normalised:
    """The per-record path: every record through `normalise_record`, rejected with the reason."""
    videos: list[dict[str, Any]] = []
    comments: list[dict[str, Any]] = []
    rejects: list[Reject] = []
    raws: dict[int, bytes] = {}
    read = 0
    for ord_, record in run.progress(records, f"ingest {source}", total):
        read += 1
        try:
            row, row_comments = normalise_record(source, record, max_field_bytes)
        except RecordError as exc:
            # every text a reject keeps must be storable, or the run could not record it
            rejects.append((storable(record.raw_ref), storable(str(exc)), record.raw, record_id_of(source, record)))
            continue
        row.update(ord=ord_, record_id=record_id_of(source, record), known_hash=None)
        raws[ord_] = record.raw
        videos.append(row)
        comments.extend({**c, "ord": ord_} for c in row_comments)
    return Normalised(_table(videos, CANDIDATE_COLUMNS, _VIDEO_TYPES),
                      _table(comments, ("ord", *COMMENT_COLUMNS[:-1]), _COMMENT_TYPES), rejects, raws, read)


def merge_records(run: StageRun, source: str, records: Iterable[SourceRecord], *, file_key: str,
                  max_field_bytes: int, total: int | None = None) -> IngestResult:
    """Normalise `records` one by one and merge them (a dry run writes nothing)."""
    done = normalise_records(run, source, enumerate(records, 1), max_field_bytes, total)
    with ingest_connection(run) as con:
        con.register("candidates", done.videos)
        con.register("candidate_comments", done.comments)
        try:
            return merge_candidates(run, con, source, file_key=file_key, read=done.read, rejects=done.rejects,
                                    raws_of=lambda ords: {o: done.raws[o] for o in ords})
        finally:
            drop_scratch(con, views=("candidates", "candidate_comments"))


@contextmanager
def ingest_connection(run: StageRun) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog's connection, or a scratch one for a dry run (which still counts)."""
    if run.dry_run:
        con = duckdb.connect()
        try:
            yield con
        finally:
            con.close()
        return
    con = run.db.con
    con.complete()  # a half-read result from an earlier execute() would block register()
    # every ingest query orders what it needs by `ord`, so DuckDB may write rows in any order
    # (about 15% off the write of a large merge)
    con.execute("SET preserve_insertion_order = false")
    try:
        yield con
    finally:
        with suppress(duckdb.Error):
            con.execute("RESET preserve_insertion_order")


def merge_candidates(run: StageRun, con: duckdb.DuckDBPyConnection, source: str, *, file_key: str, read: int,
                     rejects: list[Reject], raws_of: Callable[[list[int]], dict[int, bytes]]) -> IngestResult:
    """Merge the relations `candidates` (CANDIDATE_COLUMNS) and `candidate_comments` (with
    the `ord` of their row) into the catalog; `rejects` are those already decided.

    `file_key` names the input file; rejects are kept per (stage, source, file) so that a
    re-run replaces the rejects of its own file and no other.
    """
    temps = ("ranked", "incoming_comments", "changed")
    try:
        con.execute("""CREATE OR REPLACE TEMP TABLE ranked AS SELECT ord, video_id, raw_ref, record_id,
                row_number() OVER (PARTITION BY video_id ORDER BY ord) AS n,
                first_value(raw_ref) OVER (PARTITION BY video_id ORDER BY ord) AS first_ref
                FROM candidates""")
        duplicates = con.execute("SELECT ord, raw_ref, video_id, first_ref, record_id FROM ranked "
                                 "WHERE n > 1 ORDER BY ord").fetchall()
        raws = raws_of([d[0] for d in duplicates])
        rejects = rejects + [(ref, f"duplicate video_id {video_id} (first at {first})", raws[o], record_id)
                             for o, ref, video_id, first, record_id in duplicates]
        accepted = int(one_row(con, "SELECT count(*) FROM ranked WHERE n = 1")[0])
        by_reason: dict[str, int] = {}
        first_at: dict[str, str] = {}
        for ref, reason, _, _ in rejects:
            by_reason[_reason_kind(reason)] = by_reason.get(_reason_kind(reason), 0) + 1
            first_at.setdefault(_reason_kind(reason), ref)
        result = IngestResult(run.run_id, read, accepted, len(rejects), rejects_by_reason=by_reason,
                              first_rejected=first_at)
        run.counts.update(read=read, accepted=result.accepted, rejected=result.rejected,
                          rejects_by_reason=by_reason)
        if run.run_id is None:  # a dry run: counted, nothing written
            return result
        con.execute("""CREATE OR REPLACE TEMP TABLE incoming_comments AS
                SELECT c.* EXCLUDE (ord), ? AS run_id FROM candidate_comments c
                WHERE c.ord IN (SELECT ord FROM ranked WHERE n = 1)""", [run.run_id])
        # one row per video: a duplicate's `ord` is not among the first ones
        first = "WHERE ord IN (SELECT ord FROM ranked WHERE n = 1)" if duplicates else ""
        # a view, not a copy: the merge reads it twice, the second time for the changed rows only
        con.execute(f"""CREATE OR REPLACE TEMP VIEW incoming AS
                WITH accepted AS (SELECT * EXCLUDE (ord, record_id), {sql_literal(run.run_id)} AS run_id
                                  FROM candidates {first})
                {record_hash_select('accepted', 'incoming_comments', columns='v.* EXCLUDE (known_hash)',
                                    known='known_hash')}""")
        _merge(run, con, source, file_key, rejects, result)
        return result
    finally:
        drop_scratch(con, tables=temps, temp_views=("incoming",))


def drop_scratch(con: duckdb.DuckDBPyConnection, *, tables: tuple[str, ...] = (),
                 views: tuple[str, ...] = (), temp_views: tuple[str, ...] = ()) -> None:
    """Temp tables and registered Arrow views out of the way; after a failed statement the
    transaction refuses, and its rollback removes them anyway."""
    for name in views:
        with suppress(duckdb.Error):
            con.unregister(name)
    for name in temp_views:
        with suppress(duckdb.Error):
            con.execute(f"DROP VIEW IF EXISTS {name}")
    for name in tables:
        with suppress(duckdb.Error):
            con.execute(f"DROP TABLE IF EXISTS {name}")


def _loaded_from_other_files(run: StageRun, con: duckdb.DuckDBPyConnection, source: str, file_key: str,
                             result: IngestResult) -> None:
    """Ids of this file that another file of the source loaded before: the catalog keeps one record per id
    (this file's, where they differ), so a corpus split over files that overlap is said, with both files.
    A stub an imported release made (no raw_ref) was loaded from no file."""
    found = con.execute("""
        SELECT r.video_id, v.raw_ref, r.raw_ref, count(*) OVER () FROM ranked r JOIN videos v USING (video_id)
        WHERE r.n = 1 AND v.source = ? AND v.raw_ref IS NOT NULL AND NOT starts_with(v.raw_ref, ? || ':')
        ORDER BY r.ord LIMIT 3""", [source, file_key]).fetchall()
    if not found:
        return
    total = found[0][3]
    examples = "; ".join(f"{video_id} at {before} and {here}" for video_id, before, here, _ in found)
    more = f" and {total - len(found):,} more" if total > len(found) else ""
    result.warnings.append(f"{total:,} id{'s' if total > 1 else ''} of {file_key} {'were' if total > 1 else 'was'} "
                           f"loaded before from another file of {source} (the catalog keeps one record per id: "
                           f"this file's where they differ): {examples}{more}")
    run.counts["loaded_from_other_files"] = total


def _merge(run: StageRun, con: duckdb.DuckDBPyConnection, source: str, file_key: str,
           rejects: list[Reject], result: IngestResult) -> None:
    catalog = run.db
    reject_table = pa.table({
        "raw_ref": pa.array([r[0] for r in rejects], pa.string()),
        "reason": pa.array([r[1] for r in rejects], pa.string()),
        "raw": pa.array([r[2] for r in rejects], pa.binary()),
        "record_id": pa.array([r[3] for r in rejects], pa.string()),
    })
    note(f"merging {result.accepted:,} records and {len(rejects):,} rejects into {catalog.path}")
    with catalog.staged(incoming_rejects=reject_table), catalog.transaction():
        _loaded_from_other_files(run, con, source, file_key, result)
        con.execute("""
                CREATE TEMP TABLE changed AS
                SELECT i.video_id, v.video_id IS NULL AS is_new FROM incoming i
                LEFT JOIN videos v USING (video_id)
                WHERE v.video_id IS NULL OR v.record_hash IS DISTINCT FROM i.record_hash""")
        new, updated = con.execute(
            "SELECT count(*) FILTER (is_new), count(*) FILTER (NOT is_new) FROM changed"
        ).fetchone() or (0, 0)
        con.execute("DELETE FROM videos WHERE video_id IN (SELECT video_id FROM changed)")
        con.execute("DELETE FROM comments WHERE video_id IN (SELECT video_id FROM changed)")
        # when every row changed (a first load), no need to pick the changed ones out
        everything = new + updated == result.accepted
        catalog.insert_staged("videos", "incoming", VIDEO_COLUMNS,
                              "" if everything else "WHERE video_id IN (SELECT video_id FROM changed)")
        catalog.insert_staged("comments", "incoming_comments", COMMENT_COLUMNS,
                              "WHERE video_id IN (SELECT video_id FROM changed)")
        # videos and comments have no key constraint (migration 16): the stage runner checks the rows
        # this run wrote before it commits (catalog.UNIQUE_KEYS)
        # Rejects mirror the file's current state: ones that no longer occur go,
        # ones already recorded keep their original run id.
        con.execute("""
                DELETE FROM rejects r WHERE r.stage = ? AND r.source = ?
                  AND starts_with(r.raw_ref, ? || ':') AND NOT EXISTS (
                    SELECT 1 FROM incoming_rejects i
                    WHERE i.raw_ref = r.raw_ref AND i.reason = r.reason AND i.raw = r.raw)""",
                    [run.stage, source, file_key])
        con.execute("""
                INSERT INTO rejects (run_id, stage, source, raw_ref, record_id, reason, raw)
                SELECT ?, ?, ?, i.raw_ref, i.record_id, i.reason, i.raw
                FROM incoming_rejects i WHERE NOT EXISTS (
                    SELECT 1 FROM rejects r WHERE r.stage = ? AND r.source = ? AND r.raw_ref = i.raw_ref)""",
                    [run.run_id, run.stage, source, run.stage, source])
    result.new, result.updated = int(new), int(updated)
    result.unchanged = result.accepted - result.new - result.updated
    run.counts.update(new=result.new, updated=result.updated, unchanged=result.unchanged)
