"""The catalog's schema: declared keys, migrations from an older catalog, named inserts."""

from __future__ import annotations

import ast
import hashlib
import json
import re

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.core.catalog import MIGRATIONS, Catalog
from curation.core.config import load_config
from curation.core.errors import ConfigError, PrerequisiteError
from tests.conftest import ROOT

MIGRATION_HASHES = ROOT / "tests/core/migration_hashes.json"  # sha256 of each released migration's text

PREVIOUS = 6  # the schema version before keys, runs.error and latest_feeds


def _old_catalog(path) -> None:
    """A catalog as the previous code left it, with one row of each kind that matters."""
    cat = Catalog.__new__(Catalog)
    cat.path, cat.con, cat._depth = path, duckdb.connect(str(path)), 0
    cat._migrate(MIGRATIONS[:PREVIOUS])
    assert cat.schema_version == PREVIOUS
    con = cat.con
    con.execute("INSERT INTO runs VALUES ('ingest-1', 'ingest', '{}', '0.1.0', now(), NULL, 'running', NULL)")
    con.execute("INSERT INTO videos (video_id, source, native_id, title) VALUES ('FakeSV/1', 'FakeSV', '1', 'a')")
    con.execute("INSERT INTO feeds (feed_id, version, video_feed, ratio) VALUES ('feed-0-0000', 1, ['FakeSV/1'], 1.0),"
                " ('feed-0-0000', 2, ['FakeSV/1'], 0.5)")
    con.execute("INSERT INTO tasks (task_id, version, author, status, created_at) VALUES "
                "('gui_like_1', 1, 'alice', 'ok', now()), ('gui_like_2', 1, 'bob', 'needs_fix', now())")
    con.execute("INSERT INTO shortcut_verdicts VALUES ('gui_like_1', 1, 'shortcut_passed', 'paper', '[]', 'r', now())")
    for _ in range(2):  # what the old media-normalise left on every re-run
        con.execute("INSERT INTO rejects VALUES ('r', 'media-normalise', 'FakeSV', 'a.mp4', 'FakeSV/1', 'bad', 'a')")
    con.close()


def test_a_previous_version_catalog_is_migrated_with_its_data(tmp_path):
    path = tmp_path / "old.duckdb"
    _old_catalog(path)
    before = path.read_bytes()
    with pytest.raises(PrerequisiteError, match=f"schema version {PREVIOUS}, this toolkit reads {len(MIGRATIONS)}: "
                       f"run `curate --catalog {path} migrate`"):
        Catalog(path, read_only=True)  # a read-only open never writes: it names the command that migrates
    assert path.read_bytes() == before
    with Catalog(path) as cat:
        assert cat.schema_version == len(MIGRATIONS) and cat.scalar("SELECT count(*) FROM rejects") == 1
    with Catalog(path) as cat:
        assert cat.schema_version == len(MIGRATIONS)
        assert cat.rows("SELECT video_id, title FROM videos") == [{"video_id": "FakeSV/1", "title": "a"}]
        assert cat.rows("SELECT status, error FROM runs") == [{"status": "running", "error": None}]
        assert cat.rows("SELECT feed_id, version, ratio FROM latest_feeds") == [
            {"feed_id": "feed-0-0000", "version": 2, "ratio": 0.5}]
        # tasks made before the life cycle get the path they took
        assert dict(cat.con.execute("SELECT task_id, state FROM task_states").fetchall()) == {
            "gui_like_1": "shortcut_passed", "gui_like_2": "needs_fix"}
        with pytest.raises(duckdb.ConstraintException):  # keys hold on the migrated tables too
            cat.insert("feeds", {"feed_id": "feed-0-0000", "version": 2})
        # videos keep their columns and constraints but no key (migration 16)
        with pytest.raises(duckdb.ConstraintException):
            cat.insert("videos", {"video_id": "FakeSV/2", "source": "FakeSV", "native_id": None})
        assert cat.scalar("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'videos' "
                          "AND constraint_type = 'PRIMARY KEY'") == 0
    with Catalog(path) as cat:  # opening again changes nothing
        assert cat.schema_version == len(MIGRATIONS)


def test_migration_17_leaves_the_life_cycle_as_the_only_task_state(tmp_path):
    """A version whose `status` said needs_fix while its life cycle said otherwise (what `qc validate` did
    in place) keeps its needs_fix, as a move with the reasons; the columns go."""
    path = tmp_path / "old.duckdb"
    cat = Catalog.__new__(Catalog)
    cat.path, cat.con, cat._depth = path, duckdb.connect(str(path)), 0
    cat._migrate(MIGRATIONS[:16])
    cat.con.execute("INSERT INTO tasks (task_id, version, status, reasons) VALUES ('gui_like_1', 1, 'ok', NULL), "
                    """('gui_like_2', 1, 'needs_fix', '["answer-missing: no answer given"]')""")
    cat.con.execute("INSERT INTO task_transitions (task_id, version, seq, from_state, to_state) VALUES "
                    "('gui_like_1', 1, 1, NULL, 'imported'), ('gui_like_1', 1, 2, 'imported', 'valid'), "
                    "('gui_like_2', 1, 1, NULL, 'imported'), ('gui_like_2', 1, 2, 'imported', 'valid')")
    cat.con.close()
    with Catalog(path) as cat:
        assert dict(cat.con.execute("SELECT task_id, state FROM task_states").fetchall()) == {
            "gui_like_1": "valid", "gui_like_2": "needs_fix"}
        assert cat.scalar("SELECT reason FROM task_transitions WHERE task_id = 'gui_like_2' AND seq = 3") == \
            '["answer-missing: no answer given"]'
        columns = {r[0] for r in cat.con.execute("SELECT column_name FROM information_schema.columns "
                                                 "WHERE table_name = 'tasks'").fetchall()}
        assert "status" not in columns and "reasons" not in columns
        assert [r[0] for r in cat.con.execute("SELECT task_id FROM latest_tasks ORDER BY 1").fetchall()] == [
            "gui_like_1", "gui_like_2"]


@pytest.mark.parametrize(("table", "row"), [  # videos and comments have none: the ingest merge keeps them unique
    ("feeds", {"feed_id": "f", "version": 1}),
    ("embeddings", {"model_id": "m", "text_sha256": "s"}),
    ("tasks", {"task_id": "gui_like_1", "version": 1}),
    ("rejects", {"stage": "ingest", "source": "X", "raw_ref": "f:1", "reason": "r"}),
    ("llm_calls", {"endpoint": "e", "model": "m", "prompt_sha256": "p", "sample": 0, "temperature": 0.0}),
])
def test_a_duplicate_key_cannot_be_written(catalog, table, row):
    catalog.insert(table, row)
    with pytest.raises(duckdb.ConstraintException):
        catalog.insert(table, row)


def test_delete_then_insert_of_a_key_in_one_transaction_works(catalog):
    # the merge pattern every stage uses
    catalog.insert("videos", {"video_id": "X/1", "source": "X", "native_id": "1", "title": "old"})
    with catalog.transaction():
        catalog.con.execute("DELETE FROM videos WHERE video_id = 'X/1'")
        catalog.insert("videos", {"video_id": "X/1", "source": "X", "native_id": "1", "title": "new"})
    assert catalog.scalar("SELECT title FROM videos") == "new"


def test_no_insert_depends_on_column_order():
    positional = re.compile(r"INSERT\s+INTO\s+\w+\s+(VALUES|SELECT)", re.IGNORECASE)
    offenders = [f"{path.relative_to(ROOT)}:{n}" for folder in ("curation", "tests", "bench")
                 for path in (ROOT / folder).rglob("*.py") if path.name != "test_catalog.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if positional.search(line)]
    assert offenders == []


def test_a_released_migration_keeps_the_text_it_ran_with():
    """Catalogs already migrated ran these texts; changing one would leave them and a new catalog different.
    A new migration is appended with its hash added to migration_hashes.json."""
    released = json.loads(MIGRATION_HASHES.read_text(encoding="utf-8"))
    hashes = {str(n): hashlib.sha256(sql.encode()).hexdigest() for n, sql in enumerate(MIGRATIONS, start=1)}
    changed = [n for n, digest in released.items() if hashes.get(n) != digest]
    assert changed == [], f"released migrations {changed} changed or went: append a new migration instead"
    unrecorded = {n: digest for n, digest in hashes.items() if n not in released}
    assert unrecorded == {}, f"add the new migrations' hashes to {MIGRATION_HASHES.name}: {json.dumps(unrecorded)}"


def test_every_migration_is_sql_text_in_the_source():
    """Text written out, not built by code that can change later (a function, an f-string, a format call)."""
    tree = ast.parse((ROOT / "curation/core/migrations.py").read_text(encoding="utf-8"))
    (listing,) = [node.value for node in ast.walk(tree)
                  if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "MIGRATIONS"]
    assert isinstance(listing, ast.List) and len(listing.elts) == len(MIGRATIONS)
    built = [n for n, element in enumerate(listing.elts, start=1)
             if not (isinstance(element, ast.Constant) and isinstance(element.value, str))]
    assert built == []


@given(st.integers(min_value=64, max_value=4096))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_memory_limit_holds_across_every_reconnection(tmp_path, megabytes):
    """`[catalog] memory_limit` bounds DuckDB in every connection of a run, including those a batched stage
    makes when it takes the catalog back between batches (where its checkpoints take their memory)."""
    path = tmp_path / f"limit-{megabytes}.duckdb"
    with Catalog(path, memory_limit=f"{megabytes}MB") as cat:
        first = cat.scalar("SELECT current_setting('memory_limit')")
        with cat.released():
            pass
        again = cat.scalar("SELECT current_setting('memory_limit')")
    with duckdb.connect(":memory:", config={"memory_limit": f"{megabytes}MB"}) as con:
        wanted = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert first == again == wanted
    with Catalog(path) as cat:  # unset: DuckDB's own default, not the last run's
        assert cat.scalar("SELECT current_setting('memory_limit')") != wanted


def test_a_memory_limit_duckdb_cannot_read_is_one_line_naming_the_setting(tmp_path):
    config = tmp_path / "curation.toml"
    config.write_text('[catalog]\nmemory_limit = "2 gigs"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^catalog\.memory_limit = '2 gigs': .*Unknown unit for memory"):
        load_config(config)
