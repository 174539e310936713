"""Releases as a benchmark user gets them: the card the Hub reads, each config loaded with
`datasets`, the runner's JSON, byte-identical rebuilds, semantic versions, and verify."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from curation.core.errors import PrerequisiteError, StateError, UsageError
from curation.corpus.feeds import load_feed
from curation.grade.lite_plan import lite_planner
from curation.qc.validate import validate_tasks
from curation.release.build import build_release
from curation.release.manifest import verify
from curation.tasks.runner_format import load_runner_dir
from tests.conftest import ROOT
from tests.core.contract import run_traced
from tests.qc.helpers import finish_qc, plant_task
from tests.release.helpers import load_release, reviewed_catalog, settings
from tests.release.test_lite_release import files_of, graded_ladder

RELEASED = {"gui_like_1", "feature_analysis_1", "feature_analysis_2", "moderation_1"}


def test_a_release_loads_with_datasets_runs_with_the_runner_and_names_nobody(clustered_catalog, tmp_path):
    from huggingface_hub import DatasetCard

    cat = clustered_catalog
    with pytest.raises(PrerequisiteError, match="no task has finished QC"):
        build_release(cat, "1.0.0", settings(tmp_path))
    reviewed_catalog(cat)
    built = run_traced(cat, "release-build", lambda: build_release(cat, "1.0.0", settings(tmp_path), repo="org/ls"))
    folder = tmp_path / "v1.0.0"
    assert built.folder == folder and built["tasks"] == 4
    assert built.configs == ["all", "l1_gui_action", "l2_cross_source_understanding", "l3_close_end_application"]

    card = DatasetCard.load(folder / "README.md")
    assert card.data.license == "other" and card.data.size_categories == ["n<1K"]
    assert [c["config_name"] for c in card.data.configs] == built.configs
    assert 'load_dataset("org/ls", "l2_cross_source_understanding",' in card.text
    expected = {"all": RELEASED, "l1_gui_action": {"gui_like_1"}, "l3_close_end_application": {"moderation_1"},
                "l2_cross_source_understanding": {"feature_analysis_1", "feature_analysis_2"}}
    for config, ids in expected.items():
        rows = load_release(folder, config)
        assert set(rows["task_id"]) == ids, config
    l2 = {r["task_id"]: r for r in load_release(folder, "l2_cross_source_understanding")}
    assert l2["feature_analysis_1"]["answer"] == "B" and l2["feature_analysis_1"]["options"][1] == {
        "label": "B", "text": "两种"}
    assert l2["feature_analysis_2"]["qc"]["review_outcome"] is None  # planted, not reviewed through the tool
    assert {r["author_id"] for r in l2.values()} == {"annotator-001", "annotator-002"}

    runner = load_runner_dir(folder / "livingscreen")
    assert [t["task_id"] for t in runner] == ["gui_like_1", "feature_analysis_1", "feature_analysis_2",
                                              "moderation_1"]
    assert not [d for d in validate_tasks(runner) if d.severity == "error"]
    first = next(t for t in runner if t["task_id"] == "feature_analysis_1")
    assert first["instruction"] == "这些视频里一共出现了几种动物？\nA:一种 B:两种 C:三种 D:无法确定"
    assert first["video_feed"] == l2["feature_analysis_1"]["video_feed"] and "keyword_videos" in first
    videos = pq.read_table(folder / "videos.parquet").to_pylist()
    used = {v for t in runner for v in t["video_feed"]}
    assert used <= {v["video_id"] for v in videos} and all(v["caption"] for v in videos if v["video_id"] in used)

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == "1.0.0" and manifest["counts"]["tasks"] == 4 and manifest["catalog_runs"]
    assert set(manifest["files"]) == {p.relative_to(folder).as_posix() for p in folder.rglob("*")
                                      if p.is_file()} - {"manifest.json"}
    everything = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    for secret in ("alice", "bob", "annotators.local", os.environ.get("LABEL_STUDIO_API_KEY") or "no-key"):
        assert secret.encode() not in everything, secret
    assert not re.search(rb"[\w.+-]+@[\w-]+\.[a-z]{2,}", everything)  # no e-mail address anywhere
    changelog = (folder / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "The first release." in changelog and "## Added (4)" in changelog


def test_rebuilds_are_byte_identical_never_overwrite_and_versions_move_as_semver_says(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = reviewed_catalog(cat)
    build_release(cat, "1.0.0", settings(tmp_path / "a"))
    again = build_release(cat, "1.0.0", settings(tmp_path / "b"))  # same catalog state, elsewhere
    files = sorted(p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b").as_posix() for p in again.folder.rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    with pytest.raises(StateError, match="never overwritten"):
        build_release(cat, "1.0.0", settings(tmp_path / "a"))
    with pytest.raises(UsageError, match="must come after its parent 1.0.0"):
        build_release(cat, "0.9.0", settings(tmp_path / "a"), parent="1.0.0")
    with pytest.raises(StateError, match="v1.0.1 would hold exactly what v1.0.0 holds: a release needs a change"):
        build_release(cat, "1.0.1", settings(tmp_path / "a"))  # no empty releases, not even a patch

    plant_task(cat, "gui_collect_1", feeds[0], tier="L1", subcategory="gui_collect", eval_type="platform",
               instruction="收藏第一个视频", options=None,
               eval_config=[{"func": "eval_collect", "args": {"video_ids": 0}}])
    finish_qc(cat, "gui_collect_1")
    with pytest.raises(UsageError, match="1 tasks added since 1.0.0: that is a minor change, so the version must be "
                                         "at least 1.1.0, not 1.0.1"):
        build_release(cat, "1.0.1", settings(tmp_path / "a"))
    with pytest.raises(StateError, match="already released with other content"):
        build_release(cat, "1.0.0", settings(tmp_path / "c"))
    minor = build_release(cat, "1.1.0", settings(tmp_path / "a"))
    assert minor.parent == "1.0.0" and minor.configs[-1] == "v1_0_0_to_v1_1_0"

    assert load_release(minor.folder, "v1_0_0_to_v1_1_0")["task_id"] == ["gui_collect_1"]
    assert len(load_release(minor.folder, "all")) == 5
    graded_ladder(cat, "1.0.0")  # a Lite config chosen from graded episodes rebuilds byte for byte too
    lite = [build_release(cat, "1.1.0", settings(tmp_path / d), lite=lite_planner(3)).folder for d in ("l1", "l2")]
    assert files_of(lite[0]) == files_of(lite[1]) and len(load_release(lite[0], "lite")) == 3

    # the group revised a task: a new version with new wording, reviewed again
    plant_task(cat, "moderation_1", feeds[3], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="举报那个不实视频，理由选不实信息", options=None, version=2, author="bob",
               eval_config=[{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "不实信息"}}])
    finish_qc(cat, "moderation_1", version=2)
    with pytest.raises(UsageError, match="0 tasks removed and 1 changed since 1.1.0: that is a major change"):
        build_release(cat, "1.2.0", settings(tmp_path / "a"))
    major = build_release(cat, "2.0.0", settings(tmp_path / "a"))
    # the issue's case: with 2.0.0 built, 2.1.0 "after 1.1.0" would be 2.0.0's content again under a new version
    with pytest.raises(StateError, match=r"v2.1.0's parent is v2.0.0, the latest release below it, not v1.1.0: "
                                         r"build with --parent 2.0.0"):
        build_release(cat, "2.1.0", settings(tmp_path / "a"), parent="1.1.0")
    with pytest.raises(StateError, match="v2.1.0 would hold exactly what v2.0.0 holds"):
        build_release(cat, "2.1.0", settings(tmp_path / "a"), parent="2.0.0")
    changelog = (major.folder / "CHANGELOG.md").read_text(encoding="utf-8")
    assert ("## Revised (1)\n\n- moderation_1\n  - before: 举报不实视频\n"
            "  - after: 举报那个不实视频，理由选不实信息") in changelog
    assert "## Added (0)" in changelog and major.configs[-1] == "l3_close_end_application"  # nothing added: no delta
    # a task released in 2.0.0 is deleted by the group (rewritten here as if its review had escalated it)
    cat.con.execute("DELETE FROM task_transitions WHERE task_id = 'gui_collect_1' AND to_state = 'reviewed_ok'")
    finish_qc(cat, "gui_collect_1", end="deleted")
    removed = build_release(cat, "3.0.0", settings(tmp_path / "a"))
    assert "- gui_collect_1: deleted: test: deleted" in (removed.folder / "CHANGELOG.md").read_text(encoding="utf-8")


def test_verify_names_the_file_that_changed_by_one_byte(clustered_catalog, tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)
    folder = build_release(cat, "1.0.0", settings(tmp_path)).folder
    assert verify(folder) == []
    target = folder / "livingscreen" / "gui_action.json"
    data = bytearray(target.read_bytes())
    data[10] ^= 1
    target.write_bytes(bytes(data))
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    problems = verify(folder)
    assert len(problems) == 2 and problems[0] == "notes.txt: not in the manifest"
    assert problems[1].startswith("livingscreen/gui_action.json: changed")
    out = subprocess.run([sys.executable, "-m", "curation.cli", "release", "verify", str(folder)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "livingscreen/gui_action.json: changed" in out.stdout


def test_the_command_line_builds_with_media_reports_and_lists(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = reviewed_catalog(cat)
    clip = tmp_path / "normalised.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42 a tiny stand-in")
    video = load_feed(cat, feeds[0]).video_feed[0]
    cat.insert("media_outputs", {"video_id": video, "output_path": str(clip), "run_id": "test"})
    cat.close()
    config = tmp_path / "curation.toml"
    config.write_text(f'[release]\ndir = "{tmp_path / "releases"}"\n[reports]\ndir = "{tmp_path / "reports"}"\n',
                      encoding="utf-8")
    base = [sys.executable, "-m", "curation.cli", "--catalog", str(cat.path), "--config", str(config), "release"]
    out = subprocess.run([*base, "build", "--version", "1.0.0", "--with-media"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "4 tasks" in out.stdout and "l2_cross_source_understanding (2)" in out.stdout
    folder = tmp_path / "releases" / "v1.0.0"
    assert (folder / "media" / f"{video}.mp4").read_bytes() == clip.read_bytes()
    page = (tmp_path / "reports" / "release-v1.0.0.html").read_text(encoding="utf-8")
    assert page.count("<svg") >= 4 and "L2 feature_analysis" in page
    again = subprocess.run([*base, "build", "--version", "1.0.0"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    # the catalog's state refuses it (the version exists), not the command line: exit 1, as the README says
    assert again.returncode == 1 and again.stderr.strip().endswith("choose a new version")
    typo = subprocess.run([*base, "build", "--version", "1.0"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert typo.returncode == 2 and "'1.0' is not a version: write MAJOR.MINOR.PATCH" in typo.stderr
    listed = subprocess.run([*base, "list"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert listed.stdout.startswith("1.0.0\tbuilt\tparent -\t4 tasks")
    verified = subprocess.run([*base, "verify", "v1.0.0"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0 and "every file matches the manifest" in verified.stdout


def test_a_build_killed_after_its_folder_appeared_is_finished_by_the_next(clustered_catalog, tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)
    folder = build_release(cat, "1.0.0", settings(tmp_path)).folder
    before = {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    cat.con.execute("DELETE FROM release_tasks")  # as if killed between the rename and the commit
    cat.con.execute("DELETE FROM releases")
    again = build_release(cat, "1.0.0", settings(tmp_path))
    assert {p.name: p.read_bytes() for p in again.folder.rglob("*") if p.is_file()} == before
    assert cat.scalar("SELECT count(*) FROM releases") == 1
