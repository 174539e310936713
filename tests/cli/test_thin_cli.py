"""The command line is thin: it parses arguments, builds the configuration, calls a stage and
prints what the stage returned. No SQL lives in curation/cli/, and every report a command
writes is written by the stage's own run (its path in the run's params, the file there before
the run closed)."""

from __future__ import annotations

import ast
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from curation.core.catalog import Catalog
from tests.cli.test_cli import curate
from tests.conftest import ROOT
from tests.grade.logs import write_episode
from tests.qc.helpers import plant_task
from tests.release.helpers import reviewed_catalog

CLI = ROOT / "curation" / "cli"
# Statement shapes, not single words: help text may say "delete" or "select ... from". Upper case
# is how SQL is written here; lower case counts only where prose would not read so.
SQL_UPPER = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bDELETE\s+FROM\b|\bCOPY\b[\s\S]*\bTO\b|\bWITH\s+\w+\s+AS\s*\(")
SQL_ANY_CASE = re.compile(
    r"\bselect\s+(?:\*|count\s*\(|distinct\b)|\binsert\s+into\b|\bdelete\s+from\s+\w+\s+where\b"
    r"|\bupdate\s+\w+\s+set\b|\b(?:create|drop)\s+(?:or\s+replace\s+)?(?:temp\w*\s+)?"
    r"(?:table|view|index|sequence|macro|schema)\b|\balter\s+table\b", re.IGNORECASE)
# the ways this code base sends SQL: a DuckDB connection, or the catalog's helpers over it
SQL_CALLS = {"execute", "executemany", "sql", "query", "rows", "scalar", "fetchone", "fetchall"}


def _reads_as_sql(text: str) -> bool:
    return bool(SQL_UPPER.search(text) or SQL_ANY_CASE.search(text))


def sql_in(source: str) -> list[str]:
    """Where `source` holds SQL: a string that reads as a statement, or a call that sends one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _reads_as_sql(node.value):
            found.append(f"line {node.lineno}: SQL text {node.value.strip()[:60]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
            found.append(f"line {node.lineno}: .{node.func.attr}(...) call")
    return found


def test_no_sql_lives_in_the_command_line():
    files = sorted(CLI.glob("*.py"))
    assert len(files) >= 8  # the command groups are where the test looks for them
    found = {f.name: sql_in(f.read_text(encoding="utf-8")) for f in files}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_sql_finder_sees_sql_as_it_is_written_and_not_in_help_text():
    planted = {
        'rows = cat.rows("SELECT r.*, list(p.repo) AS repos FROM releases r")': "SQL text",
        'n = cat.scalar(f"SELECT count(*) FROM {table}")': "SQL text",
        'cat.con.execute("delete from feeds where seed = ?", [seed])': "SQL text",
        'q = """\n    UPDATE runs\n    SET status = 1"""': "SQL text",
        'q = "CREATE OR REPLACE TEMP TABLE t AS SELECT 1"': "SQL text",
        'q = "insert into tasks (task_id) values (?)"': "SQL text",
        "con.execute(statement)": ".execute(...) call",
        "newest = cat.scalar(query, [name])": ".scalar(...) call",
    }
    for source, kind in planted.items():
        assert any(kind in line for line in sql_in(source)), source
    help_text = ('delete: Annotated[str | None, typer.Option(help="Positions to delete, 1-based: 2,5.")] = None\n'
                 'typer.echo(f"{n} feeds: select one from the list and update it with curate feeds edit")\n'
                 'typer.echo("tasks created from the feeds; copy them to the table of runs below")')
    assert sql_in(help_text) == []


def _written_in_its_run(db: Path, stage: str, path: Path) -> None:
    """The newest run of `stage` succeeded, names `path` among its params, and the file was there
    before the run closed (a write after the stage would come later)."""
    with duckdb.connect(str(db), read_only=True) as con:
        status, params, finished = con.execute("SELECT status, params, finished_at FROM runs WHERE stage = ? "
                                                "ORDER BY started_at DESC LIMIT 1", [stage]).fetchone()
    assert status == "ok", (stage, status)
    listed = [Path(v).resolve() for v in json.loads(params).values() if isinstance(v, str)]
    assert path.resolve() in listed, (stage, params)
    assert path.is_file() and path.stat().st_size > 0, path
    written = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(tzinfo=None)
    assert written <= finished, (stage, written, finished)


def test_reports_are_written_inside_their_stage_runs(clustered_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(clustered_catalog_file, db)
    reports = tmp_path / "reports"
    config = tmp_path / "curation.toml"
    config.write_text(f'[reports]\ndir = "{reports}"\n[release]\ndir = "{tmp_path / "releases"}"\n'
                      f'[qc.shortcut]\nreport = "{reports / "shortcut.html"}"\n', encoding="utf-8")
    base = ("--catalog", str(db), "--config", str(config))

    out = curate(*base, "cluster", "--report")  # the inputs are those of the fixture's clustering: reused
    assert out.returncode == 0 and "(inputs unchanged: reused)" in out.stdout, out.stderr
    assert f"report: {reports / 'clusters.html'}" in out.stdout
    _written_in_its_run(db, "cluster", reports / "clusters.html")
    assert "AMI, shuffled" in (reports / "clusters.html").read_text(encoding="utf-8")  # the run's figures

    out = curate(*base, "feeds", "build", "--n", "6", "--seed", "81", "--report")
    assert out.returncode == 0 and "6 written" in out.stdout, out.stderr
    _written_in_its_run(db, "feeds", reports / "feeds.html")

    with Catalog(db) as cat:  # the feeds just built, carried through QC as the release tests do
        feeds = reviewed_catalog(cat)
        plant_task(cat, "feature_analysis_9", feeds[5], tier="L2", subcategory="feature_analysis",
                   eval_type="label", instruction="视频里一共有几只鸟？", options={"A": "三只", "B": "四只"},
                   eval_config=[{"answer": "B"}])
    out = curate(*base, "qc", "shortcut")
    assert out.returncode == 0 and "1 tasks: 1 passed" in out.stdout, out.stdout + out.stderr
    _written_in_its_run(db, "qc-shortcut", reports / "shortcut.html")

    out = curate(*base, "release", "build", "--version", "1.0.0")
    assert out.returncode == 0 and "4 tasks" in out.stdout, out.stderr
    _written_in_its_run(db, "release-build", reports / "release-v1.0.0.html")

    with Catalog(db, read_only=True) as cat:
        asked = json.loads(cat.scalar("SELECT runner FROM release_tasks WHERE task_id = 'feature_analysis_1'"))
    write_episode(tmp_path / "logs", "feature_analysis_1", asked["instruction"], [("answer", {"text": "B"})], 1.0)
    out = curate(*base, "grade", str(tmp_path / "logs"), "--release", "v1.0.0", "--out", str(tmp_path / "graded"))
    assert out.returncode == 0 and "1 graded" in out.stdout, out.stderr
    _written_in_its_run(db, "grade", tmp_path / "graded" / "grade.html")
