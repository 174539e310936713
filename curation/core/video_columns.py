"""The columns of the catalog's `videos` table, stated once: each column's kind, whether a source record gives it
(ingest's normalised fields), whether it is part of a record's fingerprint, whether the app shows it, and whether
ingest writes it. Ingest's field lists and Arrow types, the fingerprint and the visible view are derived from
`VIDEO_TABLE`; `tests/core/test_video_columns.py` checks it against the table the migrations make (the migrations
themselves are SQL text, never edited: a new column is a new migration plus a line here)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

# kinds: what a value is, and its Arrow type where it is not a string
TEXT, LIST, COUNT, FLAG, SECONDS, TIME, ID, REF, JSON = ("text", "list", "count", "flag", "seconds", "time", "id",
                                                          "ref", "json")
ARROW_TYPES = {LIST: pa.list_(pa.string()), COUNT: pa.int64(), FLAG: pa.bool_(), SECONDS: pa.float64(),
               TIME: pa.timestamp("us")}


@dataclass(frozen=True)
class VideoColumn:
    name: str
    kind: str
    from_record: bool = True   # a source record gives it (an adapter's or a mapping's target)
    hashed: bool = True        # part of the record's fingerprint (a change makes the record "updated")
    visible: bool = False      # the app shows it (caption, hashtags, author, counts, length)
    ingested: bool = True      # ingest writes it


VIDEO_TABLE: tuple[VideoColumn, ...] = (
    VideoColumn("video_id", ID, from_record=False, visible=True),
    VideoColumn("source", ID, from_record=False),
    VideoColumn("native_id", ID),
    VideoColumn("title", TEXT, visible=True),
    VideoColumn("description", TEXT, visible=True),
    VideoColumn("hashtags", LIST, visible=True),
    VideoColumn("keywords", LIST),
    VideoColumn("author_name", TEXT, visible=True),
    VideoColumn("author_bio", TEXT, visible=True),
    VideoColumn("author_verified", FLAG),
    VideoColumn("like_count", COUNT, visible=True),
    VideoColumn("comment_count", COUNT, visible=True),
    VideoColumn("collect_count", COUNT, visible=True),
    VideoColumn("share_count", COUNT, visible=True),
    VideoColumn("duration_s", SECONDS, visible=True),
    VideoColumn("published_at", TIME),
    VideoColumn("label", TEXT),
    VideoColumn("category", TEXT),
    VideoColumn("synthetic", FLAG),
    VideoColumn("media_path", TEXT),
    VideoColumn("raw_ref", REF, from_record=False, hashed=False),
    VideoColumn("run_id", REF, from_record=False, hashed=False),
    VideoColumn("extra", JSON, from_record=False, hashed=False),
    VideoColumn("record_hash", REF, from_record=False, hashed=False),
    VideoColumn("metadata_missing", FLAG, from_record=False, hashed=False, ingested=False),
)


def names(**facets: bool | str) -> tuple[str, ...]:
    """The columns with these facets, in the table's order: `names(kind=TEXT, from_record=True)`."""
    return tuple(c.name for c in VIDEO_TABLE if all(getattr(c, k) == v for k, v in facets.items()))
