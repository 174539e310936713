"""The keys the catalog schema does not enforce (`catalog.UNIQUE_KEYS`), checked for the rows a run wrote.

A row carries the id of the run that wrote it in the key's run column. A run that wrote a few rows of a
large table has only their keys checked, against every row (earlier runs' rows were checked when they
were written); rows that name no run have unknown origin and are checked by every run. A run that wrote
a third of the table or more has all of it checked in one pass, which costs less than picking its keys
out (a million videos: 0.19 s against 0.47 s), and then a duplicate anywhere in the table is refused.
"""

from __future__ import annotations

from typing import Any

import duckdb

from curation.core.catalog import UNIQUE_KEYS, Catalog, UniqueKey, one_row
from curation.core.errors import DuplicateKeyError


def first_duplicate(con: duckdb.DuckDBPyConnection, table: str, key: UniqueKey,
                    run_id: str) -> tuple[tuple[Any, ...], int] | None:
    """A value of `key` that `table` holds more than once, with how many rows hold it, looked for among
    at least the keys of the rows run `run_id` wrote or that name no run; None when there is none."""
    mine = f"({key.run_column} = $1 OR {key.run_column} IS NULL)"
    written = one_row(con, f"SELECT count(*) FROM {table} WHERE {mine}", [run_id])[0]
    if not written:
        return None
    total = one_row(con, f"SELECT count(*) FROM {table}")[0]
    columns, first = ", ".join(key.columns), key.columns[0]
    # a few rows: the rows sharing their first key column (the rows' own video for comments); else all
    rows = f"{table} WHERE {first} IN (SELECT {first} FROM {table} WHERE {mine})" if written * 3 < total else table
    # ordered, so that the error names the same duplicate every time (only duplicates are sorted)
    found = con.execute(f"SELECT {columns}, count(*) FROM {rows} GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT 1",
                        [run_id] if rows != table else []).fetchone()
    return (tuple(found[:-1]), int(found[-1])) if found else None


def refuse_duplicates(catalog: Catalog, tables: tuple[str, ...], run_id: str, outcome: str) -> None:
    """Raise DuplicateKeyError for the first of `tables` where run `run_id` left a key twice;
    `outcome` says what became of the run's writes."""
    for table in tables:
        key = UNIQUE_KEYS[table]
        found = first_duplicate(catalog.con, table, key, run_id)
        if found is None:
            continue
        values, rows = found
        if len(values) == 1:
            shown = f"{key.columns[0]} {values[0]!r}"
        else:
            shown = f"({', '.join(key.columns)}) = ({', '.join(map(repr, values))})"
        times = "twice" if rows == 2 else f"{rows} times"
        raise DuplicateKeyError(f"duplicate key in {table}: {shown} {times}; {outcome}")
