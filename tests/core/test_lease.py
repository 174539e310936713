"""Issue 42: a writing stage holds a lease on the catalog for its whole run. A real `curate embed` lets go
of the file between batches, so that `status` and the notebook API answer while it runs, yet `cluster`,
`keywords` and a second `embed` (which read or write what it writes) wait and then refuse, naming it, while
`ingest` (which touches nothing embed reads or writes) goes on. A
stage killed with SIGKILL shows as interrupted in the next `status`, and the next stage to run records it
so."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
from hypothesis import given
from hypothesis import strategies as st

import curation.api
from curation.core.lease import Lease, lease_dir, leases
from curation.core.stage import GONE, STAGES
from tests.cli.test_cli import curate
from tests.conftest import ROOT, small_corpus


@given(st.sampled_from(sorted(STAGES)), st.sampled_from(sorted(STAGES)))
def test_two_stages_conflict_both_ways_or_not_at_all(first, second):
    """Whether two stages may run together does not depend on which started first, and a stage that writes
    anything never runs beside itself."""
    a, b = STAGES[first], STAGES[second]

    def held(stage):
        return Lease(stage.name, ["r"], list(stage.reads), list(stage.writes))

    assert a.conflicts_with(held(b)) == b.conflicts_with(held(a))
    if a.writes:
        assert a.conflicts_with(held(a))
    tables = set(a.writes) & (set(b.reads) | set(b.writes)) | set(b.writes) & set(a.reads)
    assert a.conflicts_with(held(b)) == bool(tables)


def _embed(db: Path, tmp_path: Path) -> subprocess.Popen[str]:
    """A real `curate embed` over every keyword set again, in small batches: it runs a while, letting go of the
    catalog between batches."""
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE IF NOT EXISTS embedded_before AS SELECT count(*) AS n FROM embeddings")
        con.execute("DELETE FROM embeddings")
    config = tmp_path / "small-batches.toml"
    config.write_text("[embedding]\nbatch_size = 8\n", encoding="utf-8")
    return subprocess.Popen([sys.executable, "-m", "curation.cli", "--catalog", str(db), "--config", str(config),
                             "embed"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_lease(db: Path, process: subprocess.Popen[str], progress: bool = False) -> Lease:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        found = leases(db)
        if found and (not progress or (db.with_name(db.name + ".holder.json").exists()
                                       and "progress" in db.with_name(db.name + ".holder.json").read_text())):
            return found[0]
        time.sleep(0.2)
    raise AssertionError("the stage never took its lease")


def test_writers_wait_for_a_running_embed_then_refuse_naming_it(embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    embed = _embed(db, tmp_path)
    env = {"CURATE_LOCK_WAIT_S": "2"}
    try:
        held = _wait_for_lease(db, embed)
        assert held.stage == "embed" and held.pid == embed.pid
        # all three at once, so that they meet the embed run while it is surely still running
        others = {name: subprocess.Popen(
            [sys.executable, "-m", "curation.cli", "--catalog", str(db), *args], cwd=ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **env})
            for name, args in (("cluster", ["cluster"]), ("keywords", ["keywords"]), ("embed", ["embed"]),
                               ("ingest", ["ingest", "kuairec", str(small_corpus(tmp_path / "more")[1])]))}
        refused = {name: p.communicate(timeout=300) + (p.returncode,) for name, p in others.items()}
        # ingest writes videos, comments and rejects, none of which embed reads: it goes on (derived from the
        # stages' declared tables, not listed), and embed's vectors stay those of the keyword sets it read
        ingest_out, ingest_err, ingest_code = refused.pop("ingest")
        # readers answer meanwhile: `curate status` (never "Could not set lock on file"), and the notebook API
        status = curate("--catalog", str(db), "status")
        videos = curation.api.open(db).videos().height
        still_running = embed.poll() is None
    finally:
        out, err = embed.communicate(timeout=900)
    assert still_running, "embed finished before the others were refused: the test proved nothing"
    assert ingest_code == 0 and " accepted, 0 rejected" in ingest_out, ingest_err
    for name, (_, stderr, code) in refused.items():
        assert code == 1, (name, stderr)
        (line,) = [x for x in stderr.splitlines() if x.startswith("error:")]
        assert f"stage {name} cannot run now: stage embed (run {held.runs[0]}" in line, line
        assert f"pid {embed.pid}" in line and re.search(r"waited \d+ s", line)
    assert status.returncode == 0, status.stderr
    running = [line for line in status.stdout.splitlines() if "embed-" in line and "running" in line]
    assert any("progress=" in line for line in running), status.stdout  # the run, and how far it got
    assert videos == 1400
    assert embed.returncode == 0, err
    assert not db.with_name(db.name + ".holder.json").exists()  # nothing holds the file once the run is over
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == con.execute(
            "SELECT n FROM embedded_before").fetchone()[0]
        runs = dict(con.execute("SELECT stage, count(*) FROM runs WHERE started_at > "
                                "(SELECT started_at FROM runs WHERE run_id = ?) GROUP BY 1", [held.runs[0]]).fetchall())
        assert con.execute("SELECT status FROM runs WHERE run_id = ?", [held.runs[0]]).fetchone()[0] == "ok"
    assert runs == {"ingest": 1}  # a refused stage writes no run row
    assert leases(db) == []  # the lease is given back


def test_a_killed_stage_is_interrupted_at_the_next_status_and_the_next_run(embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    embed = _embed(db, tmp_path)
    try:
        held = _wait_for_lease(db, embed, progress=True)
    finally:
        embed.send_signal(signal.SIGKILL)
        embed.wait()
    run_id = held.runs[0]
    assert [lease.runs for lease in leases(db)] == [[run_id]]  # left behind by the killed process
    status = curate("--catalog", str(db), "status")
    assert status.returncode == 0
    assert f"{run_id} interrupted: its process is gone" in status.stdout, status.stdout
    assert " running " not in status.stdout
    # the next writing stage (here the same embed, resuming) records it, and takes the lease over
    again = curate("--catalog", str(db), "embed")
    assert again.returncode == 0, again.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT status, error FROM runs WHERE run_id = ?", [run_id]).fetchone() == (
            "interrupted", GONE)
    assert leases(db) == [] and not any(lease_dir(db).glob("*.json"))
