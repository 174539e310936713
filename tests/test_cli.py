"""The command line as a user runs it: real subprocesses, real catalog file."""

import os
import subprocess
import sys

from tests.conftest import FIXTURES, KUAIREC_CSV, ROOT


def curate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curation.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, env=os.environ.copy(), timeout=300)


def test_ingest_status_explain(tmp_path):
    db = str(tmp_path / "c.duckdb")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"video_id": "1", "annotation": "真"}\n{"video_id": "2", "count_like": -1}\n',
                   encoding="utf-8")
    out = curate("--catalog", db, "ingest", "fakesv", str(bad))
    assert out.returncode == 0, out.stderr
    assert "2 read, 1 accepted, 1 rejected" in out.stdout
    out = curate("--catalog", db, "ingest", "livebot", str(FIXTURES / "livebot"))
    assert "3 read, 3 accepted, 0 rejected" in out.stdout
    status = curate("--catalog", db, "status")
    assert status.returncode == 0
    assert "FakeSV" in status.stdout and "LiveBot" in status.stdout
    assert "like_count is negative" in status.stdout
    video = curate("--catalog", db, "explain", "LiveBot/cat/猫咪第一次见到雪")
    assert video.returncode == 0
    assert "title: 猫咪第一次见到雪" in video.stdout and "comments: 1" in video.stdout
    assert "ingest-" in video.stdout
    rejected = curate("--catalog", db, "explain", "FakeSV/2")
    assert rejected.returncode == 0
    assert "bad.jsonl:2" in rejected.stdout and "like_count is negative" in rejected.stdout
    missing = curate("--catalog", db, "explain", "FakeSV/nope")
    assert missing.returncode == 1 and "neither a video" in missing.stderr


def test_dry_run_and_clear_errors(tmp_path):
    db = tmp_path / "c.duckdb"
    out = curate("--catalog", str(db), "ingest", "kuairec", str(KUAIREC_CSV), "--dry-run")
    assert out.returncode == 0 and "10,728 read, 10,728 accepted, 0 rejected" in out.stdout
    assert not db.exists()
    for args, message in [
        (("ingest", "kuairec", str(tmp_path / "absent.csv")), "does not exist"),
        (("ingest", "nosuch", str(KUAIREC_CSV)), "unknown adapter"),
        (("ingest", "generic", str(KUAIREC_CSV)), "needs --mapping"),
    ]:
        out = curate("--catalog", str(db), *args)
        assert out.returncode == 2
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], out.stderr
