"""The videos table's columns are stated once (curation/core/video_columns.py, issue 39): the spec is the table
the migrations make, column for column and type for type, and ingest's fields, the fingerprint and the visible
view are read from it."""

from __future__ import annotations

from curation.core.catalog import Catalog
from curation.core.fingerprint import HASHED_VIDEO_COLUMNS
from curation.core.video_columns import COUNT, FLAG, ID, JSON, LIST, REF, SECONDS, TEXT, TIME, VIDEO_TABLE
from curation.corpus.visible import VISIBLE_COLUMNS
from curation.ingest.load import VIDEO_COLUMNS
from curation.ingest.records import VIDEO_FIELDS

DUCKDB_TYPES = {TEXT: "VARCHAR", ID: "VARCHAR", REF: "VARCHAR", LIST: "VARCHAR[]", COUNT: "BIGINT",
                FLAG: "BOOLEAN", SECONDS: "DOUBLE", TIME: "TIMESTAMP", JSON: "JSON"}


def test_the_spec_is_the_table_the_migrations_make(tmp_path):
    with Catalog(tmp_path / "c.duckdb") as cat:
        made = [(name, kind) for name, kind, *_ in cat.con.execute("DESCRIBE videos").fetchall()]
    assert made == [(c.name, DUCKDB_TYPES[c.kind]) for c in VIDEO_TABLE]


def test_what_lists_video_columns_is_derived_from_the_spec():
    assert tuple(c.name for c in VIDEO_TABLE if c.ingested) == VIDEO_COLUMNS
    assert tuple(c.name for c in VIDEO_TABLE if c.hashed) == HASHED_VIDEO_COLUMNS
    assert tuple(c.name for c in VIDEO_TABLE if c.visible) == VISIBLE_COLUMNS
    assert set(VIDEO_FIELDS) == {c.name for c in VIDEO_TABLE if c.from_record}
    # what a record gives is hashed: an edit of any of it is an update, never unchanged
    assert set(VIDEO_FIELDS) <= set(HASHED_VIDEO_COLUMNS)
