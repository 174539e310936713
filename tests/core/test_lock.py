"""A reader that meets a holder that does not let go waits, then names what holds the catalog and since when
(readers answering while a real `curate embed` runs: tests/core/test_lease.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import time

from tests.cli.test_cli import curate
from tests.conftest import ROOT


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
