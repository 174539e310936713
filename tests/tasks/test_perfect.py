"""The perfect-agent proof: the plan a task's checks ask for, played in the replay of the runner's app and graded
with the runner's rule. Tasks of every check the public v1 uses pass; contradictory checks, a comment the app's
one-line input cannot hold, and a report category the app does not offer fail, naming the check; what the replay
cannot settle is undecided, with the reason."""

from __future__ import annotations

import dataclasses

import pytest

from curation.env.profile import default_profile
from curation.tasks.idle import IdleFacts
from curation.tasks.perfect import perfect_plan, prove_perfect

# LiveBot videos start with no comments in the runner's app; every one is 8 s long. The plans are played against a
# runner that grades every check (a team's fixed runner): the public one cannot grade playback at all (below).
GRADES_ALL = dataclasses.replace(default_profile(), ungradable=frozenset())
FEED = [f"LiveBot/news/clip{i}" for i in range(8)]
FACTS = IdleFacts({v: 8.0 for v in FEED}, None, GRADES_ALL)


def like(*ids):
    return {"func": "eval_like", "args": {"video_ids": list(ids)}}


def collect(*ids):
    return {"func": "eval_collect", "args": {"video_ids": list(ids)}}


def report(i, cat=None, reason=None):
    args = {"video_ids": i} | ({"expected_cat": cat} if cat else {}) | ({"expected_reason": reason} if reason else {})
    return {"func": "eval_report", "args": args}


def comment(i, text=None):
    return {"func": "eval_comment", "args": {"video_ids": i} | ({"comment": text} if text is not None else {})}


def current(i):
    return {"func": "eval_current_video", "args": {"video_id": i}}


def playback(i, **target):
    return {"func": "eval_playback", "args": {"video_id": i, **target}}


PASSING = {
    "like on video 0": [like(0)],
    "collect on video 3": [collect(3)],
    "likes on 5 and 7 (L3 preference)": [like(5, 7)],
    "report with a category": [report(2, "色情低俗")],
    "report with category and reason": [report(0, "不实信息", "它引起了我的不适")],
    "report, any category": [report(1)],
    "comment with Chinese text": [comment(0, "这个视频拍得真好！")],
    "comment with a space in it": [comment(4, "great video 好")],
    "any comment": [comment(2)],
    "end on video 3": [current(3)],
    "pause at 50%": [playback(0, target_pct=0.5)],
    "pause at the start": [playback(2, target_pct=0.0)],
    "pause at 6 s of 8": [playback(1, target_sec=6.0)],
    "like 1, collect 4, comment on 2, end on 5": [like(1), collect(4), comment(2, "好看"), current(5)],
    "report 3 then like 1 (done in feed order)": [report(3, "虚假营销"), like(1)],
}


@pytest.mark.parametrize("name", sorted(PASSING))
def test_a_perfect_agent_passes_every_check_shape_the_benchmark_uses(name):
    verdict = prove_perfect(PASSING[name], FEED, FACTS)
    assert verdict.passed is True, (verdict.reason, verdict.notes)
    assert verdict.turns[-1] == [("finish", {})]


def test_the_plan_ends_on_the_video_the_check_names_and_swipes_to_each_target():
    turns, why_not = perfect_plan([like(2), current(4)], [8.0] * 6)
    assert why_not is None
    names = [call[0] for turn in turns for call in turn]
    assert names.count("swipe") == 4 and names.count("click") == 1  # 0 -> 2, like, 2 -> 4


FAILING = {
    "two likes, each with no other video liked": ([like(1), like(2)], "eval_like no other"),
    "a comment with a line break (the app's input holds one line)": ([comment(0, "第一行\n第二行")], "eval_comment 0"),
    "a report and no report on the same video": ([report(1, "不实信息"), report(2, "不实信息")],
                                                 "eval_report no other"),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_checks_no_sequence_of_actions_meets_fail_naming_the_check(name):
    checks, check = FAILING[name]
    verdict = prove_perfect(checks, FEED, FACTS)
    assert verdict.passed is False and check in verdict.reason, (verdict.reason, verdict.notes)


UNDECIDED = {
    "comments on two videos": ([comment(0, "好"), comment(3, "好")], "the drawer cannot be closed"),
    "a playback target in seconds, length unknown": ([playback(0, target_sec=3.0)], "length is unknown"),
    "a comment with a tab": ([comment(0, "a\tb")], "Tab"),
    "a playback target and a comment": ([comment(0, "好"), playback(0, target_pct=0.5)], "progress bar"),
}


@pytest.mark.parametrize("name", sorted(UNDECIDED))
def test_what_the_replay_cannot_settle_is_undecided_with_the_reason(name):
    checks, why = UNDECIDED[name]
    verdict = prove_perfect(checks, FEED, IdleFacts({}, None, GRADES_ALL))
    assert verdict.passed is None and why in verdict.reason, verdict.reason


def test_the_public_runner_cannot_grade_a_playback_task_so_no_plan_passes_it():
    verdict = prove_perfect([playback(0, target_pct=0.5)], FEED, IdleFacts({v: 8.0 for v in FEED}, None))
    assert verdict.passed is False and verdict.ungradable == ["eval_playback"] and "cannot grade" in verdict.reason


def test_a_comment_met_only_by_a_comment_the_video_starts_with_is_decided_by_what_the_catalog_knows():
    feed = ["FakeSV/a", "FakeSV/b"]
    line_break = [comment(0, "第一行\n第二行")]  # the agent cannot post it; a starting comment may hold it
    assert prove_perfect(line_break, feed, IdleFacts({}, None)).passed is None
    assert prove_perfect(line_break, feed, IdleFacts({}, {"FakeSV/a": ["有人写过 第一行\n第二行 了"]})).passed is True
    assert prove_perfect(line_break, feed, IdleFacts({}, {"FakeSV/a": ["别的评论"]})).passed is False
