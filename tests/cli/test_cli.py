"""The command line as a user runs it: real subprocesses, real catalog file."""

import os
import subprocess
import sys

from tests.conftest import FAKESV_PUBLIC, FIXTURES, KUAIREC_CSV, ROOT


def curate(*args: str, unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run([sys.executable, "-m", "curation.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)


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
    described = curate("--catalog", db, "describe")
    assert "writes: videos (4), comments (4), rejects (1)" in described.stdout
    missing = curate("--catalog", db, "explain", "FakeSV/nope")
    assert missing.returncode == 1 and "neither a video" in missing.stderr


def test_dry_run_and_clear_errors(tmp_path):
    db = tmp_path / "c.duckdb"
    out = curate("--catalog", str(db), "ingest", "kuairec", str(KUAIREC_CSV), "--dry-run")
    assert out.returncode == 0 and "10,728 read, 10,728 accepted, 0 rejected" in out.stdout
    assert not db.exists()
    for args, message, code in [
        (("ingest", "kuairec", str(tmp_path / "absent.csv")), "does not exist", 1),
        (("ingest", "kuairec", str(tmp_path)), "expects a file", 1),
        (("ingest", "nosuch", str(KUAIREC_CSV)), "unknown adapter", 2),
        (("ingest", "generic", str(KUAIREC_CSV)), "needs --mapping", 2),
    ]:
        out = curate("--catalog", str(db), *args)
        assert out.returncode == code, out.stderr
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], out.stderr
        assert not db.exists()  # refused before anything was written


def test_feeds_pipeline_from_the_command_line(embedded_catalog_file, tmp_path):
    import json
    import shutil

    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    override = tmp_path / "over.toml"
    override.write_text(f'[reports]\ndir = "{tmp_path / "reports"}"\n', encoding="utf-8")
    base = ("--catalog", str(db), "--config", str(override))
    out = curate(*base, "keywords")
    assert out.returncode == 0 and "0 keyword sets changed" in out.stdout, out.stderr
    out = curate(*base, "embed")
    assert out.returncode == 0 and out.stdout.startswith("0 texts encoded"), out.stdout + out.stderr
    out = curate(*base, "cluster", "--report")
    assert out.returncode == 0, out.stderr
    assert "KuaiRec second_level_category_name (" in out.stdout and "(shuffled labels " in out.stdout
    assert "chance-inflated" in out.stdout and "FakeSV:" in out.stdout
    assert (tmp_path / "reports" / "clusters.html").exists()
    out = curate(*base, "feeds", "build", "--n", "8", "--seed", "3", "--report")
    assert out.returncode == 0 and "8 written" in out.stdout, out.stderr
    assert "anchors: mean cosine " in out.stdout and "(random videos: " in out.stdout
    assert "<svg" in (tmp_path / "reports" / "feeds.html").read_text(encoding="utf-8")
    again = curate(*base, "feeds", "build", "--n", "8", "--seed", "3")
    assert "already up to date" in again.stdout
    shown = json.loads(curate(*base, "feeds", "show", "feed-3-0002").stdout)
    out = curate(*base, "feeds", "edit", "feed-3-0002", "--delete", "1", "--author", "carol")
    assert out.returncode == 0 and "version 2" in out.stdout, out.stderr
    edited = json.loads(curate(*base, "feeds", "show", "feed-3-0002").stdout)
    assert edited["video_feed"] == shown["video_feed"][1:]
    assert edited["edit"] == [{"op": "delete", "positions": [0], "author": "carol"}]
    old = json.loads(curate(*base, "feeds", "show", "feed-3-0002", "--version", "1").stdout)
    assert old == shown
    bad = curate(*base, "feeds", "edit", "feed-3-0002", "--delete", "99")
    assert bad.returncode == 1 and "outside the feed" in bad.stderr
    typo = curate(*base, "feeds", "edit", "feed-3-0002", "--delete", "2,x")
    assert typo.returncode == 2 and "1-based numbers" in typo.stderr and "Traceback" not in typo.stderr
    member = shown["video_feed"][0]
    explained = curate(*base, "explain", member).stdout
    assert "in feeds:" in explained and "feed-3-0002" in explained
    assert all(stage in explained for stage in ("(ingest,", "(keywords,", "(embed,", "(cluster,", "(feeds,"))
    out = curate(*base, "feeds", "export", str(tmp_path / "feeds"))
    assert "8 feeds written" in out.stdout
    assert len(list((tmp_path / "feeds").glob("feed-*.json"))) == 8
    drift = json.loads(curate(*base, "feeds", "drift", "--json").stdout)
    assert drift["feeds"] == 8 and drift["edited"] == 1
    listed = curate(*base, "feeds", "list", "--edited").stdout.splitlines()
    assert listed[0].startswith("feed-3-0002\tv2\t") and listed[-1] == "1 feeds"
    assert curate(*base, "feeds", "list", "--seed", "3", "--unsent").stdout.splitlines()[-1] == "8 feeds"


def test_every_user_failure_is_one_line_and_recorded(tmp_path):
    db = tmp_path / "c.duckdb"
    out = curate("--catalog", str(db), "ingest", "livebot", str(FIXTURES / "livebot"))
    assert out.returncode == 0, out.stderr
    for args, message in [
        (("feeds", "build", "--n", "3"), "no clustering yet: run `curate cluster` first"),
        (("cluster",), "no embeddings for"),
        (("feeds", "show", "feed-0-0000"), "no feed feed-0-0000"),
        (("media", "scan", str(tmp_path), "--source", "Nowhere"), "no [media.match] rule for source 'Nowhere'"),
    ]:
        out = curate("--catalog", str(db), *args)
        assert out.returncode == 1, (args, out.stderr)
        assert out.stderr.strip().splitlines() == [f"error: {out.stderr.strip()[7:]}"] and message in out.stderr
        assert "Traceback" not in out.stderr
    import duckdb
    with duckdb.connect(str(db), read_only=True) as con:
        failed = dict(con.execute("SELECT stage, error FROM runs WHERE status = 'failed'").fetchall())
    assert "no clustering yet" in failed["feeds"] and "no embeddings" in failed["cluster"]
    absent = tmp_path / "absent.duckdb"
    out = curate("--catalog", str(absent), "qc", "validate")
    assert out.returncode == 1 and "does not exist: run `curate ingest` first" in out.stderr and not absent.exists()
    bad = tmp_path / "bad.toml"
    bad.write_text("[feeds]\nratio_maximum = 3\n", encoding="utf-8")
    out = curate("--catalog", str(db), "--config", str(bad), "status")
    from dataclasses import fields

    from curation.core.config import FeedsConfig

    known = ", ".join(sorted(f.name for f in fields(FeedsConfig)))
    assert out.returncode == 1 and out.stderr.strip() == f"error: unknown key feeds.ratio_maximum (known: {known})"
    status = curate("--catalog", str(db), "status")
    shown = " ".join(status.stdout.split())
    assert "feeds-" in shown and "failed: PrerequisiteError: no clustering yet" in shown


def test_qc_gates_refuse_what_cannot_be_right_before_reaching_label_studio(tmp_path):
    db = tmp_path / "c.duckdb"
    assert curate("--catalog", str(db), "ingest", "livebot", str(FIXTURES / "livebot")).returncode == 0
    for args, code, message in [
        (("qc", "calibrate", "export", "--annotators", "alice", "--pilot", "2"), 2,
         "calibration needs at least two annotators"),
        (("qc", "calibrate", "export", "--annotators", "alice,bob"), 2, "give either --pilot N"),
        (("qc", "review", "export", "--reviewers", "alice, alice"), 2, "review needs at least two reviewers"),
        (("qc", "calibrate", "import"), 1, "LABEL_STUDIO_API_KEY"),
    ]:
        out = curate("--catalog", str(db), *args, unset=("LABEL_STUDIO_API_KEY",))
        assert out.returncode == code, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr, out.stderr


def test_a_mistyped_command_line_is_one_error_line_with_exit_2(tmp_path):
    for args, message in [(("release", "verify"), "Missing argument 'VERSION'"),
                          (("grade", str(tmp_path), "--release", "1.0.0", "--jsn"), "No such option: --jsn"),
                          (("release", "frobnicate"), "No such command 'frobnicate'"),
                          (("grade", str(tmp_path)), "Missing option '--release'"),
                          (("keywords", "--workers", "-1"), "--workers -1: give 0 (one per core) or more")]:
        out = curate(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert "Traceback" not in out.stderr and message.lower() in out.stderr.lower(), out.stderr


def test_explain_says_which_versions_a_renamed_task_holds(tmp_path):
    """A task renamed by a changed sub-category goes on with the old id's numbers: never "version 3 of 2"."""
    from curation.core.catalog import Catalog, now

    db = tmp_path / "c.duckdb"
    with Catalog(db) as cat:
        for task_id, version, state, reason in [("gui_like_3", 1, "retired", "renamed to gui_collect_3 v2"),
                                                ("gui_collect_3", 2, "valid", "renamed from gui_like_3 v1"),
                                                ("gui_collect_3", 3, "valid", None),
                                                ("gui_like_4", 1, "valid", None), ("gui_like_4", 2, "valid", None)]:
            cat.insert("tasks", {"task_id": task_id, "version": version, "author": "ada", "tier": "L1",
                                 "created_at": now()})
            for seq, (to, why) in enumerate([("authored", reason if state != "retired" else None), (state, None)]):
                cat.insert("task_transitions", {"task_id": task_id, "version": version, "seq": seq, "to_state": to,
                                                "reason": why if to == "authored" else reason, "who": "test",
                                                "run_id": "t", "moved_at": now()})
    renamed = curate("--catalog", str(db), "explain", "gui_collect_3")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout.splitlines()[0] == ("task gui_collect_3 (version 3; this id holds versions 2, 3, renamed "
                                              "from gui_like_3 v1, valid)")
    plain = curate("--catalog", str(db), "explain", "gui_like_4").stdout.splitlines()[0]
    assert plain == "task gui_like_4 (version 2 of 2, valid)"


def test_help_shows_the_settings_it_names():
    """Square brackets in help are rich markup unless escaped: `[catalog] path` must not vanish."""
    assert "(default: [catalog] path)" in " ".join(curate("--help").stdout.split())
    build = " ".join(curate("release", "build", "--help").stdout.replace("│", " ").split())
    assert "(default: [release] dir)" in build and "the [release] strict_* limits" in build


def test_refusals_by_the_catalogs_state_exit_1(tmp_path):
    """The README keeps exit 2 for a command line that cannot be right; what the catalog holds refusing a
    right command line is exit 1: a parent that is not recorded, grades that do not exist yet."""
    from tests.release.test_livingscreen import write_release

    db = str(tmp_path / "c.duckdb")
    assert curate("--catalog", db, "ingest", "fakesv", str(FAKESV_PUBLIC)).returncode == 0
    first, other = write_release(tmp_path / "first"), write_release(tmp_path / "other")
    (other / "gui_action.json").write_text("[]", encoding="utf-8")
    assert curate("--catalog", db, "release", "import-livingscreen", str(first), "--version", "1.0.0").returncode == 0
    for args, message in [(("release", "import-livingscreen", str(other), "--version", "1.0.0"),
                           "release 1.0.0 is already recorded (imported) with other content"),
                          (("grade", "audit", "export", "--release", "1.0.0"), "no graded episodes for release")]:
        out = curate("--catalog", db, *args)
        assert out.returncode == 1 and message in out.stderr, (args, out.returncode, out.stderr)
