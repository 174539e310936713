"""The ingest loop every adapter shares: normalise, reject with a reason, merge.

Everything a run changes is written in one transaction at the end, so a killed
ingest leaves the catalog exactly as it was. Unchanged records (same content
hash) are not touched, which makes re-ingesting a file a no-op.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from curation.core.progress import note
from curation.core.stage import StageRun
from curation.ingest.records import RecordError, SourceRecord, normalise_record

VIDEO_COLUMNS = (
    "video_id", "source", "native_id", "title", "description", "hashtags", "keywords",
    "author_name", "author_bio", "author_verified", "like_count", "comment_count",
    "collect_count", "share_count", "duration_s", "published_at", "label", "category",
    "synthetic", "media_path", "raw_ref", "ingest_run", "extra", "record_hash",
)
COMMENT_COLUMNS = ("comment_id", "video_id", "parent_id", "author", "text", "like_count",
                   "time_s", "created_at", "ingest_run")

_VIDEO_TYPES = {
    "hashtags": pa.list_(pa.string()), "keywords": pa.list_(pa.string()),
    "author_verified": pa.bool_(), "synthetic": pa.bool_(), "duration_s": pa.float64(),
    "published_at": pa.timestamp("us"), "like_count": pa.int64(), "comment_count": pa.int64(),
    "collect_count": pa.int64(), "share_count": pa.int64(),
}
_COMMENT_TYPES = {"like_count": pa.int64(), "time_s": pa.float64(),
                  "created_at": pa.timestamp("us")}


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
    return reason.split(":")[0].split(" (")[0]


def merge_records(run: StageRun, source: str, records: Iterable[SourceRecord], *, file_key: str,
                  max_field_bytes: int, total: int | None = None) -> IngestResult:
    """Normalise `records` and merge them into the run's catalog (a dry run writes nothing).

    `file_key` names the input file; rejects are kept per (stage, source, file) so that a
    re-run replaces the rejects of its own file and no other.
    """
    videos: list[dict[str, Any]] = []
    comments: list[dict[str, Any]] = []
    rejects: list[tuple[str, str, bytes, str | None]] = []
    first_seen: dict[str, str] = {}
    read = 0
    for record in run.progress(records, f"ingest {source}", total):
        read += 1
        try:
            row, row_comments = normalise_record(source, record, max_field_bytes)
            if row["video_id"] in first_seen:
                raise RecordError(
                    f"duplicate video_id {row['video_id']} (first at {first_seen[row['video_id']]})")
        except RecordError as exc:
            native_id = (record.fields or {}).get("native_id")
            record_id = f"{source}/{native_id}" if native_id not in (None, "") else None
            rejects.append((record.raw_ref, str(exc), record.raw, record_id))
            continue
        first_seen[row["video_id"]] = record.raw_ref
        videos.append(row)
        comments.extend(row_comments)

    by_reason: dict[str, int] = {}
    for _, reason, _, _ in rejects:
        by_reason[_reason_kind(reason)] = by_reason.get(_reason_kind(reason), 0) + 1
    result = IngestResult(run.run_id, read, len(videos), len(rejects), rejects_by_reason=by_reason)
    run.counts.update(read=read, accepted=result.accepted, rejected=result.rejected,
                      rejects_by_reason=by_reason)
    if run.dry_run:
        return result

    catalog = run.db
    for row in videos:
        row["ingest_run"] = run.run_id
    for row in comments:
        row["ingest_run"] = run.run_id
    incoming = _table(videos, VIDEO_COLUMNS, _VIDEO_TYPES)
    incoming_comments = _table(comments, COMMENT_COLUMNS, _COMMENT_TYPES)
    reject_table = pa.table({
        "raw_ref": pa.array([r[0] for r in rejects], pa.string()),
        "reason": pa.array([r[1] for r in rejects], pa.string()),
        "raw": pa.array([r[2] for r in rejects], pa.binary()),
        "record_id": pa.array([r[3] for r in rejects], pa.string()),
    })
    con = catalog.con
    note(f"merging {len(videos):,} records and {len(rejects):,} rejects into {catalog.path}")
    with catalog.staged(incoming=incoming, incoming_comments=incoming_comments,
                        incoming_rejects=reject_table), catalog.transaction():
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
        catalog.insert_staged("videos", "incoming", VIDEO_COLUMNS,
                              "WHERE video_id IN (SELECT video_id FROM changed)")
        catalog.insert_staged("comments", "incoming_comments", COMMENT_COLUMNS,
                              "WHERE video_id IN (SELECT video_id FROM changed)")
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
        con.execute("DROP TABLE changed")
    result.new, result.updated = int(new), int(updated)
    result.unchanged = result.accepted - result.new - result.updated
    run.counts.update(new=result.new, updated=result.updated, unchanged=result.unchanged)
    return result
