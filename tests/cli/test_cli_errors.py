"""What the command line does with a bug: exit 1, one line naming the error and the run that
kept its traceback (`--debug` prints the traceback), and nothing that passes for a result."""

from __future__ import annotations

from curation.core.catalog import Catalog
from tests.cli.planted import curate_with_bug, last_run
from tests.conftest import FIXTURES

CORPUS = str(FIXTURES / "fakesv_complete.jsonl")


def test_a_bug_in_a_stage_is_one_line_saying_where_its_traceback_is(tmp_path):
    db = tmp_path / "c.duckdb"
    out = curate_with_bug("curation.ingest.fakesv:map_fakesv", "KeyError:video_id",
                          "--catalog", str(db), "ingest", "fakesv", CORPUS)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert lines[0] == "error: unexpected KeyError: 'video_id' (a bug, not bad input)", out.stderr
    assert "Traceback" not in out.stderr and "accepted" not in out.stdout
    with Catalog(db) as cat:
        run = last_run(cat, "ingest")
        assert run["status"] == "failed" and run["error"] == "KeyError: 'video_id'"
        assert "in read_fakesv" in run["traceback"] and "in planted" in run["traceback"]
        # a bug is not a bad record: nothing was accepted, and nothing was rejected in its name
        assert cat.scalar("SELECT count(*) FROM videos") == cat.scalar("SELECT count(*) FROM rejects") == 0
    assert run["run_id"] in out.stderr and str(db) in out.stderr and "runs.traceback" in out.stderr
    assert "--debug" in out.stderr


def test_debug_prints_the_whole_traceback(tmp_path):
    db = tmp_path / "c.duckdb"
    out = curate_with_bug("curation.ingest.fakesv:map_fakesv", "RuntimeError:injected",
                          "--debug", "--catalog", str(db), "ingest", "fakesv", CORPUS)
    assert out.returncode == 1
    assert out.stderr.startswith("Traceback (most recent call last):")
    assert "in read_fakesv" in out.stderr and "RuntimeError: injected" in out.stderr
    with Catalog(db) as cat:
        assert last_run(cat, "ingest")["run_id"] in out.stderr  # the note still says which run kept it


def test_a_bug_outside_any_stage_prints_its_traceback_since_nothing_keeps_it(tmp_path):
    db = tmp_path / "c.duckdb"
    with Catalog(db):
        pass
    out = curate_with_bug("curation.status:status_report", "ValueError:injected", "--catalog", str(db), "status")
    assert out.returncode == 1
    assert out.stderr.startswith("Traceback (most recent call last):")
    assert out.stderr.strip().splitlines()[-1] == "ValueError: injected"
    with Catalog(db) as cat:
        assert cat.scalar("SELECT count(*) FROM runs") == 0
