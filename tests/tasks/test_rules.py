import copy
import dataclasses
import json
import subprocess
import sys

import pytest

from curation.env.profile import default_profile
from curation.qc.validate import validate_tasks as _validate
from curation.tasks.rules import RULES, RuleContext
from tests.conftest import ROOT, grading_runner_profile

# a team's runner that grades every check: these tests are about the other rules (the public runner cannot grade
# playback at all: tests/tasks/test_idle.py, test_doors.py)
GRADES_ALL = dataclasses.replace(default_profile(), ungradable=frozenset())


def validate_tasks(tasks, known_videos=None, durations=None):
    return _validate(tasks, RuleContext(known_videos=known_videos, durations=durations or {}, profile=GRADES_ALL))


def grades_all_config(folder):
    """A configuration that states the team's own runner profile: the public one with playback graded."""
    (folder / "curation.toml").write_text(f'[runner]\nprofile = "{grading_runner_profile(folder)}"\n',
                                          encoding="utf-8")
    return folder / "curation.toml"

FEED = [f"FakeSV/{i}" for i in range(8)]
CLEAN = [
    {"task_id": "feature_analysis_1", "instruction": "视频里的猫是什么颜色？\nA:白色 B:黑色 C:橘色 D:无法确定",
     "video_feed": FEED, "keyword_videos": FEED[:3], "other_videos": FEED[3:], "eval_type": "label",
     "eval_config": [{"answer": "C"}]},
    {"task_id": "robust_evaluation_1", "instruction": "作者下一条视频会拍什么？A：美食；B：旅行；C：无法确定",
     "video_feed": FEED, "keyword_videos": FEED[:4], "other_videos": FEED[4:], "eval_type": "label",
     "eval_config": [{"answer": "C"}]},
    {"task_id": "moderation_1", "instruction": "举报传播谣言的视频，并在辟谣视频下评论“已核实”",
     "video_feed": FEED, "eval_type": "platform",
     "eval_config": [{"func": "eval_report", "args": {"video_ids": [1, 4], "expected_cat": "不实信息"}},
                     {"func": "eval_comment", "args": {"video_ids": 2, "comment": "已核实"}}]},
    {"task_id": "gui_temporal_pause_1", "instruction": "把第三个视频暂停在一半", "video_feed": FEED,
     "eval_type": "platform",
     "eval_config": [{"func": "eval_playback", "args": {"video_id": 2, "target_pct": 0.5}},
                     {"func": "eval_current_video", "args": {"video_id": 2}}]},
]


def test_clean_tasks_raise_nothing():
    assert validate_tasks(CLEAN, known_videos=set(FEED), durations={v: 30.0 for v in FEED}) == []


def _plant(index, change):
    tasks = copy.deepcopy(CLEAN)
    change(tasks[index])
    return tasks


PLANTED = [  # each one: the task cannot be run or graded as written
    ("duplicate-task-id", 1, lambda t: t.update(task_id="feature_analysis_1")),
    ("eval-type-unknown", 0, lambda t: t.update(eval_type="choice")),
    ("instruction-empty", 3, lambda t: t.update(instruction=" ")),
    ("options-unparsed", 0, lambda t: t.update(instruction="猫是什么颜色？")),
    ("answer-not-an-option", 0, lambda t: t.update(eval_config=[{"answer": "E"}])),
    ("answer-malformed", 0, lambda t: t.update(eval_config=[{"answer": "C"}, {"answer": "D"}])),
    ("answer-malformed", 0, lambda t: t.update(eval_config=[{"answer": "橘色"}])),  # the option's text, not its letter
    ("answer-missing", 0, lambda t: t.update(eval_config=[{"answer": ""}])),
    ("answer-missing", 0, lambda t: t.update(eval_config=[])),
    ("answer-malformed", 0, lambda t: t.update(eval_config=[{"answer": "2"}])),
    ("unknown-subcategory", 0, lambda t: t.update(task_id="feature_analysys_1")),
    ("eval-type-mismatch", 2, lambda t: t.update(task_id="event_association_9")),
    ("label-has-end-state", 0, lambda t: t["eval_config"].append({"func": "eval_like", "args": {"video_ids": 1}})),
    ("platform-has-answer", 2, lambda t: t["eval_config"].append({"answer": "A"})),
    ("unknown-func", 2, lambda t: t["eval_config"].append({"func": "eval_share", "args": {"video_ids": 1}})),
    ("unexpected-arg", 3, lambda t: t["eval_config"][1]["args"].update(target_pct=0.3)),
    ("missing-arg", 3, lambda t: t["eval_config"][0]["args"].pop("target_pct")),
    ("position-not-integer", 2, lambda t: t["eval_config"][0]["args"].update(video_ids=["1"])),
    ("position-outside-feed", 2, lambda t: t["eval_config"][0]["args"].update(video_ids=[1, 8])),
    # the runner's "no other video" rule reads positions 1-20: a 22nd video could be liked unseen
    ("feed-too-long", 3, lambda t: t.update(video_feed=[f"FakeSV/{i}" for i in range(22)])),
    ("report-category-unknown", 2, lambda t: t["eval_config"][0]["args"].update(expected_cat="暴力")),
    ("target-pct-out-of-range", 3, lambda t: t["eval_config"][0]["args"].update(target_pct=50)),
    ("target-sec-negative", 3, lambda t: t["eval_config"][0].update(args={"video_id": 2, "target_sec": -1})),
    ("target-sec-beyond-duration", 3, lambda t: t["eval_config"][0].update(args={"video_id": 2, "target_sec": 31})),
    ("checks-missing", 3, lambda t: t.update(eval_config=[])),
    ("feed-empty", 3, lambda t: t.update(video_feed=[])),
    ("feed-unknown-video", 3, lambda t: t.update(video_feed=FEED[:7] + ["KuaiRec/404"])),
]


@pytest.mark.parametrize(("code", "index", "change"), PLANTED, ids=[f"{p[0]}-{i}" for i, p in enumerate(PLANTED)])
def test_each_planted_error_is_found(code, index, change):
    defects = validate_tasks(_plant(index, change), known_videos=set(FEED) | {f"FakeSV/{i}" for i in range(21)},
                             durations={v: 30.0 for v in FEED})
    errors = [d for d in defects if d.severity == "error"]
    assert code in {d.code for d in errors}, defects
    assert {d.task_id for d in errors} <= {CLEAN[index]["task_id"], _plant(index, change)[index]["task_id"]}
    assert all("\n" not in d.message for d in defects)
    assert all(d.severity == RULES[d.code].severity for d in defects)


DOUBTFUL = [  # a person should look, but the task runs and grades as written
    ("no-cannot-determine-option", 1, lambda t: t.update(instruction="下一条拍什么？A：美食；B：旅行；C：游戏")),
    ("comment-text-missing", 2, lambda t: t["eval_config"][1]["args"].pop("comment")),
    ("feed-duplicate-video", 3, lambda t: t.update(video_feed=FEED + [FEED[0]])),
    ("feed-keyword-other-overlap", 0, lambda t: t.update(other_videos=FEED[2:7])),
    # 5 distractors for 3 anchors; deleting an anchor plays 5 for 2 (2.50), what `feeds drift` flags
    ("feed-ratio-drifted", 0, lambda t: t.update(video_feed=[v for v in FEED if v != FEED[1]])),
]


@pytest.mark.parametrize(("code", "index", "change"), DOUBTFUL, ids=[p[0] for p in DOUBTFUL])
def test_doubtful_tasks_are_warnings_not_errors(code, index, change):
    defects = validate_tasks(_plant(index, change), known_videos=set(FEED) | {f"FakeSV/{i}" for i in range(21)},
                             durations={v: 30.0 for v in FEED})
    assert code in {d.code for d in defects if d.severity == "warning"}, defects
    assert not [d for d in defects if d.severity == "error"], defects


def test_duplicate_video_names_both_positions():
    (defect,) = [d for d in validate_tasks(_plant(3, lambda t: t.update(video_feed=FEED[:3] + [FEED[0]] + FEED[3:])))
                 if d.code == "feed-duplicate-video"]
    assert "FakeSV/0" in defect.message and "positions 1 and 4" in defect.message


LOOKS_WRONG_BUT_VALID = [  # what a real, annotator-edited release holds
    ("a base video deleted by the annotator", 0, lambda t: t.update(video_feed=[v for v in FEED if v != FEED[4]])),
    ("a distractor swapped in", 0, lambda t: t.update(video_feed=FEED[:7] + ["FakeSV/20"])),
    ("'none of the above' as the unanswerable option", 1,
     lambda t: t.update(instruction="作者下一条会拍什么？\nA:美食 B:旅行 C:以上说法都不对")),
    ("punctuation and spaces in it", 1,
     lambda t: t.update(instruction="下一条拍什么？A: 美食 B: 旅行 C: 以上说法 都不对。")),
    ("English phrasing", 1, lambda t: t.update(instruction="What next?\nA: food B: travel C: None of the above")),
    ("options written 'A.'", 0, lambda t: t.update(instruction="猫是什么颜色？\nA.白色 B.黑色 C.橘色 D.无法确定")),
    ("position 0 and the last position", 2, lambda t: t["eval_config"][0]["args"].update(video_ids=[0, 7])),
    ("a pause target exactly at the end", 3,
     lambda t: t["eval_config"][0].update(args={"video_id": 2, "target_sec": 30.0})),
    ("a report with its reason", 2, lambda t: t["eval_config"][0]["args"].update(expected_reason="造谣")),
    ("a feed of 21 videos, the longest the runner's checks read", 3,
     lambda t: t.update(video_feed=[f"FakeSV/{i}" for i in range(21)])),
]


@pytest.mark.parametrize(("case", "index", "change"), LOOKS_WRONG_BUT_VALID, ids=[c[0] for c in LOOKS_WRONG_BUT_VALID])
def test_valid_tasks_that_look_suspicious_raise_no_error(case, index, change):
    defects = validate_tasks(_plant(index, change), known_videos={f"FakeSV/{i}" for i in range(21)},
                             durations={f"FakeSV/{i}": 30.0 for i in range(21)})
    assert not [d for d in defects if d.severity != "info"], defects


def test_edits_of_the_base_feed_are_counted_as_notes():
    deleted_and_swapped = _plant(0, lambda t: t.update(video_feed=FEED[2:7] + ["FakeSV/20"]))
    (note,) = [d for d in validate_tasks(deleted_and_swapped) if d.code == "feed-edited"]
    assert note.severity == "info" and "3 base videos deleted, 1 videos swapped in" in note.message


def test_warnings_ratio_and_near_duplicates():
    tasks = copy.deepcopy(CLEAN)
    tasks[0]["other_videos"] = FEED[3:4]  # 1 distractor for 3 keyword videos
    tasks.append({**copy.deepcopy(CLEAN[3]), "task_id": "gui_temporal_pause_2"})
    defects = [d for d in validate_tasks(tasks) if d.severity != "info"]
    assert {(d.task_id, d.severity, d.code) for d in defects} == {
        ("feature_analysis_1", "warning", "feed-ratio-out-of-range"),
        ("gui_temporal_pause_2", "warning", "near-duplicate-task")}


def test_runner_directory_from_the_command_line(tmp_path):
    (tmp_path / "cross_source_understanding.json").write_text(json.dumps(CLEAN[:2], ensure_ascii=False), "utf-8")
    (tmp_path / "gui_action.json").write_text(json.dumps(CLEAN[3:], ensure_ascii=False), "utf-8")
    bad = copy.deepcopy(CLEAN[2:3])
    bad[0]["eval_config"][0]["args"]["expected_cat"] = "暴力"
    (tmp_path / "close_end_application.json").write_text(json.dumps(bad, ensure_ascii=False), "utf-8")
    run = [sys.executable, "-m", "curation.cli", "--config", str(grades_all_config(tmp_path)), "qc", "validate",
           "--livingscreen", str(tmp_path)]
    out = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1
    assert "moderation_1\terror\treport-category-unknown\t" in out.stdout
    assert "4 tasks checked: 1 errors, 0 warnings, 0 notes; 1 tasks need a fix" in out.stdout
    assert 'report category "暴力" is not one of' in out.stdout  # the offending value, shown
    as_json = json.loads(subprocess.run(run + ["--json"], cwd=ROOT, capture_output=True, text=True).stdout)
    assert [d["code"] for d in as_json] == ["report-category-unknown"]
    (tmp_path / "close_end_application.json").write_text(json.dumps(CLEAN[2:3], ensure_ascii=False), "utf-8")
    assert subprocess.run(run, cwd=ROOT, capture_output=True, text=True).returncode == 0
    (tmp_path / "gui_action.json").write_text("{broken", "utf-8")
    out = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1 and "gui_action.json: not valid JSON" in out.stderr


def test_catalog_tasks_are_checked_against_the_base_feed_they_were_given(clustered_catalog):
    from curation.core.config import load_config
    from curation.corpus.feed_edit import edit_feed
    from curation.corpus.feeds import build_feed_set, load_feed
    from curation.qc.validate import validate_catalog
    from tests.qc.helpers import plant_task

    cat, feeds = clustered_catalog, load_config().feeds
    build_feed_set(cat, feeds, 1, seed=61)
    base = load_feed(cat, "feed-61-0000")
    edited = edit_feed(cat, base.feed_id, [{"op": "delete", "positions": [0]}], feeds, author="alice")
    plant_task(cat, "feature_analysis_1", base.feed_id, tier="L2", subcategory="feature_analysis",
               eval_type="label", instruction="几只猫？\nA: 一只 B: 两只", options={"A": "一只", "B": "两只"},
               eval_config=[{"answer": "A"}])  # the runner's base lists belong to label tasks
    cat.con.execute("UPDATE tasks SET base_feed_version = 1, feed_version = ? WHERE task_id = 'feature_analysis_1'",
                    [edited.version])
    defects = validate_catalog(cat, feeds).defects
    (note,) = [d for d in defects if d.code == "feed-edited"]
    assert note.severity == "info" and "1 base videos deleted" in note.message
    assert not [d for d in defects if d.severity != "info"], defects
