"""Episodes the public runner wrote for stand-in models of ours (tests/fixtures/runner-episodes-random): a seeded
random-action model on 45 tasks of all three tiers, the perfect-agent plans of platform tasks of every
sub-category the runner can grade, and a do-nothing agent. Graded from the logs alone, every episode gets the
runner's own result, but where the index-0 re-grade turns a pass into a fail (listed); the replay never
contradicts the runner; and wherever it claims to know the end state, the state is the app's (state.json, read
by the instrumented runner after its grading)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.env.episodes import read_episode
from curation.env.replay import rebuild_state
from curation.grade.grade import grade_logs
from tests.env.test_replay import graded as graded_state
from tests.grade.real import episodes_copy, record_release
from tests.skips import V1, requires_v1

FIXTURES = Path(__file__).parents[1] / "fixtures" / "runner-episodes-random"
MODELS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "recording")


def logs_of(model: str) -> list[Path]:
    return sorted((FIXTURES / model).rglob("log.json"))


def test_the_random_model_played_at_least_40_episodes_in_every_tier():
    logs = logs_of("Random")
    assert len(logs) >= 40
    assert {p.parents[1].name for p in logs} == {"gui_action", "cross_source_understanding", "close_end_application"}
    assert all((p.parent / "state.json").is_file() and (p.parent / "page.json").is_file() for p in logs)


@requires_v1
@pytest.mark.parametrize("model", MODELS)
def test_every_episode_gets_the_runners_result_but_index_0_cases(catalog, tmp_path, model):
    record_release(catalog, V1, "1.0.0")
    logs = episodes_copy(tmp_path / "logs", roots=(FIXTURES / model,))
    result = grade_logs(catalog, [(model, logs)], "1.0.0", tmp_path / "out", include_defective=True)
    assert result["crashed"] == 0 and result["rejected"] == 0 and result["graded"] == len(logs_of(model))
    rows = result.rows
    index0 = [r for r in rows if r["index0_disagrees"]]
    # the index-0 rule only ever turns the runner's pass into a fail
    assert all(r["logged_result"] == 1.0 and r["sr"] == 0.0 for r in index0)
    assert sorted(result.summary["index0_disagreements"]) == sorted(f"{model}/{r['task_id']}" for r in index0)
    assert [(r["task_id"], r["sr"], r["logged_result"]) for r in rows if not r["index0_disagrees"]
            and r["sr"] != r["logged_result"]] == []
    assert not any(r["replay_disagreement"] for r in rows)


@pytest.mark.parametrize("model", MODELS)
def test_the_rebuilt_state_is_the_apps_wherever_the_replay_claims_to_know_it(model):
    known = 0
    for log in logs_of(model):
        episode = read_episode(log)
        truth = json.loads((log.parent / "state.json").read_text(encoding="utf-8"))
        page = json.loads((log.parent / "page.json").read_text(encoding="utf-8"))
        rebuilt = rebuild_state(episode.calls, len(truth))
        if rebuilt.state is None:  # said, with the reason, never guessed
            assert rebuilt.unknown_reason
            continue
        known += 1
        assert graded_state(rebuilt.state) == graded_state(truth), (log.parent.name, rebuilt.notes)
        if rebuilt.current is not None:
            assert rebuilt.current == page["current_by_runner_rule"], (log.parent.name, rebuilt.notes)
    assert known >= 0.8 * len(logs_of(model))


@requires_v1
def test_the_public_runner_agrees_with_both_proofs_on_the_tasks_played():
    """The perfect-agent plans, played by the public runner, pass every task the proof passes; a do-nothing agent
    passes exactly the tasks the do-nothing proof flags (gui_comment_19-21) and fails the others it played."""
    from curation.tasks.idle import IdleFacts, passes_idle
    from curation.tasks.perfect import prove_perfect

    tasks = {t["task_id"]: t for name in ("gui_action", "close_end_application")
             for t in json.loads((V1 / f"{name}.json").read_text(encoding="utf-8"))}
    facts = IdleFacts({}, None)
    perfect = {p.parent.name: json.loads(p.read_text(encoding="utf-8"))["result"] for p in logs_of("Perfect")}
    assert len(perfect) >= 30
    assert {t.rsplit("_", 1)[0] for t in perfect} >= {"gui_like", "gui_collect", "gui_comment", "gui_report",
                                                      "gui_swipe", "moderation", "preference", "fact_check"}
    assert all(prove_perfect(tasks[t]["eval_config"], tasks[t]["video_feed"], facts).passed for t in perfect)
    assert perfect == {t: 1.0 for t in perfect}
    idle = {p.parent.name: json.loads(p.read_text(encoding="utf-8"))["result"] for p in logs_of("Idle")}
    flagged = {t for t in idle if passes_idle(tasks[t]["eval_config"], tasks[t]["video_feed"], facts)}
    assert flagged == {"gui_comment_19", "gui_comment_20", "gui_comment_21"} and len(idle) > len(flagged)
    assert idle == {t: float(t in flagged) for t in idle}
