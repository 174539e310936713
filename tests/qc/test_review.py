"""Review assignment: never the author, balanced, deterministic, stable."""

from __future__ import annotations

import pytest

from curation.core.errors import UsageError
from curation.qc.review import assign_reviewers

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
