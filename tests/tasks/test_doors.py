"""One rule set, one verdict: the same defect gets the same code and severity at every door a task
can come in by: the runner's JSON (`qc validate --livingscreen`, the release gate, `grade`), the
catalog's rows (`qc validate`, `qc accept-imported`), an annotator's draft (`annotate import`)
and the deciding group's revision (`qc adjudicate import`)."""

from __future__ import annotations

import json

import pytest

from curation.corpus.feeds import Feed
from curation.qc.adjudicate import read_decision
from curation.tasks.judge import judge_draft
from curation.tasks.record import Draft, from_catalog, from_runner
from curation.tasks.rules import RULES, RuleContext, check_tasks
from curation.tasks.syntax import render_platform_state
from curation.tasks.taxonomy import load_taxonomy

FEED = [f"FakeSV/{i}" for i in range(6)]
CTX = RuleContext(known_videos=set(FEED), durations={v: 30.0 for v in FEED})
BASE = Feed(feed_id="feed-1-0000", version=1, anchor_cluster=0, cluster_run="r", keyword_videos=FEED[:3],
            other_videos=FEED[3:], video_feed=FEED, ratio=1.0, seed=1)
LABEL = {"task_id": "feature_analysis_1", "_file": "cross_source_understanding.json",
         "instruction": "猫是什么颜色？\nA:白色 B:黑色 C:橘色", "video_feed": FEED, "keyword_videos": FEED[:3],
         "other_videos": FEED[3:], "eval_type": "label", "eval_config": [{"answer": "C"}]}
PLATFORM = {"task_id": "moderation_1", "_file": "close_end_application.json", "instruction": "举报谣言视频",
            "video_feed": FEED, "eval_type": "platform",
            "eval_config": [{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}}]}


def _label(**change):
    return {**LABEL, **change}


def _platform(*checks, **change):
    return {**PLATFORM, "eval_config": list(checks) or PLATFORM["eval_config"], **change}


# one element per defect that a draft can also express; the runner's own spellings (unknown funcs,
# stray args, positions that are not numbers) cannot be written in the authoring language
CASES = {
    "unknown-subcategory": _label(task_id="feature_analysys_1"),
    "tier-mismatch": _label(_file="gui_action.json"),
    "instruction-empty": _label(instruction="\nA:白色 B:黑色 C:橘色"),
    "options-unparsed": _label(instruction="猫是什么颜色？"),
    "answer-missing": _label(eval_config=[]),
    "answer-not-an-option": _label(eval_config=[{"answer": "E"}]),
    "no-cannot-determine-option": _label(task_id="robust_evaluation_1"),
    "label-has-end-state": _label(eval_config=[{"answer": "C"}, {"func": "eval_like", "args": {"video_ids": 0}}]),
    "checks-missing": _platform(eval_config=[]),
    "position-outside-feed": _platform({"func": "eval_like", "args": {"video_ids": 6}}),
    "report-category-unknown": _platform({"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "暴力"}}),
    "target-pct-out-of-range": _platform({"func": "eval_playback", "args": {"video_id": 1, "target_pct": 1.5}}),
    "target-sec-beyond-duration": _platform({"func": "eval_playback", "args": {"video_id": 1, "target_sec": 31.0}}),
    # (with a like as well: a comment check alone on a FakeSV video is passed by doing nothing, below)
    "comment-text-missing": _platform({"func": "eval_comment", "args": {"video_ids": 2}},
                                      {"func": "eval_like", "args": {"video_ids": 2}},
                                      instruction="评论“已核实”并点赞"),
    "passes-without-acting": _platform({"func": "eval_comment", "args": {"video_ids": 0}},
                                       instruction="评论第一个视频"),
    "feed-duplicate-video": _label(video_feed=[*FEED, FEED[0]]),
    # the public runner raises on a video of a source it does not serve
    "feed-source-not-served": _label(video_feed=[*FEED[:5], "Synthetic/gen/1"]),
    # each report check's "and no other video reported" rules out the other's report: no agent meets both
    "unsatisfiable": _platform({"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}},
                               {"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "色情低俗"}}),
    # the public runner's profile: every playback check crashes its grader
    "ungradable-in-runner": _platform({"func": "eval_playback", "args": {"video_id": 2, "target_pct": 0.5}},
                                      instruction="把第三个视频停在一半"),
}


def runner_door(element):
    return check_tasks([from_runner(element)], CTX)


def catalog_door(element):
    """The element as `import-livingscreen` stores it, read back as `qc validate` reads rows."""
    record = from_runner(element)
    row = {"task_id": record.task_id, "version": 1, "tier": record.tier, "subcategory": record.subcategory,
           "eval_type": record.eval_type, "instruction": record.question,
           "options": json.dumps(record.options) if record.options else None,
           "eval_config": json.dumps(record.eval_config), "video_feed": record.video_feed,
           "keyword_videos": record.keyword_videos, "other_videos": record.other_videos}
    return check_tasks([from_catalog(row)], CTX)


def _draft(element) -> Draft:
    record = from_runner(element)
    answer = next((c["answer"] for c in record.eval_config if isinstance(c, dict) and "answer" in c), None)
    checks = [c for c in record.eval_config if isinstance(c, dict) and "func" in c]
    return Draft(tier=record.tier, subcategory=record.subcategory, instruction=record.question,
                 options_text="\n".join(f"{k}: {v}" for k, v in record.options.items()) or None,
                 answer=answer, platform_state=render_platform_state(checks) or None)


def authoring_door(element):
    feed = Feed(**{**BASE.__dict__, "video_feed": list(element["video_feed"])})
    return judge_draft(_draft(element), element["task_id"], BASE, feed, [], CTX)[1]


def revision_door(element):
    """The deciding group revises a clean task into this one: the revision is judged the same way."""
    clean = from_runner(LABEL if element["eval_type"] == "label" else PLATFORM)
    task = {"task_id": element["task_id"], "tier": from_runner(element).tier,
            "subcategory": from_runner(element).subcategory, "eval_type": clean.eval_type,
            "instruction": clean.question, "options": json.dumps(clean.options) if clean.options else None,
            "eval_config": json.dumps(clean.eval_config)}
    draft = _draft(element)
    fields = {"decision": ["revise"], "instruction": draft.instruction or " ", "options": draft.options_text,
              "answer": [draft.answer] if draft.answer else None, "platform_state": draft.platform_state}
    feed = Feed(**{**BASE.__dict__, "video_feed": list(element["video_feed"])})
    decision, _, problems = read_decision(fields, task, BASE, feed, CTX)
    return decision, problems


@pytest.mark.parametrize("code", sorted(CASES))
def test_every_door_gives_a_defect_the_same_code_and_severity(code):
    element = CASES[code]
    verdicts = {name: {(d.code, d.severity) for d in door(element)}
                for name, door in (("runner", runner_door), ("catalog", catalog_door), ("authoring", authoring_door))}
    assert (code, RULES[code].severity) in verdicts["runner"], verdicts
    assert verdicts["runner"] == verdicts["catalog"] == verdicts["authoring"], verdicts
    decision, problems = revision_door(element)
    # the group revises wording, options, answer or end state: sub-category and tier stay the task's, a field
    # left empty keeps the task's own, and a label task's revision has no end state to write
    unchanged_by_revision = ("unknown-subcategory", "tier-mismatch", "instruction-empty", "answer-missing",
                             "checks-missing", "options-unparsed", "label-has-end-state")
    if RULES[code].severity == "error" and code not in unchanged_by_revision:
        assert decision is None and any(f"({code})" in p for p in problems), problems
    elif RULES[code].severity != "error":
        assert decision == "revise" and not problems, problems


def test_every_rule_is_reached_by_some_door():
    runner_only = {  # shapes the authoring language cannot write
        "duplicate-task-id", "eval-type-unknown", "eval-type-mismatch", "feed-empty", "feed-too-long",
        "feed-unknown-video", "feed-video-not-playable", "feed-video-no-media-yet", "feed-keyword-other-overlap",
        "feed-edited", "feed-ratio-out-of-range", "feed-ratio-drifted", "answer-malformed", "platform-has-answer",
        "unknown-func", "unexpected-arg", "missing-arg", "position-not-integer", "target-sec-negative",
        "near-duplicate-task"}
    authoring_only = {"end-state-unreadable", "feed-edit-unreadable"}
    stated_per_release = {"ungradable-accepted"}  # `release build --accept-ungradable REASON`
    assert set(RULES) == set(CASES) | runner_only | authoring_only | stated_per_release


def test_a_release_that_states_why_ships_an_ungradable_check_with_a_note():
    element = CASES["ungradable-in-runner"]
    accepted = RuleContext(**{**CTX.__dict__, "accept_ungradable": "our runner passes no timeout to evaluate"})
    found = {(d.code, d.severity): d.message for d in check_tasks([from_runner(element)], accepted)}
    assert list(found) == [("ungradable-accepted", "info")]
    assert "our runner passes no timeout to evaluate" in found["ungradable-accepted", "info"]
    # accepted, it must still be passable where it is graded: here each report forbids the other
    both = _platform(*CASES["unsatisfiable"]["eval_config"],
                     {"func": "eval_playback", "args": {"video_id": 2, "target_pct": 0.5}},
                     instruction="举报并停在一半")
    assert {d.code for d in check_tasks([from_runner(both)], accepted)} == {"ungradable-accepted", "unsatisfiable"}


def test_drafts_the_language_cannot_read_are_errors_with_the_line():
    draft = Draft(tier="L3", subcategory="moderation", instruction="举报", platform_state="like 2\nshare 3")
    _, defects = judge_draft(draft, "moderation_9", BASE, BASE, ["edit line 1: cannot read 'flip 2'"], CTX)
    assert {(d.code, d.severity) for d in defects} == {("end-state-unreadable", "error"),
                                                         ("feed-edit-unreadable", "error")}
    assert any("'share 3'" in d.message for d in defects)


def test_report_any_category_is_written_read_and_accepted():
    draft = Draft(tier="L1", subcategory="gui_report", instruction="举报第二个视频", platform_state="report 2 any")
    record, defects = judge_draft(draft, "gui_report_1", BASE, BASE, [], CTX)
    assert record.eval_config == [{"func": "eval_report", "args": {"video_ids": 1}}] and not defects
    assert render_platform_state(record.eval_config) == "report 2 any"
    forgot = Draft(tier="L1", subcategory="gui_report", instruction="举报", platform_state="report 2")
    (defect,) = judge_draft(forgot, "gui_report_2", BASE, BASE, [], CTX)[1]
    assert defect.code == "end-state-unreadable" and "'any'" in defect.message


def test_option_letters_reach_j_everywhere():
    letters = load_taxonomy().option_letters
    assert letters == "ABCDEFGHIJ"
    options = " ".join(f"{x}:选项{x}" for x in letters)
    element = _label(instruction=f"哪一个？\n{options}", eval_config=[{"answer": "G"}])
    assert runner_door(element) == [] and from_runner(element).options["J"] == "选项J"
    assert {d.code for d in runner_door(_label(eval_config=[{"answer": "K"}]))} == {"answer-malformed"}
