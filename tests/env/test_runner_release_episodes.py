"""Episodes the public runner wrote on a release the toolkit built from its own feeds, at three machine loads
(tests/fixtures/runner-episodes-release/, recorded by tests/env/test_public_runner.py): in every run, what the
runner decided is what the runner profile and the two proofs said of each task, and grading each episode from its
log alone gives the runner's own result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.env.episodes import read_episode
from curation.env.profile import default_profile
from curation.grade.metrics import grade_episode
from curation.tasks.idle import IdleFacts, idle_verdict
from curation.tasks.perfect import prove_perfect
from tests.conftest import FIXTURES

RUNS = sorted(p for p in (FIXTURES / "runner-episodes-release").iterdir() if (p / "outcomes.json").is_file())


def _read(run: Path, name: str):
    return json.loads((run / f"{name}.json").read_text(encoding="utf-8"))


def test_three_runs_at_different_loads_were_kept():
    assert len(RUNS) >= 3


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_the_runner_decided_what_the_proofs_said(run):
    tasks, outcomes, facts = _read(run, "tasks"), _read(run, "outcomes"), _read(run, "facts")
    profile = default_profile()
    known = IdleFacts(facts["durations"], facts["comments"], profile)
    for task in tasks:
        checks, feed, task_id = task["eval_config"], task["video_feed"], task["task_id"]
        ungradable = bool({c["func"] for c in checks} & profile.ungradable)
        perfect = prove_perfect(checks, feed, known)
        idle = idle_verdict(checks, feed, known)
        assert idle.passes is not None, (task_id, idle.lacking)
        assert outcomes["Perfect"][task_id] == ("crashed" if ungradable else 1.0) and perfect.passed is not ungradable
        assert outcomes["Idle"][task_id] == ("crashed" if ungradable else float(idle.passes)), task_id
    flagged = sorted(t["task_id"] for t in tasks if idle_verdict(t["eval_config"], t["video_feed"], known).passes)
    assert flagged == ["gui_comment_9", "gui_swipe_9", "gui_temporal_pause_1"]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_every_episode_grades_to_the_runners_result_from_its_log(run):
    tasks = {t["task_id"]: t for t in _read(run, "tasks")}
    facts, outcomes = _read(run, "facts"), _read(run, "outcomes")
    graded = 0
    for model in ("Perfect", "Idle"):
        for log in sorted((run / model).rglob("log.json")):
            task = tasks[log.parent.name]
            grade = grade_episode(read_episode(log), task, [facts["durations"][v] for v in task["video_feed"]])
            assert grade.sr == outcomes[model][log.parent.name], (model, log.parent.name, grade.sr_from)
            graded += 1
    assert graded == sum(1 for model in outcomes.values() for result in model.values() if result != "crashed")


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_video_0_stood_inside_the_do_nothing_window(run):
    start, end = default_profile().idle_window_s
    probes = _read(run, "probes")
    assert probes and all(p["duration"] > end for p in probes)  # no loop inside the window: a real measure
    assert all(start <= p["current_time"] <= end for p in probes)
