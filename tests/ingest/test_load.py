"""Behaviour shared by every adapter: rejects with reasons, idempotency, kills."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from curation.core.catalog import Catalog
from curation.ingest import ingest_path
from tests.conftest import FAKESV_PUBLIC, KUAIREC_CSV, ROOT

GOOD = {"video_id": "100", "keywords": "某地发生地震", "annotation": "真"}


def _malformed_lines() -> list[bytes]:
    line = lambda obj: json.dumps(obj, ensure_ascii=False).encode()  # noqa: E731
    return [
        line(GOOD),
        b'{"video_id": "101", "keywords": "\xff\xfe broken", "annotation": "\xe5"}',  # invalid UTF-8
        b'{"video_id": "102", "keywords": "cut off',                                 # truncated JSON
        line({"video_id": "103", "title": {"nested": 1}}),                           # wrong type
        line({"video_id": "104", "count_like": -5}),                                 # negative count
        line({"video_id": "100", "annotation": "假"}),                               # duplicate id
        line({"keywords": "no id here"}),                                            # missing id
        line({"video_id": "105", "title": "x" * (1_048_576 + 10)}),                  # field over 1 MB
        line({"video_id": "106", "count_star": "many"}),                             # not a count
        line({"video_id": "107", "comments": "not a list"}),                         # wrong type
        line({"video_id": "108", "title": "fine", "count_like": "3.5万"}),
    ]


def test_every_reject_reason_and_counts_add_up(tmp_path, catalog):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(_malformed_lines()))
    result = ingest_path(catalog, "fakesv", path)
    assert result.read == 11 and result.accepted == 2 and result.rejected == 9
    assert result.read == result.accepted + result.rejected
    rejects = {r["raw_ref"]: r for r in catalog.rows("SELECT * FROM rejects")}
    expected = {
        "bad.jsonl:2": "invalid UTF-8", "bad.jsonl:3": "truncated JSON",
        "bad.jsonl:4": "title must be text", "bad.jsonl:5": "like_count is negative",
        "bad.jsonl:6": "duplicate video_id FakeSV/100 (first at bad.jsonl:1)",
        "bad.jsonl:7": "missing id", "bad.jsonl:8": "over the 1,048,576 limit",
        "bad.jsonl:9": "collect_count is not a count", "bad.jsonl:10": "must be lists",
    }
    assert set(rejects) == set(expected)
    for ref, reason in expected.items():
        assert reason in rejects[ref]["reason"], (ref, rejects[ref]["reason"])
        assert "\n" not in rejects[ref]["reason"]
    lines = _malformed_lines()
    assert bytes(rejects["bad.jsonl:2"]["raw"]) == lines[1]  # lossless, bytes and all
    assert bytes(rejects["bad.jsonl:8"]["raw"]) == lines[7]


def _snapshot(cat: Catalog) -> dict[str, list]:
    return {
        "videos": cat.con.execute("SELECT * EXCLUDE (run_id) FROM videos ORDER BY video_id")
        .fetchall(),
        "comments": cat.con.execute("SELECT * EXCLUDE (run_id) FROM comments "
                                    "ORDER BY comment_id").fetchall(),
        "rejects": cat.con.execute("SELECT * EXCLUDE (run_id) FROM rejects ORDER BY raw_ref")
        .fetchall(),
    }


def test_reingest_is_a_noop_and_updates_are_counted(tmp_path, catalog):
    path = tmp_path / "data.json"
    lines = FAKESV_PUBLIC.read_text(encoding="utf-8").splitlines()[:50] + ["{broken"]
    path.write_text("\n".join(lines), encoding="utf-8")
    first = ingest_path(catalog, "fakesv", path)
    before = _snapshot(catalog)
    runs_before = catalog.con.execute("SELECT DISTINCT run_id FROM videos").fetchall()
    second = ingest_path(catalog, "fakesv", path)
    assert (first.new, second.new, second.updated, second.unchanged) == (50, 0, 0, 50)
    assert _snapshot(catalog) == before
    assert catalog.con.execute("SELECT DISTINCT run_id FROM videos").fetchall() == runs_before
    assert catalog.con.execute("SELECT count(*) FROM rejects").fetchone()[0] == 1
    counts = json.loads(catalog.con.execute(
        "SELECT counts FROM runs WHERE run_id = ?", [second.run_id]).fetchone()[0])
    assert counts["new"] == 0 and counts["updated"] == 0

    record = json.loads(lines[0])
    record["annotation"] = "假" if record["annotation"] != "假" else "真"
    lines[0] = json.dumps(record, ensure_ascii=False)
    lines[-1] = json.dumps({"video_id": "brand-new", "keywords": "新事件", "annotation": "真"},
                           ensure_ascii=False)  # the broken line is fixed, too
    path.write_text("\n".join(lines), encoding="utf-8")
    third = ingest_path(catalog, "fakesv", path)
    assert (third.new, third.updated, third.unchanged, third.rejected) == (1, 1, 49, 0)
    assert catalog.con.execute("SELECT count(*) FROM rejects").fetchone()[0] == 0
    label = catalog.con.execute("SELECT label FROM videos WHERE native_id = ?",
                                [record["video_id"]]).fetchone()[0]
    assert label == record["annotation"]


def test_dry_run_writes_nothing(tmp_path):
    result = ingest_path(None, "kuairec", KUAIREC_CSV)
    assert result.accepted == 10_728 and result.run_id is None
    assert not list(tmp_path.iterdir())


def _big_corpus(path: Path, n: int) -> None:
    rows = KUAIREC_CSV.read_text(encoding="utf-8").replace("\r", " ").splitlines()[1:]
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            caption = rows[i % len(rows)].split(",")[2]
            out.write(json.dumps({"id": str(i), "caption": caption, "likes": i % 977},
                                 ensure_ascii=False) + "\n")


def test_kill_during_ingest_leaves_catalog_as_before(tmp_path):
    corpus = tmp_path / "big.jsonl"
    _big_corpus(corpus, 100_000)
    mapping = tmp_path / "m.toml"
    mapping.write_text('source = "Big"\nformat = "jsonl"\n[fields]\nnative_id = "id"\n'
                       'title = "caption"\nhashtags = { from = "caption", extract = "hashtags" }\n'
                       'like_count = "likes"\n', encoding="utf-8")
    killed_db, clean_db = tmp_path / "killed.duckdb", tmp_path / "clean.duckdb"
    with Catalog(killed_db) as cat:
        ingest_path(cat, "fakesv", FAKESV_PUBLIC)
        before = _snapshot(cat)
    cmd = [sys.executable, "-m", "curation.cli", "--catalog", str(killed_db), "ingest",
           "generic", str(corpus), "--mapping", str(mapping)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, cwd=ROOT, env=os.environ.copy())
    assert proc.stderr is not None
    for raw in proc.stderr:  # kill it once it has begun writing to the catalog
        if raw.startswith(b"merging"):
            os.kill(proc.pid, signal.SIGKILL)
            break
    assert proc.wait() == -signal.SIGKILL
    with Catalog(killed_db) as cat:
        assert _snapshot(cat) == before
        result = ingest_path(cat, "generic", corpus, mapping=mapping)
        assert result.new == 100_000
        after_rerun = _snapshot(cat)
        statuses = [r[0] for r in cat.con.execute(
            "SELECT status FROM runs WHERE stage = 'ingest' ORDER BY started_at").fetchall()]
    assert statuses == ["ok", "interrupted", "ok"]
    with Catalog(clean_db) as cat:
        ingest_path(cat, "fakesv", FAKESV_PUBLIC)
        ingest_path(cat, "generic", corpus, mapping=mapping)
        assert _snapshot(cat) == after_rerun
