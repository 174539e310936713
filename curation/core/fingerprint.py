"""The content fingerprint of a catalog video: what decides, on re-ingest, whether a
record changed.

It is computed in SQL over the stored columns (everything but where the record sat in
its file and which run loaded it) plus the video's comments in `comment_id` order, so
the per-record and the columnar ingest give the same value by construction. Catalog
migration 15 recomputed stored rows with the SQL `record_hash_select` gave then, kept
there as text: changing the fingerprint here needs a new migration that recomputes it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from curation.core.video_columns import names


def json_sha256(value: Any, *, ensure_ascii: bool = True) -> str:
    """The sha256 (hex) of `value` as JSON with sorted keys: the one way settings and answers are
    fingerprinted. `ensure_ascii` stays as each caller first stored it, so stored hashes keep matching."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=ensure_ascii).encode()).hexdigest()


# in the table's order, which the stored fingerprints depend on (curation/core/video_columns.py)
HASHED_VIDEO_COLUMNS = names(hashed=True)
HASHED_COMMENT_COLUMNS = ("comment_id", "parent_id", "author", "text", "like_count", "time_s",
                          "created_at")


def record_hash_expr(row: str, extra: str | None = None, thread: str = "NULL") -> str:
    """SQL for the fingerprint of the row `row` given its `extra` (the row's own column if
    None) and its comment thread (a list of HASHED_COMMENT_COLUMNS structs, NULL for none)."""
    fields = ", ".join(f"{row}.{c}" for c in HASHED_VIDEO_COLUMNS)
    extra = extra or f"CAST({row}.extra AS VARCHAR)"
    # an unnamed struct prints as a JSON array: the values by position, without the field
    # names, which would double the bytes to hash
    return f"sha256(to_json(row({fields}, {extra}, {thread})))"


def record_hash_select(videos: str, comments: str, columns: str = "v.video_id", known: str | None = None) -> str:
    """`SELECT <columns>, record_hash` for every row `v` of the relation `videos`; a row
    whose column `known` is not null has its fingerprint there already."""
    comment_fields = ", ".join(HASHED_COMMENT_COLUMNS)
    computed = record_hash_expr("v", thread="t.thread")
    return f"""
        SELECT {columns}, {f"coalesce(v.{known}, {computed})" if known else computed} AS record_hash
        FROM {videos} v LEFT JOIN (
            SELECT video_id, list(struct_pack({comment_fields}) ORDER BY comment_id) AS thread
            FROM {comments} WHERE video_id IN (SELECT video_id FROM {videos}) GROUP BY video_id
        ) t USING (video_id)"""

