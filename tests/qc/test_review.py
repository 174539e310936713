"""Review assignment (never the author, balanced, deterministic, stable) and when a review agrees."""

from __future__ import annotations

import json

import pytest

from curation.core.errors import UsageError
from curation.qc.review import assign_reviewers, compare

PEOPLE = ["ann", "bob", "cid"]
TASKS = {(f"feature_analysis_{i}", 1): PEOPLE[i % 3] for i in range(1, 31)}


def test_never_the_author_and_balanced_within_one():
    assigned = assign_reviewers(TASKS, PEOPLE, seed=7)
    assert set(assigned) == set(TASKS)
    assert all(assigned[k] != TASKS[k] for k in TASKS)
    loads = [list(assigned.values()).count(p) for p in PEOPLE]
    assert max(loads) - min(loads) <= 1


def test_deterministic_for_a_seed_and_stable_when_rerun():
    first = assign_reviewers(TASKS, PEOPLE, seed=7)
    assert assign_reviewers(TASKS, PEOPLE, seed=7) == first
    assert assign_reviewers(TASKS, PEOPLE, seed=8) != first
    more = {**TASKS, ("gui_like_1", 1): "ann", ("feature_analysis_1", 2): "bob"}  # a new task, a new version
    again = assign_reviewers(more, PEOPLE, seed=8, previous=first)
    assert all(again[k] == first[k] for k in TASKS)  # nobody's review moves
    assert again[("gui_like_1", 1)] != "ann" and again[("feature_analysis_1", 2)] != "bob"


def test_impossible_reviews_are_refused_by_name():
    with pytest.raises(UsageError, match="at least two reviewers"):
        assign_reviewers(TASKS, ["ann"], seed=1)
    previous = {("feature_analysis_1", 1): "bob"}  # bob wrote it: a stale or wrong assignment is redone
    assert assign_reviewers({("feature_analysis_1", 1): "bob"}, ["ann", "bob"], 1, previous) == {
        ("feature_analysis_1", 1): "ann"}


LABEL_TASK = {"eval_type": "label", "eval_config": '[{"answer": "B"}]', "options": '{"A": "x", "B": "y", "C": "z"}'}
PLATFORM_TASK = {"eval_type": "platform", "eval_config": json.dumps(
    [{"func": "eval_like", "args": {"video_ids": 1}}, {"func": "eval_report",
                                                       "args": {"video_ids": 3, "expected_cat": "不实信息"}}])}


LIKE_LIST_TASK = {"eval_type": "platform",
                  "eval_config": json.dumps([{"func": "eval_like", "args": {"video_ids": [1, 3]}}])}
LIKE_ONE_IN_A_LIST = {"eval_type": "platform",
                      "eval_config": json.dumps([{"func": "eval_like", "args": {"video_ids": [1]}}])}


@pytest.mark.parametrize(("task", "answer", "state", "flags", "expected"), [
    (LABEL_TASK, "B", None, [], ("reviewed_ok", [], [])),
    (LABEL_TASK, "C", None, [], ("escalated", ["answers differ: author B, reviewer C"], [])),
    (LABEL_TASK, "B", None, ["poorly_worded"], ("escalated", ["flagged poorly_worded"], [])),
    (LABEL_TASK, None, None, ["ambiguous", "other"], ("escalated", ["flagged ambiguous, other"], [])),
    (LABEL_TASK, None, None, [], (None, [], ["choose your answer (A–J)"])),
    (LABEL_TASK, "E", None, [], (None, [], ["answer E is not among the options A, B, C"])),
    (PLATFORM_TASK, None, "like 2\nreport 4 不实信息", [], ("reviewed_ok", [], [])),
    (PLATFORM_TASK, None, "like  2\nreport 4 不实信息", [], ("reviewed_ok", [], [])),
    (PLATFORM_TASK, None, "report 4 不实信息\nlike 2", [], ("reviewed_ok", [], [])),  # the same checks, in any order
    (LIKE_LIST_TASK, None, "like 4,2", [], ("reviewed_ok", [], [])),
    (LIKE_ONE_IN_A_LIST, None, "like 2", [], ("reviewed_ok", [], [])),
    (PLATFORM_TASK, None, "like 2", [], ("escalated", [
        "end states differ: author report 4 不实信息, reviewer nothing else"], [])),
    (PLATFORM_TASK, None, "like 3\nreport 4 不实信息", [], ("escalated", [
        "end states differ: author like 2, reviewer like 3"], [])),
    (PLATFORM_TASK, None, "lik 2", [], (None, [], [
        "line 1: cannot read 'lik 2'; start with one of like, collect, report, comment, current, playback and a "
        "position"])),
    (PLATFORM_TASK, None, None, ["disagree"], ("escalated", ["flagged disagree",
                                                             "reviewer's end state unreadable: empty"], [])),
])
def test_a_review_is_ok_only_with_the_same_answer_and_no_flag(task, answer, state, flags, expected):
    assert compare(task, answer, state, flags, feed_len=6) == expected
