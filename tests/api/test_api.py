"""The notebook API (curation/api.py) on a catalog that went the whole way: feeds (one edited), tasks
through QC, a real shortcut filter run, reviews and decisions, a release and graded episodes. Every
frame is checked against SQL of its own on the same file, read with a separate DuckDB connection."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import curation.api
from curation.core.catalog import MIGRATIONS, Catalog, now
from curation.core.config import load_config
from curation.core.errors import CurationError, PrerequisiteError
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feeds import load_feed
from curation.grade.grade import grade_logs
from curation.qc.shortcut.filter import filter_shortcuts
from curation.release.build import build_release
from tests.cli.test_cli import curate
from tests.conftest import ROOT
from tests.grade.logs import UP, write_episode
from tests.qc.helpers import plant_giveaway_pair, plant_task
from tests.release.helpers import reviewed_catalog, settings

COLOURS = {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}


@pytest.fixture(scope="module")
def curated(clustered_catalog_file, tmp_path_factory) -> dict:
    """The catalog file, and what was done to it."""
    folder = tmp_path_factory.mktemp("curated")
    path = folder / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    with Catalog(path) as cat:
        feeds = reviewed_catalog(cat)
        build_release(cat, "1.0.0", settings(folder / "releases"))
        runner = {r["task_id"]: json.loads(r["runner"]) for r in cat.rows("SELECT * FROM release_tasks")}
        cat.con.execute("UPDATE videos SET duration_s = 10.0 WHERE list_contains(?, video_id)",
                        [sorted({v for t in runner.values() for v in t["video_feed"]})])
        for model, answers in (("model-a", {"feature_analysis_1": "B", "feature_analysis_2": "B"}),
                               ("model-b", {"feature_analysis_1": "C", "feature_analysis_2": "A"})):
            for task_id, answer in answers.items():
                write_episode(folder / "logs" / model / "all", task_id, runner[task_id]["instruction"],
                              [("watch", {"seconds": 5}), ("swipe", UP), ("answer", {"text": answer}),
                               ("finish", {})], result=0.0)
        write_episode(folder / "logs" / "model-a" / "all", "moderation_1", runner["moderation_1"]["instruction"],
                      [("swipe", UP), ("finish", {})], result=0.0)
        grade_logs(cat, [("model-a", folder / "logs" / "model-a"), ("model-b", folder / "logs" / "model-b")],
                   "1.0.0", folder / "grades")
        # two new tasks through the real shortcut filter: a title gives the first one's answer away
        plant_giveaway_pair(cat, feeds, first=3, leak_at=1, second_author="bob")
        filter_shortcuts(cat, load_config().qc.shortcut)
        # the reviews and decisions behind reviewed_catalog's states, as the review import stores them
        for task_id, reviewer, outcome in (("gui_like_1", "bob", "reviewed_ok"), ("feature_analysis_1", "alice",
                                           "reviewed_ok"), ("moderation_1", "alice", "reviewed_ok"),
                                           ("feature_analysis_2", "bob", "escalated"),
                                           ("event_association_1", "bob", "escalated")):
            cat.insert("reviews", {"task_id": task_id, "task_version": 1, "reviewer": reviewer, "outcome": outcome,
                                   "flags": [], "run_id": "review-1", "created_at": now()})
        for task_id, decision in (("feature_analysis_2", "kept"), ("event_association_1", "deleted")):
            cat.insert("decisions", {"task_id": task_id, "task_version": 1, "decision": decision,
                                     "decided_by": "group", "run_id": "adjudicate-1", "created_at": now()})
        edited = edit_feed(cat, feeds[2], [{"op": "reorder", "order": [2, 1, 0, *range(3, len(
            load_feed(cat, feeds[2]).video_feed))]}], load_config().feeds, author="alice")
    return {"path": path, "feeds": feeds, "edited": edited.feed_id}


def sql(path: Path, query: str, params: list | None = None) -> list[tuple]:
    """The independent reading: a connection of its own, plain tuples."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(query, params or []).fetchall()
    finally:
        con.close()


def columns_of(path: Path, relation: str) -> list[str]:
    return [r[0] for r in sql(path, f"DESCRIBE SELECT * FROM {relation}")]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_frame_agrees_with_sql_on_the_same_file(curated):
    path = curated["path"]
    before = digest(path)
    catalog = curation.api.open(path)
    frames = {name: getattr(catalog, name)() for name in ("videos", "feeds", "tasks", "transitions", "verdicts",
                                                          "reviews", "decisions", "grades", "funnel")}
    assert all(isinstance(frame, pl.DataFrame) for frame in frames.values())
    for name, table in (("videos", "videos"), ("transitions", "task_transitions"), ("verdicts", "shortcut_verdicts"),
                        ("reviews", "reviews"), ("decisions", "decisions"), ("grades", "episode_grades")):
        extra = ["of_record"] if name == "verdicts" else []  # the verdict that decided the version, or evidence
        assert frames[name].columns == [*columns_of(path, table), *extra], name
        assert frames[name].height == sql(path, f"SELECT count(*) FROM {table}")[0][0] > 0, name
    assert frames["tasks"].columns == [*columns_of(path, "tasks"), "state", "since", "fix_reason"]

    for (source, n) in sql(path, "SELECT source, count(*) FROM videos GROUP BY 1"):
        assert catalog.videos(source=source).height == n and set(catalog.videos(source=source)["source"]) == {source}
    assert catalog.videos(source="fakesv").height == 0  # sources are named as ingested: FakeSV

    feeds = frames["feeds"]
    assert feeds.columns == columns_of(path, "feeds")
    assert feeds.height == sql(path, "SELECT count(DISTINCT feed_id) FROM feeds")[0][0] == len(curated["feeds"])
    assert dict(zip(feeds["feed_id"], feeds["version"], strict=True)) == dict(
        sql(path, "SELECT feed_id, max(version) FROM feeds GROUP BY 1"))

    # the state of a version is its last move; the latest version is the task
    last_moves = dict(sql(path, """
        SELECT x.task_id, arg_max(x.to_state, x.seq) FROM task_transitions x
        WHERE x.version = (SELECT max(version) FROM tasks t WHERE t.task_id = x.task_id) GROUP BY 1"""))
    tasks = frames["tasks"]
    assert dict(zip(tasks["task_id"], tasks["state"], strict=True)) == last_moves == {
        "gui_like_1": "reviewed_ok", "feature_analysis_1": "reviewed_ok", "moderation_1": "reviewed_ok",
        "feature_analysis_2": "kept", "event_association_1": "deleted", "contextual_association_1": "needs_fix",
        "feature_analysis_3": "shortcut_discarded", "feature_analysis_4": "shortcut_passed"}
    assert tasks.filter(pl.col("state") == "needs_fix")["fix_reason"].to_list() == [None]  # planted without one
    assert dict(zip(frames["verdicts"]["task_id"], frames["verdicts"]["verdict"], strict=True)) == {
        "feature_analysis_3": "shortcut_discarded", "feature_analysis_4": "shortcut_passed"}
    assert frames["reviews"].filter(pl.col("outcome") == "escalated")["task_id"].to_list() == [
        "event_association_1", "feature_analysis_2"]

    # grades: row for row what episode_grades holds
    graded = frames["grades"]
    assert graded.rows() == sql(path, "SELECT * FROM episode_grades ORDER BY release, model, task_id")
    assert catalog.grades(model="model-b")["task_id"].to_list() == ["feature_analysis_1", "feature_analysis_2"]
    assert catalog.grades(release="2.0.0").height == 0
    assert graded.filter(pl.col("sr") == 1.0).select("model", "task_id").rows() == [
        ("model-a", "feature_analysis_1"), ("model-b", "feature_analysis_2")]  # B and A are the answers

    funnel = frames["funnel"]
    everything = funnel.filter(pl.col("level") == "all").row(0, named=True)
    assert everything["tasks"] == sql(path, "SELECT count(DISTINCT task_id) FROM tasks")[0][0] == 8
    # each task once, in the state its latest version is in now (read here straight from the life cycle)
    now = dict(sql(path, "SELECT s.state, count(*) FROM task_states s JOIN latest_tasks t USING (task_id, version) "
                         "GROUP BY 1"))
    for state in ("valid", "shortcut_discarded", "shortcut_passed", "reviewed_ok", "escalated", "deleted"):
        assert everything[state] == now.get(state, 0), state
    assert everything["kept"] + everything["inherited"] == now.get("kept", 0)
    assert everything["adds_up"] and everything["end_state_sum"] == 8
    per_tier = dict(funnel.filter(pl.col("level") == "tier").select("group", "tasks").rows())
    assert per_tier == dict(sql(path, "SELECT tier, count(DISTINCT task_id) FROM tasks GROUP BY 1")) == {
        "L1": 1, "L2": 6, "L3": 1}
    assert digest(path) == before  # nothing read here wrote the file


def test_feeds_at_a_version_and_as_they_stand_differ_after_an_edit(curated, tmp_path):
    path = tmp_path / "catalog.duckdb"
    shutil.copy(curated["path"], path)
    catalog = curation.api.open(path)
    feed_id = curated["feeds"][0]
    built = catalog.feeds(version=1, feed_id=feed_id).row(0, named=True)
    assert catalog.feeds(feed_id=feed_id).row(0, named=True) == built  # never edited: its latest is version 1
    # the user edits the feed in a terminal while the notebook keeps its reader
    out = curate("--catalog", str(path), "feeds", "edit", feed_id, "--delete", "2", "--author", "carol")
    assert out.returncode == 0, out.stderr
    latest = catalog.feeds(feed_id=feed_id).row(0, named=True)
    assert latest["version"] == 2 and latest["video_feed"] == [v for n, v in enumerate(built["video_feed"]) if n != 1]
    assert catalog.feeds(version=1, feed_id=feed_id).rows(named=True) == [built]  # version 1 stays as it was
    first = catalog.feeds(version=1)
    assert first["version"].unique().to_list() == [1] and first.height == len(curated["feeds"])
    assert catalog.feeds(version=2)["feed_id"].sort().to_list() == sorted([feed_id, curated["edited"]])
    assert catalog.feeds(version=3).height == 0
    assert [r[0] for r in sql(path, "SELECT version FROM feeds WHERE feed_id = ? ORDER BY 1", [feed_id])] == [1, 2]


def test_a_task_state_follows_a_transition_made_by_a_stage(curated, tmp_path):
    path = tmp_path / "catalog.duckdb"
    shutil.copy(curated["path"], path)
    with Catalog(path) as cat:
        plant_task(cat, "feature_analysis_5", curated["feeds"][3], tier="L2", subcategory="feature_analysis",
                   eval_type="label", instruction="视频里的狗是什么颜色？", options=COLOURS,
                   eval_config=[{"answer": "A"}])
    catalog = curation.api.open(path)
    before = catalog.tasks().filter(pl.col("task_id") == "feature_analysis_5").row(0, named=True)
    assert before["state"] == "valid"
    out = curate("--catalog", str(path), "qc", "shortcut", "--no-report")
    assert out.returncode == 0, out.stderr
    after = catalog.tasks().filter(pl.col("task_id") == "feature_analysis_5").row(0, named=True)
    assert after["state"] == "shortcut_passed" and after["since"] > before["since"]
    moves = catalog.transitions("feature_analysis_5")
    assert moves["to_state"].to_list() == ["authored", "valid", "shortcut_passed"]
    assert moves["who"][-1] == sql(path, "SELECT who FROM task_transitions WHERE task_id = 'feature_analysis_5' "
                                         "ORDER BY seq DESC LIMIT 1")[0][0]


def test_frames_come_from_arrow_without_a_copy(curated):
    catalog = curation.api.open(curated["path"])
    query = "SELECT * FROM episode_grades ORDER BY release, model, task_id"
    table = catalog.arrow(query)
    frame = curation.api.frame_of(table)
    assert frame.equals(catalog.grades())  # the method reads through the same path
    for name in ("sr", "ns", "wr", "watch_s"):
        arrow_buffers = [chunk.buffers()[1].address for chunk in table.column(name).chunks]
        polars_buffers = [chunk.buffers()[1].address for chunk in frame.to_arrow().column(name).chunks]
        assert arrow_buffers == polars_buffers, name  # the frame's values are DuckDB's Arrow buffers
    # a result of several record batches stays in its chunks (joining them would be a copy)
    two = pa.concat_tables([table, table])
    assert frame_of_chunks(curation.api.frame_of(two), "sr") == [chunk.buffers()[1].address
                                                                for chunk in two.column("sr").chunks]


def frame_of_chunks(frame: pl.DataFrame, name: str) -> list[int]:
    return [chunk.buffers()[1].address for chunk in frame.to_arrow().column(name).chunks]


def test_the_reader_never_writes(curated):
    catalog = curation.api.open(curated["path"])
    before = digest(curated["path"])
    with pytest.raises(duckdb.Error, match="read-only"):
        catalog.sql("DELETE FROM videos")
    assert catalog.sql("SELECT count(*) AS n FROM videos")["n"][0] > 0
    assert digest(curated["path"]) == before


def test_a_missing_file_a_typo_and_an_old_catalog_are_refused_clearly(curated, tmp_path):
    typo = curated["path"].with_name("catalog.duckbd")
    with pytest.raises(PrerequisiteError, match=re.escape(f"catalog {typo} does not exist")):
        curation.api.open(typo)
    (tmp_path / "notes.duckdb").write_text("not a database", encoding="utf-8")
    with pytest.raises(CurationError, match="notes.duckdb cannot be opened"):
        curation.api.open(tmp_path / "notes.duckdb")
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    with pytest.raises(PrerequisiteError, match="without a catalog schema"):
        curation.api.open(tmp_path / "empty.duckdb")

    old = tmp_path / "old.duckdb"
    cat = Catalog.__new__(Catalog)  # a catalog as the toolkit left it at schema 16
    cat.path, cat.con, cat._depth = old, duckdb.connect(str(old)), 0
    cat._migrate(MIGRATIONS[:16])
    cat.con.close()
    before = digest(old)
    with pytest.raises(PrerequisiteError, match=re.escape(
            f"schema version 16, this toolkit reads {len(MIGRATIONS)}: run `curate --catalog {old} migrate`")):
        curation.api.open(old)
    assert digest(old) == before  # refused, not migrated behind the user's back
    status = curate("--catalog", str(old), "status")  # a read-only command refuses too, naming the same command
    assert status.returncode == 1 and f"curate --catalog {old} migrate" in status.stderr and digest(old) == before
    out = curate("--catalog", str(old), "migrate")  # the command the message names
    assert out.returncode == 0 and f"schema version 16 -> {len(MIGRATIONS)}" in out.stdout, out.stderr
    assert curation.api.open(old).tasks().height == 0


def test_the_api_pages_example_runs_on_a_real_catalog(curated, tmp_path, monkeypatch):
    manual = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = manual.split("## From a notebook", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    (tmp_path / "build").mkdir()
    shutil.copy(curated["path"], tmp_path / "build" / "catalog.duckdb")
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(compile(example, "docs/api.md (From a notebook)", "exec"), names)
    path = tmp_path / "build" / "catalog.duckdb"

    assert dict(names["per_state"].rows()) == dict(sql(path, """
        SELECT s.state, count(*) FROM task_states s JOIN latest_tasks t USING (task_id, version)
        WHERE s.state <> 'retired' GROUP BY 1"""))
    assert names["sr"].rows() == sql(path, "SELECT release, model, tier, avg(sr), count(*) FROM episode_grades "
                                           "GROUP BY ALL ORDER BY ALL")
    assert names["edited"]["feed_id"].to_list() == [curated["edited"]]
    assert names["funnel"].select("group", "tasks").rows() == sql(
        path, "SELECT tier, count(DISTINCT task_id) FROM tasks GROUP BY 1 ORDER BY 1")
