"""Keys the schema does not enforce (`videos`, `comments`: catalog.UNIQUE_KEYS): the stage runner refuses a
run that leaves one twice, whichever stage writes it, before anything of it commits."""

from __future__ import annotations

import json

import duckdb
import pytest

from curation.core.catalog import UNIQUE_KEYS, Catalog
from curation.core.errors import DuplicateKeyError
from curation.core.stage import Stage, StageRun
from curation.ingest import ingest_path
from curation.release.livingscreen import import_livingscreen
from tests.cli.test_cli import curate
from tests.core.contract import fingerprints
from tests.release.test_livingscreen import FAKESV, RELEASE, write_release

FAKESV_LINE = {"video_id": "7031859613460925736", "title": "台风登陆现场画面 #台风", "annotation": "真",
               "comments": ["注意安全", "家里停电了"], "count_like": 12}


def _video(native: str, run_id: str | None) -> dict:
    return {"video_id": f"T/{native}", "source": "T", "native_id": native, "run_id": run_id}


def _write_videos(run: StageRun, natives: list[str]) -> dict:
    for native in natives:
        run.db.insert("videos", _video(native, run.run_id))
    return run.counts


def _write_batches(run: StageRun, batches: list[list[str]], outside: list[str]) -> None:
    for batch in batches:
        with run.db.transaction():
            _write_videos(run, batch)
    _write_videos(run, outside)  # each statement commits on its own, as a careless stage's would


ONE = Stage("toy-keys", "curate toy-keys", "writes videos", ("videos",), ("videos",), _write_videos)
BATCHED = Stage("toy-keys-batched", "curate toy-keys-batched", "writes videos in batches", ("videos",),
                ("videos",), _write_batches, batched=True)


def _last_run(cat: Catalog) -> dict:
    return cat.rows("SELECT stage, status, error FROM runs ORDER BY started_at DESC LIMIT 1")[0]


# -- the runner ----------------------------------------------------------------------------------------------


def test_a_run_that_writes_a_video_twice_fails_naming_it_and_commits_nothing(catalog):
    with pytest.raises(DuplicateKeyError) as refused:
        ONE(catalog, ["1", "2", "1"])
    assert str(refused.value) == "duplicate key in videos: video_id 'T/1' twice; nothing was committed"
    assert catalog.scalar("SELECT count(*) FROM videos") == 0
    assert _last_run(catalog) == {"stage": "toy-keys", "status": "failed",
                                  "error": f"DuplicateKeyError: {refused.value}"}
    ONE(catalog, ["1", "2"])  # the same stage without the mistake
    assert catalog.scalar("SELECT count(*) FROM videos") == 2 and _last_run(catalog)["status"] == "ok"


def test_a_key_this_run_repeats_from_an_earlier_run_is_found_in_a_large_table(catalog):
    """A few rows written into a large table are checked by their keys alone, against every row."""
    catalog.con.execute("INSERT INTO videos (video_id, source, native_id, run_id) "
                        "SELECT 'T/' || i, 'T', CAST(i AS VARCHAR), 'ingest-earlier' FROM range(3000) r(i)")
    with pytest.raises(DuplicateKeyError, match="video_id 'T/2999' twice"):
        ONE(catalog, ["new-1", "2999"])
    assert catalog.scalar("SELECT count(*) FROM videos") == 3000


def test_a_comment_repeated_is_named_by_both_key_columns(catalog):
    def comment_twice(run: StageRun) -> None:
        for _ in range(2):
            run.db.insert("comments", {"comment_id": "c1", "video_id": "T/1", "text": "hi", "run_id": run.run_id})

    writer = Stage("toy-comments", "curate toy-comments", "writes comments", (), ("comments",), comment_twice)
    with pytest.raises(DuplicateKeyError, match=r"^duplicate key in comments: \(video_id, comment_id\) = "
                                                r"\('T/1', 'c1'\) twice; nothing was committed"):
        writer(catalog)
    assert catalog.scalar("SELECT count(*) FROM comments") == 0


def test_rows_that_name_no_run_are_checked_by_every_run_that_writes_the_table(catalog):
    """A duplicate of unknown origin (a hand edit, a tool that does not stamp its run) is not left in place
    by the next writer, even when that writer did not touch it."""
    for _ in range(2):
        catalog.insert("videos", _video("orphan", None))
    with pytest.raises(DuplicateKeyError, match="video_id 'T/orphan' twice"):
        ONE(catalog, ["1"])
    assert catalog.scalar("SELECT count(*) FROM videos WHERE video_id = 'T/1'") == 0


def test_a_batched_stage_keeps_the_batches_before_the_duplicate_and_not_its_batch(catalog):
    with pytest.raises(DuplicateKeyError, match="video_id 'T/2' twice; the batch was not committed"):
        BATCHED(catalog, [["1", "2"], ["3", "2"], ["4"]], [])
    assert [r[0] for r in catalog.con.execute("SELECT video_id FROM videos ORDER BY 1").fetchall()] == ["T/1", "T/2"]
    assert _last_run(catalog)["status"] == "failed"


def test_a_batched_stage_writing_outside_its_batches_fails_saying_the_duplicate_is_committed(catalog):
    with pytest.raises(DuplicateKeyError, match="video_id 'T/1' twice; written outside the stage's batches"):
        BATCHED(catalog, [["1"]], ["1"])
    assert _last_run(catalog)["status"] == "failed"


def test_every_table_has_a_key_declared_in_the_schema_or_in_unique_keys(catalog):
    declared = {r[0] for r in catalog.con.execute(
        "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'").fetchall()}
    unkeyed = set(catalog.tables()) - declared - {"schema_migrations"}
    assert unkeyed == set(UNIQUE_KEYS)
    for table, key in UNIQUE_KEYS.items():  # the map names real columns
        columns = {r[0] for r in catalog.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()}
        assert {*key.columns, key.run_column} <= columns


# -- each writer, as a user runs it --------------------------------------------------------------------------


def _write_fakesv(path, *records: dict) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def test_each_writer_keeps_one_row_per_key_when_its_input_repeats_one(tmp_path):
    db = str(tmp_path / "c.duckdb")
    corpus = tmp_path / "fakesv.jsonl"
    _write_fakesv(corpus, FAKESV_LINE, {**FAKESV_LINE, "title": "同一个视频又出现一次"})
    for _ in range(2):  # a re-run changes nothing
        out = curate("--catalog", db, "ingest", "fakesv", str(corpus))
        assert out.returncode == 0 and "2 read, 1 accepted, 1 rejected" in out.stdout, out.stderr
    _write_fakesv(corpus, {**FAKESV_LINE, "title": "标题改了"})  # the same record, changed
    out = curate("--catalog", db, "ingest", "fakesv", str(corpus))
    assert out.returncode == 0 and "1 updated" in out.stdout, out.stderr

    generated = tmp_path / "gen"
    generated.mkdir()
    for name in ("storm.mp4", "storm.webm", "flood.mp4"):  # two files with one name: one video id
        (generated / name).write_bytes(b"not decoded here")
    for _ in range(2):
        out = curate("--catalog", db, "media", "register-synthetic", str(generated), "--generator", "wan2.1")
        assert out.returncode == 0 and "3 read, 2 accepted, 1 rejected" in out.stdout, out.stderr

    release = write_release(tmp_path / "release")  # its tasks share videos: one stub each
    for _ in range(2):
        out = curate("--catalog", db, "release", "import-livingscreen", str(release), "--version", "1.0.0")
        assert out.returncode == 0, out.stderr

    with Catalog(db, read_only=True) as cat:
        assert cat.rows("SELECT title FROM videos WHERE video_id = 'FakeSV/7031859613460925736'") == [
            {"title": "标题改了"}]
        assert cat.scalar("SELECT count(*) FROM comments WHERE video_id = 'FakeSV/7031859613460925736'") == 2
        assert cat.scalar("SELECT reason FROM rejects WHERE stage = 'media-register-synthetic'").startswith(
            "duplicate video_id Synthetic/wan2.1/storm")
        released = {v for items in RELEASE.values() for t in items
                    for v in (*t["video_feed"], *t.get("keyword_videos", []), *t.get("other_videos", []))}
        assert cat.scalar("SELECT count(*) FROM videos WHERE metadata_missing") == len(released)
        for table, key in UNIQUE_KEYS.items():
            columns = ", ".join(key.columns)
            assert cat.scalar(f"SELECT count(*) - count(DISTINCT ({columns})) FROM {table}") == 0, table
        assert cat.scalar("SELECT count(*) FROM runs WHERE status <> 'ok'") == 0


def test_each_writer_refuses_to_leave_a_duplicate_in_the_catalog(tmp_path):
    """A catalog holding one video twice, with no run that wrote it: every writer of `videos` fails, exit 1,
    as a bug (a second row is never bad input: the stage should have merged it) with its traceback kept, and
    writes nothing, until the duplicate is removed."""
    db = tmp_path / "c.duckdb"
    with Catalog(db) as cat:
        for _ in range(2):
            cat.insert("videos", {"video_id": "FakeSV/1", "source": "FakeSV", "native_id": "1"})
        before = fingerprints(cat)
    corpus, generated = tmp_path / "fakesv.jsonl", tmp_path / "gen"
    _write_fakesv(corpus, FAKESV_LINE)
    generated.mkdir()
    (generated / "storm.mp4").write_bytes(b"not decoded here")
    writers = {"ingest": ("ingest", "fakesv", str(corpus)),
               "media-register-synthetic": ("media", "register-synthetic", str(generated), "--generator", "wan2.1"),
               "release-import-livingscreen": ("release", "import-livingscreen", str(write_release(tmp_path / "r")),
                                               "--version", "1.0.0")}
    for stage, command in writers.items():
        out = curate("--catalog", str(db), *command)
        assert out.returncode == 1, (stage, out.stdout, out.stderr)
        assert [line for line in out.stderr.splitlines() if line.startswith("error:")] == [
            "error: unexpected DuplicateKeyError: duplicate key in videos: video_id 'FakeSV/1' twice; nothing was "
            "committed (a bug, not bad input)"]
        assert "its traceback is kept in the catalog" in out.stderr
        with Catalog(db, read_only=True) as cat:
            assert {t: f for t, f in fingerprints(cat).items() if t != "runs"} == {
                t: f for t, f in before.items() if t != "runs"}, stage
            assert _last_run(cat)["stage"] == stage and _last_run(cat)["status"] == "failed"
    with Catalog(db) as cat:  # the user removes one of the two rows; the writers work again
        cat.con.execute("DELETE FROM videos WHERE rowid = (SELECT max(rowid) FROM videos)")
    for command in writers.values():
        assert curate("--catalog", str(db), *command).returncode == 0


# -- each writer, with a fault that makes it write its rows twice --------------------------------------------


@pytest.fixture
def rows_written_twice(monkeypatch):
    """Make every insert into `table` happen twice, as a writer with a merge bug would do it."""
    def into(table: str) -> None:
        insert, insert_staged = Catalog.insert, Catalog.insert_staged

        def insert_twice(self, name, row):
            for _ in range(2 if name == table else 1):
                insert(self, name, row)

        def insert_staged_twice(self, name, *args, **kwargs):
            for _ in range(2 if name == table else 1):
                insert_staged(self, name, *args, **kwargs)

        monkeypatch.setattr(Catalog, "insert", insert_twice)
        monkeypatch.setattr(Catalog, "insert_staged", insert_staged_twice)
    return into


def _synthetic(tmp_path):
    from curation.core.config import load_config
    from curation.media.synthetic import register_synthetic

    folder = tmp_path / "gen"
    folder.mkdir(exist_ok=True)
    (folder / "storm.mp4").write_bytes(b"not decoded here")
    return lambda cat: register_synthetic(cat, folder, "wan2.1", load_config().media)


@pytest.mark.parametrize(("writer", "table", "refusal"), [
    ("ingest", "videos", "duplicate key in videos: video_id 'FakeSV/7031859613460925736' twice; nothing was committed"),
    ("ingest", "comments", "duplicate key in comments: (video_id, comment_id) = ('FakeSV/7031859613460925736', "
                           "'FakeSV/7031859613460925736#c0') twice; nothing was committed"),
    # the links to the files are made from the videos just written, and their declared key refuses first
    ("media-register-synthetic", "videos", 'Constraint Error: PRIMARY KEY or UNIQUE constraint violation: '
                                           'duplicate key "Synthetic/wan2.1/storm"'),
    ("release-import-livingscreen", "videos", f"duplicate key in videos: video_id '{sorted(FAKESV)[0]}' twice; "
                                              "nothing was committed"),
])
def test_a_writer_that_writes_a_key_twice_is_refused(catalog, tmp_path, rows_written_twice, writer, table, refusal):
    corpus = tmp_path / "fakesv.jsonl"
    _write_fakesv(corpus, {**FAKESV_LINE, "video_id": "1"})
    ingest_path(catalog, "fakesv", corpus)  # rows of an earlier run, which must come through untouched
    before = fingerprints(catalog)
    _write_fakesv(corpus, FAKESV_LINE)
    run = {"ingest": lambda cat: ingest_path(cat, "fakesv", corpus),
           "media-register-synthetic": _synthetic(tmp_path),
           "release-import-livingscreen": lambda cat: import_livingscreen(cat, write_release(tmp_path / "r"), "1.0.0"),
           }[writer]
    rows_written_twice(table)
    with pytest.raises((DuplicateKeyError, duckdb.ConstraintException)) as refused:
        run(catalog)
    assert str(refused.value) == refusal
    assert {t: f for t, f in fingerprints(catalog).items() if t != "runs"} == {
        t: f for t, f in before.items() if t != "runs"}
    assert _last_run(catalog) == {"stage": writer, "status": "failed",
                                  "error": f"{type(refused.value).__name__}: {refused.value}"}
