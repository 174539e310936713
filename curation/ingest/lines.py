"""JSON Lines through a mapping: each line checked as columns, and only the lines the
column rules are not certain of read one by one.

Both paths end in the same merge, and the unmapped fields (`extra`) of any line DuckDB
can read are cut from the line by DuckDB in both, so a line gives the same row whichever
path it took. `columnar=False` sends every line through the per-record path (the
reference the tests compare with).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import duckdb
import pyarrow as pa

from curation.core.progress import note
from curation.core.stage import StageRun
from curation.ingest.columnar import extra_sql, fast_rows_sql, sql_literal
from curation.ingest.generic import Mapping, source_record
from curation.ingest.load import (
    CANDIDATE_COLUMNS,
    IngestResult,
    drop_scratch,
    ingest_connection,
    merge_candidates,
    normalise_records,
)
from curation.ingest.readers import BLANK_LINE_RE2, jsonl_chunks, jsonl_lines, parse_json_line
from curation.ingest.records import SourceRecord

SlowLine = tuple[int, str, str | None, str | None, bool]  # ord, raw_ref, text, DuckDB's extra, DuckDB reads it


def merge_jsonl(run: StageRun, mapping: Mapping, path: Path, *, max_field_bytes: int,
                columnar: bool = True) -> IngestResult:
    sql = fast_rows_sql(mapping, mapping.source, "jsonl_lines", max_field_bytes) if columnar else None
    with ingest_connection(run) as con:
        try:
            read, slow, invalid = _check_lines(con, mapping, path, sql)
            run.counts["certain_as_columns"] = read - len(slow)

            def records() -> Iterator[tuple[int, SourceRecord]]:
                for ord_, ref, text, _, _ in slow:
                    raw = invalid[ord_] if text is None else text.encode().rstrip(b"\r\n")
                    yield ord_, source_record(mapping, parse_json_line(ref, raw))

            videos, comments, rejects, _ = normalise_records(run, mapping.source, records(), max_field_bytes,
                                                             total=len(slow))
            sql_extra = pa.table({"ord": pa.array([r[0] for r in slow if r[4]], pa.int64()),
                                  "sql_extra": pa.array([r[3] for r in slow if r[4]], pa.string())})
            con.register("slow_rows", videos)
            con.register("slow_extra", sql_extra)
            con.register("candidate_comments", comments)
            columns = ", ".join(c for c in CANDIDATE_COLUMNS if c not in ("ord", "record_id", "extra"))
            fast_part = (f"SELECT ord, record_native AS record_id, {columns}, extra FROM fast WHERE ok "
                         "UNION ALL " if sql is not None else "")
            con.execute(f"""CREATE OR REPLACE TEMP VIEW candidates AS {fast_part}
                SELECT s.ord, s.record_id, {', '.join('s.' + c for c in columns.split(', '))},
                       CASE WHEN e.ord IS NOT NULL THEN e.sql_extra ELSE s.extra END AS extra
                FROM slow_rows s LEFT JOIN slow_extra e USING (ord)""")
            return merge_candidates(run, con, mapping.source, file_key=path.name, read=read,
                                    rejects=rejects, raws_of=lambda ords: _raws(path, ords))
        finally:
            drop_scratch(con, tables=("fast",), temp_views=("candidates", "jsonl_lines"),
                         views=("jsonl_file", "slow_rows", "slow_extra", "candidate_comments"))


def _check_lines(con: duckdb.DuckDBPyConnection, mapping: Mapping, path: Path, sql: str | None
                 ) -> tuple[int, list[SlowLine], dict[int, bytes]]:
    """A chunk of lines at a time: the rows certain as columns go to the temp table `fast`,
    the others come back (with DuckDB's `extra` of the line) for the per-record rules.
    Returns the lines read, those others, and the bytes of lines that are not UTF-8."""
    checks = sql if sql is not None else "SELECT ord, false AS ok FROM jsonl_lines"
    empty = pa.table({"ord": pa.array([], pa.int64()), "text": pa.array([], pa.large_string())})
    read, slow, invalid = 0, [], {}
    for number, (table, chunk_invalid) in enumerate(chain([(empty, {})], jsonl_chunks(path))):
        invalid.update(chunk_invalid)
        con.register("jsonl_file", table)
        con.execute(f"""CREATE OR REPLACE TEMP VIEW jsonl_lines AS
            SELECT ord, {sql_literal(path.name + ':')} || ord AS raw_ref, text FROM jsonl_file
            WHERE text IS NULL OR NOT regexp_full_match(text, {sql_literal(BLANK_LINE_RE2)})""")
        if number == 0:  # the empty table first: `fast` gets its columns even for an empty file
            con.execute(f"CREATE OR REPLACE TEMP TABLE fast AS {checks}")
            continue
        con.execute(f"INSERT INTO fast {checks}")
        slow.extend(con.execute(f"""
            SELECT l.ord, l.raw_ref, l.text, {extra_sql(mapping)} AS extra,
                   coalesce(json_valid(l.text), false) AS readable
            FROM jsonl_lines l JOIN fast f USING (ord) WHERE NOT f.ok ORDER BY l.ord""").fetchall())
        read += int(con.execute("SELECT count(*) FROM jsonl_lines").fetchone()[0])
        drop_scratch(con, temp_views=("jsonl_lines",), views=("jsonl_file",))
        del table  # the next chunk reuses its bytes
        note(f"{path.name}: {read:,} lines read" + (f", {read - len(slow):,} certain as columns" if sql else ""))
    return read, slow, invalid


def _raws(path: Path, ords: list[int]) -> dict[int, bytes]:
    """The bytes of the given lines (duplicates' rejects), read again from the file."""
    wanted = set(ords)
    return {number: raw for number, raw in jsonl_lines(path) if number in wanted} if wanted else {}
