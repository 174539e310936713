"""Grading reads the runner profile's "no other video" rule (issue 39): an episode gets the runner's own SR, the
same from `state.json` as from the replay of its calls, whatever the feed's length and wherever stray likes land."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from curation.env.episodes import Episode, ToolCall
from curation.env.replay import rebuild_state
from curation.grade.metrics import grade_episode
from curation.tasks.perfect import perfect_plan

RUNNER_OTHERS = range(1, 21)  # utils._check_others_liked: range(1, MAX_VIDEO_ID + 1), MAX_VIDEO_ID = 20


@st.composite
def like_episodes(draw):
    n = draw(st.integers(2, 27))
    wanted = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3))
    stray = draw(st.sets(st.integers(0, n - 1).filter(lambda i: i not in wanted), max_size=2))
    return n, sorted(wanted), sorted(stray)


@settings(max_examples=60, deadline=None)
@given(like_episodes())
def test_the_same_sr_from_the_state_and_from_the_replay_and_it_is_the_runners(episode):
    n, wanted, stray = episode
    # the agent likes the wanted videos and the stray ones; the task asks for the wanted ones
    turns, why_not = perfect_plan([{"func": "eval_like", "args": {"video_ids": wanted + stray}}], [8.0] * n)
    assert why_not is None
    calls = [ToolCall(name, args, turn=k) for k, turn in enumerate(turns) for name, args in turn]
    state = rebuild_state(calls, n, icons=False).state
    assert state is not None and [i for i, v in enumerate(state) if v["is_liked"]] == sorted(wanted + stray)
    runner = float(not any(i in RUNNER_OTHERS for i in stray))  # utils.eval_like, written from its code
    task = {"eval_type": "platform", "video_feed": [f"LiveBot/c/v{i}" for i in range(n)],
            "eval_config": [{"func": "eval_like", "args": {"video_ids": wanted}}]}
    graded = {}
    for source, recorded in (("state", state), ("replay", None)):
        graded[source] = grade_episode(Episode("t", Path("."), "", calls, runner, recorded), task, [8.0] * n)
    assert graded["state"].sr == graded["replay"].sr == runner
    assert graded["state"].index0_disagrees == (bool(stray) and runner == 1.0)
