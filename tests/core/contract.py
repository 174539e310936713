"""Checks a stage against its declaration: every catalog table its SQL names is among the
tables it declares it reads or writes, and every table whose content changed is declared
as written. The runner's own table (`runs`) belongs to no stage."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from curation.core.catalog import Catalog
from curation.core.stage import STAGES

VIEWS = {"latest_tasks": ("tasks",), "latest_feeds": ("feeds",), "task_states": ("task_transitions",),
         "shortcut_verdicts_of_record": ("shortcut_verdicts", "shortcut_decisions")}
RUNNER_TABLES = {"runs", "schema_migrations"}


class TracingConnection:
    """The catalog's connection, remembering every statement sent through it."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self.statements: list[str] = []

    def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(sql)
        return self._con.execute(sql, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def fingerprints(cat: Catalog) -> dict[str, tuple[int, str]]:
    out = {}
    for table in cat.tables():
        out[table] = cat.con.execute(
            f"SELECT count(*), coalesce(md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)), '') FROM {table} t"
        ).fetchone()
    return out


def referenced(sql: str, tables: set[str]) -> set[str]:
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql))
    return {t for w in words if w in tables or w in VIEWS for t in VIEWS.get(w, (w,))}


def run_traced(cat: Catalog, stage: str, call: Callable[[], Any], seen: set[str] | None = None) -> Any:
    """Run `call` (which runs `stage`), then assert the stage kept to its declaration."""
    declared = STAGES[stage]
    tables = set(cat.tables())
    for name in (*declared.reads, *declared.writes):
        assert name in tables, f"{stage} declares {name!r}, which is not a catalog table"
    before = fingerprints(cat)
    tracer = TracingConnection(cat.con)
    cat.con = tracer  # type: ignore[assignment]

    def connect_traced(*args: Any, **kwargs: Any) -> Any:  # a stage that lets go of the file reconnects
        tracer._con = Catalog._connect(cat, *args, **kwargs)
        return tracer

    cat._connect = connect_traced  # type: ignore[method-assign]
    try:
        result = call()
    finally:
        del cat._connect
        cat.con = tracer._con
    after = fingerprints(cat)
    allowed = set(declared.reads) | set(declared.writes) | RUNNER_TABLES
    named = set().union(*(referenced(sql, tables) for sql in tracer.statements))
    assert named <= allowed, f"{stage} touched undeclared tables {sorted(named - allowed)}"
    changed = {t for t in tables if before.get(t) != after.get(t)} - RUNNER_TABLES
    undeclared = changed - set(declared.writes)
    assert not undeclared, f"{stage} changed undeclared tables {sorted(undeclared)}"
    stages_run = {r[0] for r in cat.con.execute("SELECT stage FROM runs").fetchall()}
    assert stage in stages_run, f"{stage} left no run row"
    if seen is not None:
        seen.add(stage)
    return result
