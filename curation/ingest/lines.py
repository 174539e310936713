"""JSON Lines through a mapping: each line checked as columns, and only the lines the
column rules are not certain of read one by one.

Both paths end in the same merge, and the unmapped fields (`extra`) of any line DuckDB
can read are cut from the line by DuckDB in both, so a line gives the same row whichever
path it took. `columnar=False` sends every line through the per-record path (the
reference the tests compare with).
"""

from __future__ import annotations

from collections.abc import Iterator
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
from curation.ingest.readers import BLANK_LINE_RE2, jsonl_table, parse_json_line
from curation.ingest.records import SourceRecord


def merge_jsonl(run: StageRun, mapping: Mapping, path: Path, *, max_field_bytes: int,
                columnar: bool = True) -> IngestResult:
    table, invalid = jsonl_table(path)
    sql = fast_rows_sql(mapping, mapping.source, "jsonl_lines", max_field_bytes) if columnar else None
    with ingest_connection(run) as con:
        con.register("jsonl_file", table)
        try:
            con.execute(f"""CREATE OR REPLACE TEMP VIEW jsonl_lines AS
                SELECT ord, {sql_literal(path.name + ':')} || ord AS raw_ref, text FROM jsonl_file
                WHERE text IS NULL OR NOT regexp_full_match(text, {sql_literal(BLANK_LINE_RE2)})""")
            read = int(con.execute("SELECT count(*) FROM jsonl_lines").fetchone()[0])
            note(f"{path.name}: {read:,} lines" + (" checked as columns" if columnar else ""))
            if sql is not None:
                con.execute(f"CREATE OR REPLACE TEMP TABLE fast AS {sql}")
            else:
                con.execute("CREATE OR REPLACE TEMP TABLE fast AS SELECT ord, false AS ok FROM jsonl_lines")
            slow = con.execute(f"""
                SELECT l.ord, l.raw_ref, l.text, {extra_sql(mapping)} AS extra,
                       coalesce(json_valid(l.text), false) AS readable
                FROM jsonl_lines l JOIN fast f USING (ord) WHERE NOT f.ok ORDER BY l.ord""").fetchall()
            run.counts["certain_as_columns"] = read - len(slow)
            if sql is not None:
                note(f"{read - len(slow):,} lines certain as columns, {len(slow):,} read one by one")

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
                                    rejects=rejects, raws_of=lambda ords: _raws(con, invalid, ords))
        finally:
            drop_scratch(con, tables=("fast",), temp_views=("candidates", "jsonl_lines"),
                         views=("jsonl_file", "slow_rows", "slow_extra", "candidate_comments"))


def _raws(con: duckdb.DuckDBPyConnection, invalid: dict[int, bytes], ords: list[int]) -> dict[int, bytes]:
    if not ords:
        return {}
    found = dict(con.execute("SELECT ord, text FROM jsonl_lines WHERE ord IN (SELECT unnest(?))", [ords]).fetchall())
    return {o: invalid[o] if found.get(o) is None else found[o].encode().rstrip(b"\r\n") for o in ords}
