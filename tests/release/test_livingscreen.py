"""Runner-format releases in and out: the round trip gives back the same JSON, task for task."""

from __future__ import annotations

import json

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.errors import PrerequisiteError, StateError
from curation.qc.validate import validate_catalog
from curation.release.build import ReleaseGateError, build_release
from curation.release.livingscreen import export_livingscreen, import_livingscreen
from curation.tasks.lifecycle import state_of
from curation.tasks.record import from_catalog
from curation.tasks.runner_format import catalog_task_rows
from tests.core.contract import run_traced
from tests.release.helpers import reviewed_catalog, settings

LIVEBOT = "LiveBot/美食/【深夜食堂】一碗热汤面"
FAKESV = [f"FakeSV/{7000000000000000000 + n}" for n in range(12)]
# The shapes of the public release: instructions with full-width option marks and line breaks, L2 base
# lists holding a video the annotator deleted and missing one they swapped in, LiveBot and
# Video-SafetyBench ids, platform checks with every argument kind.
RELEASE = {
    "gui_action.json": [
        {"task_id": "gui_like_7", "instruction": "给第三个视频点赞", "video_feed": FAKESV[:5], "eval_type": "platform",
         "eval_config": [{"func": "eval_like", "args": {"video_ids": 2}}]},
        {"task_id": "gui_temporal_pause_2", "instruction": "把第一个视频暂停在一半的位置",
         "video_feed": [LIVEBOT, *FAKESV[5:8]], "eval_type": "platform",
         "eval_config": [{"func": "eval_playback", "args": {"video_id": 0, "target_pct": 0.5}}]}],
    "cross_source_understanding.json": [
        {"task_id": "feature_analysis_12", "instruction": "视频里的猫是什么颜色？\nA：白色；B：黑色；C：以上说法都不对",
         "keyword_videos": FAKESV[:3], "other_videos": FAKESV[3:6] + ["Video-SafetyBench/violence/0001"],
         "video_feed": [FAKESV[1], FAKESV[9], FAKESV[0], FAKESV[4], FAKESV[3], FAKESV[5]],
         "eval_type": "label", "eval_config": [{"answer": "A"}]},
        {"task_id": "robust_evaluation_3", "instruction": "作者明天会发什么？ A:美食 B:旅行 C:无法确定",
         "keyword_videos": FAKESV[6:8], "other_videos": [LIVEBOT], "video_feed": [FAKESV[7], LIVEBOT, FAKESV[6]],
         "eval_type": "label", "eval_config": [{"answer": "C"}]}],
    "close_end_application.json": [
        {"task_id": "moderation_4", "instruction": "举报不实视频并评论“已核实”", "video_feed": FAKESV[2:9],
         "eval_type": "platform", "eval_config": [
             {"func": "eval_report",
              "args": {"video_ids": [1, 3], "expected_cat": "不实信息", "expected_reason": "谣言"}},
             {"func": "eval_comment", "args": {"video_ids": 0, "comment": "已核实"}}]}],
}


def write_release(folder, release=RELEASE):
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in release.items():
        (folder / name).write_text(json.dumps(items, ensure_ascii=False, indent=4), encoding="utf-8")
    return folder


def read_release(folder):
    return {name: json.loads((folder / name).read_text(encoding="utf-8")) for name in RELEASE}


def test_import_then_export_gives_back_the_same_json_in_the_same_order(catalog, tmp_path):
    source = write_release(tmp_path / "v1")
    counts = run_traced(catalog, "release-import-livingscreen", lambda: import_livingscreen(catalog, source, "1.0.0"))
    assert (counts["elements"], counts["tasks_new"], counts["rejected"]) == (5, 5, 0)
    run_traced(catalog, "release-export-livingscreen", lambda: export_livingscreen(catalog, "1.0.0", tmp_path / "out"))
    assert read_release(tmp_path / "out") == RELEASE
    # the catalog holds the tasks themselves: tiers, sub-categories, options, the base feed and the edited one
    rows = {r["task_id"]: r for r in catalog_task_rows(catalog)}
    feature = rows["feature_analysis_12"]
    assert (feature["tier"], feature["subcategory"], feature["instruction"]) == ("L2", "feature_analysis",
                                                                                  "视频里的猫是什么颜色？")
    assert json.loads(feature["options"]) == {"A": "白色", "B": "黑色", "C": "以上说法都不对"}
    assert (feature["base_feed_version"], feature["feed_version"]) == (1, 2)
    for items in RELEASE.values():
        for item in items:
            mine = from_catalog(rows[item["task_id"]]).to_runner()
            assert {k: v for k, v in mine.items() if k != "instruction"} == {
                k: v for k, v in item.items() if k != "instruction"}, item["task_id"]
    assert state_of(catalog, "moderation_4", 1) == "imported"
    stubs = catalog.scalar("SELECT count(*) FROM videos WHERE metadata_missing")
    assert stubs == len({v for items in RELEASE.values() for t in items
                         for k in ("video_feed", "keyword_videos", "other_videos") for v in t.get(k, [])})
    # validation settles imported tasks; the filter then takes them like any other
    validate_catalog(catalog, load_config().feeds)
    assert {state_of(catalog, t, 1) for t in rows} <= {"valid", "needs_fix"}
    # importing the same release again changes nothing; the same version with other content is refused
    assert import_livingscreen(catalog, source, "1.0.0")["tasks_unchanged"] == 5
    changed = {**RELEASE, "gui_action.json": RELEASE["gui_action.json"][:1]}
    with pytest.raises(StateError, match="already recorded"):
        import_livingscreen(catalog, write_release(tmp_path / "v1b", changed), "1.0.0")
    assert catalog.scalar("SELECT count(*) FROM tasks") == 5


def test_a_malformed_task_is_rejected_with_its_reason_and_the_rest_come_in(catalog, tmp_path):
    broken = {**RELEASE, "gui_action.json": [*RELEASE["gui_action.json"],
                                             {"task_id": "gui_like_9", "instruction": "点赞", "video_feed": "FakeSV/1",
                                              "eval_type": "platform", "eval_config": []}]}
    counts = import_livingscreen(catalog, write_release(tmp_path / "v1", broken), "1.0.0")
    assert counts["elements"] == counts["tasks_new"] + counts["rejected"] == 6 and counts["rejected"] == 1
    reject = catalog.rows("SELECT * FROM rejects WHERE stage = 'release-import-livingscreen'")[0]
    assert reject["record_id"] == "gui_like_9" and "video_feed must be a non-empty list" in reject["reason"]
    assert reject["raw_ref"].endswith("gui_action.json[2]")
    export_livingscreen(catalog, "1.0.0", tmp_path / "out")
    assert read_release(tmp_path / "out") == broken  # the release is what it was, flaws included


def test_a_built_release_exports_as_its_own_runner_files(clustered_catalog, tmp_path):
    cat: Catalog = clustered_catalog
    reviewed_catalog(cat)
    folder = build_release(cat, "1.0.0", settings(tmp_path / "releases")).folder
    export_livingscreen(cat, "1.0.0", tmp_path / "out")
    assert read_release(tmp_path / "out") == read_release(folder / "livingscreen")
    with pytest.raises(PrerequisiteError, match="no release 9.9.9 is recorded"):
        export_livingscreen(cat, "9.9.9", tmp_path / "none")


def test_a_release_built_on_an_imported_one_keeps_its_tasks_word_for_word(catalog, tmp_path):
    from tests.qc.helpers import finish_qc

    import_livingscreen(catalog, write_release(tmp_path / "v1"), "1.0.0")
    validate_catalog(catalog, load_config().feeds)
    for items in RELEASE.values():
        for item in items:  # the group deletes one task; every other one is reviewed as it came
            finish_qc(catalog, item["task_id"], end="deleted" if item["task_id"] == "gui_like_7" else "reviewed_ok")
    # gui_temporal_pause_2 checks playback, which the public runner cannot grade: the team ships it saying why
    with pytest.raises(ReleaseGateError, match=r"gui_temporal_pause_2 \(ungradable-in-runner\)"):
        build_release(catalog, "2.0.0", settings(tmp_path / "releases"))
    why = "played in our runner, which grades playback"
    built = build_release(catalog, "2.0.0", settings(tmp_path / "releases"), accept_ungradable=why)
    assert built.parent == "1.0.0" and (built.diff.added, built.diff.changed) == ([], [])
    assert [t for t, _ in built.diff.removed] == ["gui_like_7"]
    kept = {**RELEASE, "gui_action.json": [t for t in RELEASE["gui_action.json"] if t["task_id"] != "gui_like_7"]}
    assert read_release(built.folder / "livingscreen") == kept
    manifest = json.loads((built.folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["stated"]["accept_ungradable"] == why
    assert manifest["runner"]["commit"].startswith("f02d1bc") and manifest["runner"]["ungradable"] == ["eval_playback"]
