"""A long stage does not lock everyone out: a real `curate embed` lets go of the catalog between batches, so
that a real `curate status` and the notebook API answer while it runs; a reader that meets a holder that does
not let go waits, then names what holds the catalog and since when."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import time

import duckdb

import curation.api
from tests.cli.test_cli import curate
from tests.conftest import ROOT


def test_status_and_the_api_answer_while_embed_runs(embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        texts = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        con.execute("DELETE FROM embeddings")
    config = tmp_path / "small-batches.toml"
    config.write_text("[embedding]\nbatch_size = 16\n", encoding="utf-8")
    embed = subprocess.Popen([sys.executable, "-m", "curation.cli", "--catalog", str(db), "--config", str(config),
                              "embed"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answered, progress_seen, videos = 0, [], None
    try:
        while embed.poll() is None:
            status = curate("--catalog", str(db), "status")
            assert status.returncode == 0, status.stderr  # never "Could not set lock on file"
            answered += 1
            running = [line for line in status.stdout.splitlines() if "embed-" in line and "running" in line]
            progress_seen += [line for line in running if "progress=" in line]
            if videos is None and embed.poll() is None:
                videos = curation.api.open(db).videos().height
    finally:
        out, err = embed.communicate(timeout=600)
    assert embed.returncode == 0, err
    assert answered >= 2 and progress_seen, (answered, progress_seen)  # status showed the run and how far it got
    assert videos == 1400
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == texts
        assert con.execute("SELECT status FROM runs WHERE stage = 'embed' ORDER BY started_at DESC LIMIT 1"
                           ).fetchone()[0] == "ok"
    assert not (tmp_path / "c.duckdb.holder.json").exists()  # nothing holds it once the run is over


def test_a_reader_that_meets_a_holder_waits_then_names_it(embedded_catalog_file, tmp_path, monkeypatch):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from curation.core.catalog import Catalog
        cat = Catalog({str(db)!r})
        cat.note_holder(stage="cluster", run_id="cluster-planted", progress="2/9")
        print("holding", flush=True)
        time.sleep(60)
        """)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        start = time.monotonic()
        monkeypatch.setenv("CURATE_LOCK_WAIT_S", "2")
        out = curate("--catalog", str(db), "status")
        waited = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 1
    (line,) = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert f"catalog {db} is held by" in line and f"pid {holder.pid}" in line
    assert "stage cluster (run cluster-planted, 2/9)" in line and "since 20" in line
    assert waited >= 2  # it waited before giving up
