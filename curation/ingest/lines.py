"""JSON Lines through a mapping: each line checked as columns, and only the lines the
column rules are not certain of read one by one.

Both paths end in the same merge, and Python writes the unmapped fields (`extra`) in both,
so a line gives the same row whichever path it took. `columnar=False` sends every line through the per-record path (the
reference the tests compare with).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import duckdb
import pyarrow as pa

from curation.core.catalog import sql_literal
from curation.core.progress import note
from curation.core.stage import StageRun
from curation.core.storable import shown_name
from curation.ingest.columnar import fast_rows_sql
from curation.ingest.generic import Mapping, source_record, unmapped
from curation.ingest.load import (
    CANDIDATE_COLUMNS,
    IngestResult,
    drop_scratch,
    ingest_connection,
    merge_candidates,
    normalise_records,
)
from curation.ingest.readers import BLANK_LINE_RE2, jsonl_chunks, jsonl_lines, parse_json_line
from curation.ingest.records import SourceRecord, extra_json

SlowLine = tuple[int, str, str | None]  # ord, raw_ref, text (None: not UTF-8)


def merge_jsonl(run: StageRun, mapping: Mapping, path: Path, *, max_field_bytes: int,
                columnar: bool = True) -> IngestResult:
    sql = fast_rows_sql(mapping, mapping.source, "jsonl_lines", max_field_bytes) if columnar else None
    with ingest_connection(run) as con:
        try:
            read, slow, invalid, extras = _check_lines(con, mapping, path, sql)
            run.counts["certain_as_columns"] = read - len(slow)

            def records() -> Iterator[tuple[int, SourceRecord]]:
                for ord_, ref, text in slow:
                    raw = invalid[ord_] if text is None else text.encode().rstrip(b"\r\n")
                    yield ord_, source_record(mapping, parse_json_line(ref, raw))

            done = normalise_records(run, mapping.source, records(), max_field_bytes, total=len(slow))
            con.register("slow_rows", done.videos)
            con.register("fast_extra", extras)
            con.register("candidate_comments", done.comments)
            columns = ", ".join(CANDIDATE_COLUMNS)
            in_fast = {"record_id": "record_native", "extra": "e.extra", "known_hash": "record_hash"}
            fast_columns = ", ".join(f"{in_fast.get(c, c)} AS {c}" for c in CANDIDATE_COLUMNS)
            fast_part = (f"SELECT {fast_columns} FROM fast LEFT JOIN fast_extra e USING (ord) WHERE ok UNION ALL "
                         if sql is not None else "")
            con.execute(f"CREATE OR REPLACE TEMP VIEW candidates AS {fast_part} SELECT {columns} FROM slow_rows")
            return merge_candidates(run, con, mapping.source, file_key=path.name, read=read,
                                    rejects=done.rejects, raws_of=lambda ords: _raws(path, ords))
        finally:
            drop_scratch(con, tables=("fast",), temp_views=("candidates", "jsonl_lines"),
                         views=("jsonl_file", "slow_rows", "fast_extra", "candidate_comments"))


def _check_lines(con: duckdb.DuckDBPyConnection, mapping: Mapping, path: Path, sql: str | None
                 ) -> tuple[int, list[SlowLine], dict[int, bytes], pa.Table]:
    """A chunk of lines at a time: the rows certain as columns go to the temp table `fast`,
    the others come back for the per-record rules. Returns the lines read, those others, the
    bytes of lines that are not UTF-8, and the `extra` of certain lines that have one."""
    checks = sql if sql is not None else \
        "SELECT ord, false AS ok, false AS has_extra, NULL::VARCHAR AS record_hash FROM jsonl_lines"
    empty = pa.table({"ord": pa.array([], pa.int64()), "text": pa.array([], pa.large_string())})
    read, slow, invalid = 0, [], {}
    extra_ords: list[int] = []
    extra_texts: list[str | None] = []
    for number, (table, chunk_invalid) in enumerate(chain([(empty, {})], jsonl_chunks(path))):
        invalid.update(chunk_invalid)
        con.register("jsonl_file", table)
        con.execute(f"""CREATE OR REPLACE TEMP VIEW jsonl_lines AS
            SELECT ord, {sql_literal(path.name + ':')} || ord AS raw_ref, text FROM jsonl_file
            WHERE text IS NULL OR NOT regexp_full_match(text, {sql_literal(BLANK_LINE_RE2)})""")
        if number == 0:  # the empty table first: `fast` gets its columns even for an empty file
            con.execute(f"CREATE OR REPLACE TEMP TABLE fast AS {checks}")
            continue
        read += con.execute(f"INSERT INTO fast {checks}").fetchall()[0][0]  # DuckDB answers the row count
        # only this chunk's rows of `fast` (line numbers only grow), not every chunk's so far
        lines = con.execute("""
            SELECT l.ord, l.raw_ref, l.text, f.ok FROM jsonl_lines l JOIN fast f USING (ord)
            WHERE f.ord >= ? AND (NOT f.ok OR f.has_extra) ORDER BY l.ord""",
                            [table["ord"][0].as_py() if len(table) else 0]).fetchall()
        unread: list[int] = []
        # unmapped fields are written by Python in both paths (sorted keys, the last of a
        # repeated key), so catalogs loaded before the columnar path keep their fingerprints
        for ord_, ref, text, ok in lines:
            if ok:
                try:
                    extra_texts.append(extra_json(unmapped(mapping, json.loads(text))))
                    extra_ords.append(ord_)
                    continue
                except (ValueError, RecursionError):  # NaN spelled `nan`: DuckDB reads it, Python not
                    unread.append(ord_)
            slow.append((ord_, ref, text))
        if unread:
            con.execute("UPDATE fast SET ok = false WHERE list_contains(?, ord)", [unread])
        drop_scratch(con, temp_views=("jsonl_lines",), views=("jsonl_file",))
        del table, lines  # the next chunk reuses its bytes
        note(f"{shown_name(path.name)}: {read:,} lines read"
             + (f", {read - len(slow):,} certain as columns" if sql else ""))
    extras = pa.table({"ord": pa.array(extra_ords, pa.int64()), "extra": pa.array(extra_texts, pa.string())})
    return read, slow, invalid, extras


def _raws(path: Path, ords: list[int]) -> dict[int, bytes]:
    """The bytes of the given lines (duplicates' rejects), read again from the file."""
    wanted, found = set(ords), {}
    for number, raw in jsonl_lines(path) if wanted else ():
        if number in wanted:
            found[number] = raw
            if len(found) == len(wanted):
                break
    return found
