"""The seven episodes the public runner wrote, graded as a real run leaves them (no state.json): the final
state rebuilt from each log, the index-0 re-grade, the instruction check, coverage (crashed and missing
tasks), defective tasks, and the command's exit status and report location."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from curation.core.catalog import Catalog, now
from curation.core.config import load_config
from curation.grade.grade import grade_logs
from curation.grade.rewards import build_rewards
from tests.conftest import ROOT
from tests.grade.real import CHECKS, EPISODES, MORE, add_turns, element, episodes_copy, record_release, runner_dir
from tests.skips import EPISODES_2, EPISODES_2_FOLDER, V1, V1_FOLDER, requires, requires_v1

RESULTS = {log.parent.name: json.loads(log.read_text(encoding="utf-8"))["result"] for log in EPISODES.rglob("log.json")}
REPORT_TAP = [("click", {"x": 883, "y": 858}), ("click", {"x": 240, "y": 372}), ("click", {"x": 709, "y": 693})]


@pytest.fixture
def real(catalog, tmp_path):
    record_release(catalog, runner_dir(tmp_path / "v1"))
    return catalog


def graded(cat: Catalog, logs: Path, out: Path, **kw) -> dict[str, dict]:
    result = grade_logs(cat, [("Scripted", logs)], "1.0.0", out, **kw)
    return {r["task_id"]: r for r in result.rows}


@pytest.mark.parametrize("keep_state", [False, True], ids=["log alone", "with state.json"])
def test_each_episode_gets_the_runners_result(real, tmp_path, keep_state):
    rows = graded(real, episodes_copy(tmp_path / "logs", keep_state), tmp_path / "out")
    assert {t: r["sr"] for t, r in rows.items()} == RESULTS
    sources = {t: r["sr_from"] for t, r in rows.items()}
    assert sources["spatiotemporal_aggregation_12"] == sources["event_association_16"] == "answer"
    platform = ("gui_like_1", "gui_collect_1", "gui_comment_1", "moderation_9")
    assert {sources[t] for t in platform} == {"state" if keep_state else "replay"}
    # only a replay knows which video is on screen at the end; state.json does not say
    assert sources["gui_swipe_7"] == ("result" if keep_state else "replay")
    assert not any(r["index0_disagrees"] or r["state_disagrees"] or r["state_unknown"] for r in rows.values())


def test_episodes_recorded_later_get_the_runners_result_and_an_extra_collect_on_video_0_is_flagged(catalog, tmp_path):
    # the seven and the 24 of runner-episodes-more, as a run leaves them: the grader has only the logs
    roots = (EPISODES, MORE)
    record_release(catalog, runner_dir(tmp_path / "v1", roots=roots))
    result = grade_logs(catalog, [("Scripted", episodes_copy(tmp_path / "logs", roots=roots))], "1.0.0",
                        tmp_path / "out")
    rows = {r["task_id"]: r for r in result.rows}
    assert (result["graded"], result["rejected"], result["crashed"]) == (31, 0, 0)
    # preference_3 collected video 0 before its targets (README); the recorded state has it, the runner's check
    # of "no other video" starts at 1 and logged 1.0: SR is the runner's, the stray collect is flagged beside it
    recorded = json.loads((MORE / "close_end_application" / "preference_3" / "state.json").read_text(encoding="utf-8"))
    assert recorded[0]["is_collected"]
    pref = rows["preference_3"]
    assert (pref["sr"], pref["public_sr"], pref["logged_result"], pref["sr_from"]) == (1.0, 1.0, 1.0, "replay")
    assert pref["index0_disagrees"]
    assert {t: r["sr"] for t, r in rows.items()} == {t: r["logged_result"] for t, r in rows.items()}
    summary = result.summary
    assert summary["index0_disagreements"] == ["Scripted/preference_3"] and not summary["state_disagreements"]
    # the one episode whose like cannot be placed (spaces typed after a press in the feed moved it) is listed
    assert [u.split(":")[0] for u in summary["state_unknown"]] == ["Scripted/gui_like_5"]
    assert rows["gui_like_5"]["sr_from"] == "result"
    # every other platform task was re-graded from the rebuilt state, but gui_comment_4: its comment went to
    # video 1, and one of video 0's own comments (not in the log) could still hold the text the runner looks for
    platform = {t for t, r in rows.items() if r["eval_type"] == "platform"}
    assert {t for t in platform if rows[t]["sr_from"] != "replay"} == {"gui_like_5", "gui_comment_4"}


def test_an_extra_report_on_video_0_is_flagged_where_the_runner_misses_it(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")
    add_turns(logs / "close_end_application" / "moderation_9" / "log.json", REPORT_TAP)  # the log keeps 1.0
    rows = graded(real, logs, tmp_path / "out")
    mod = rows["moderation_9"]
    assert (mod["sr"], mod["public_sr"], mod["logged_result"], mod["sr_from"]) == (1.0, 1.0, 1.0, "replay")
    assert mod["index0_disagrees"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["index0_disagreements"] == ["Scripted/moderation_9"] and not summary["state_disagreements"]


def test_an_extra_like_on_video_0_changes_nothing_a_report_task_checks(real, tmp_path):
    # moderation_9 checks reports only: a stray like is no failure by either rule
    logs = episodes_copy(tmp_path / "logs")
    add_turns(logs / "close_end_application" / "moderation_9" / "log.json", [("click", {"x": 883, "y": 607})])
    mod = graded(real, logs, tmp_path / "out")["moderation_9"]
    assert (mod["sr"], mod["public_sr"], mod["index0_disagrees"]) == (1.0, 1.0, False)


def test_a_call_the_replay_cannot_place_leaves_the_state_unknown(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")
    log = logs / "close_end_application" / "moderation_9" / "log.json"
    # the submit tap moved onto the button's left edge (513 units = 192.4 px, the edge is at 192.5)
    log.write_text(log.read_text(encoding="utf-8").replace('{\\"x\\": 709, \\"y\\": 693}',
                                                           '{\\"x\\": 513, \\"y\\": 693}'), encoding="utf-8")
    mod = graded(real, logs, tmp_path / "out")["moderation_9"]
    assert (mod["sr"], mod["sr_from"], mod["public_sr"]) == (1.0, "result", None)  # the logged result, not a guess
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["state_unknown"]) == 1 and summary["state_unknown"][0].startswith("Scripted/moderation_9: ")
    assert "confirm" in summary["state_unknown"][0]


def test_a_log_of_another_instruction_is_rejected_whitespace_aside(real, tmp_path):
    logs = episodes_copy(tmp_path / "logs")

    def edit(task: str, old: str, new: str) -> None:
        log = next(logs.rglob(f"{task}/log.json"))
        data = json.loads(log.read_text(encoding="utf-8"))
        assert old in data["instruction"]
        data["instruction"] = data["instruction"].replace(old, new)
        log.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    edit("gui_like_1", "点赞当前视频", " 点赞当前视频 \r\n")          # whitespace only: the same task
    edit("spatiotemporal_aggregation_12", "\nA:0 B:1", "\r\nA:0  B:1")  # likewise
    edit("event_association_16", "G:6", "G:7")                   # another option
    edit("moderation_9", "十个视频", "九个视频")                   # another question
    result = grade_logs(real, [("Scripted", logs)], "1.0.0", tmp_path / "out")
    assert (result["graded"], result["rejected"]) == (5, 2)
    reasons = {Path(r["log"]).parent.name: r["reason"] for r in result.summary["rejected"]}
    assert reasons["event_association_16"].startswith("the log's options A:0 B:1 C:2 D:3 E:4 F:5 G:7 are not "
                                                      "the release's A:0 B:1 C:2 D:3 E:4 F:5 G:6")
    assert reasons["moderation_9"].startswith("the log's instruction '你是一位经验丰富")
    l3 = next(c for c in result.summary["coverage"] if c["tier"] == "L3")
    assert (l3["rejected"], l3["graded"], l3["sr_attempted"], l3["sr_graded"]) == (1, 0, 0.0, None)


def test_coverage_crashes_missing_tasks_and_defective_ones(catalog, tmp_path):
    gui = json.loads(next(EPISODES.rglob("gui_like_1/state.json")).read_text(encoding="utf-8"))
    feed = ["FakeSV/" + Path(v["video_url"]).stem for v in gui]
    extra = {"gui_action.json": [
        {"task_id": "gui_temporal_pause_1", "instruction": "把视频拖到一半", "video_feed": feed,
         "eval_type": "platform",
         "eval_config": [{"func": "eval_playback", "args": {"video_id": 0, "target_pct": 0.5}}]},
        {"task_id": "gui_like_2", "instruction": "给第二个视频点赞", "video_feed": feed, "eval_type": "platform",
         "eval_config": [{"func": "eval_like", "args": {"video_ids": 1}}]},
        {"task_id": "gui_collect_2", "instruction": "收藏第六个视频", "video_feed": feed, "eval_type": "platform",
         "eval_config": [{"func": "eval_collect", "args": {"video_ids": 5}}]}]}  # a 3-video feed: an error
    record_release(catalog, runner_dir(tmp_path / "v1", extra))
    # gui_collect_1 passes the rules but was sent back after it shipped
    catalog.insert("task_transitions", {"task_id": "gui_collect_1", "version": 1, "seq": 4, "from_state": "kept",
                                        "to_state": "needs_fix", "reason": "test: the feed changed", "who": "test",
                                        "run_id": "test", "moved_at": now()})
    logs = episodes_copy(tmp_path / "logs")
    (logs / "gui_action" / "gui_temporal_pause_1").mkdir()  # the runner's folder for an episode that crashed
    played = logs / "gui_action" / "gui_collect_2"
    played.mkdir()
    data = json.loads((logs / "gui_action" / "gui_collect_1" / "log.json").read_text(encoding="utf-8"))
    (played / "log.json").write_text(json.dumps({**data, "instruction": "收藏第六个视频", "result": 0.0},
                                                ensure_ascii=False), encoding="utf-8")

    result = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out")
    assert (result["graded"], result["crashed"], result["defective"]) == (8, 1, 2)  # graded episodes on defective tasks
    defects = {d["task_id"]: d["reasons"] for d in result.summary["defective_tasks"]}
    assert set(defects) == {"gui_collect_1", "gui_collect_2", "gui_temporal_pause_1"}
    assert "position-outside-feed" in defects["gui_collect_2"] and "is needs_fix in the catalog" in \
        defects["gui_collect_1"] and "ungradable-in-runner" in defects["gui_temporal_pause_1"]
    l1 = next(c for c in result.summary["coverage"] if c["tier"] == "L1")
    # defective left out (the playback task too: the runner crashes grading it, as the profile says):
    # gui_like_1, gui_comment_1, gui_swipe_7 graded (1.0 each), gui_like_2 never played
    assert {k: l1[k] for k in ("tasks", "attempted", "graded", "crashed", "rejected", "missing")} == \
        {"tasks": 4, "attempted": 3, "graded": 3, "crashed": 0, "rejected": 0, "missing": 1}
    assert (l1["sr_attempted"], l1["sr_graded"]) == (1.0, 1.0)
    assert next(g for g in result.summary["per_tier"] if g["tier"] == "L1")["episodes"] == 3
    assert result.summary["crashed"] == ["Scripted/gui_temporal_pause_1"]
    with (tmp_path / "out" / "episodes.csv").open(encoding="utf-8") as handle:
        flagged = {r["task_id"]: r["defective"] for r in csv.DictReader(handle)}
    assert flagged["gui_like_1"] == "" and "position-outside-feed" in flagged["gui_collect_2"]
    every = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "all", include_defective=True)
    l1 = next(c for c in every.summary["coverage"] if c["tier"] == "L1")
    assert (l1["tasks"], l1["attempted"], l1["graded"], l1["sr_attempted"], l1["sr_graded"]) == \
        (7, 6, 5, round(4 / 6, 4), 0.8)


def _cli(cat_path: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "curation.toml"
    config.write_text(f'[reports]\ndir = "{tmp_path / "reports"}"\n', encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(cat_path), "--config", str(config),
                           "grade", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_command_fails_when_nothing_is_graded_and_writes_its_page_where_told(real, tmp_path):
    other = {"gui_action.json": [{"task_id": "gui_like_9", "instruction": "点赞", "video_feed": ["FakeSV/x"],
                                  "eval_type": "platform", "eval_config": [{"func": "eval_like",
                                                                            "args": {"video_ids": 0}}]}]}
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "gui_action.json").write_text(json.dumps(other["gui_action.json"]), encoding="utf-8")
    record_release(real, folder, "2.0.0")
    path = real.path
    real.close()
    logs = episodes_copy(tmp_path / "logs")
    wrong = _cli(path, tmp_path, str(logs), "--release", "v2.0.0", "--out", str(tmp_path / "wrong"))
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "7 episode logs: 0 graded, 7 rejected" in wrong.stdout and "nothing graded" in wrong.stderr
    right = _cli(path, tmp_path, str(logs), "--release", "v1.0.0", "--model", "Scripted", "--out",
                 str(tmp_path / "right"))
    assert right.returncode == 0, right.stderr
    assert "Scripted L1: 4/4 tasks attempted, 4 graded" in right.stdout
    assert (tmp_path / "right" / "grade.html").is_file() and (tmp_path / "wrong" / "grade.html").is_file()
    assert "<h2>Coverage</h2>" in (tmp_path / "right" / "grade.html").read_text(encoding="utf-8")
    assert not (tmp_path / "reports" / "grade.html").exists()




@requires_v1
def test_against_the_public_v1_release(catalog, tmp_path):
    record_release(catalog, V1, "1.0.0")
    logs = episodes_copy(tmp_path / "logs", roots=(EPISODES, MORE))
    result = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out", include_defective=True)
    assert (result["graded"], result["rejected"]) == (31, 0)  # the logs carry v1's instructions exactly
    later = {log.parent.name: json.loads(log.read_text(encoding="utf-8"))["result"] for log in MORE.rglob("log.json")}
    # the runner's results, preference_3's too: it collected video 0 as well, which the runner's rule does not read
    # (runner-episodes-more/README.md); it is flagged beside its SR
    assert {r["task_id"]: r["sr"] for r in result.rows} == {**RESULTS, **later}
    assert [r["task_id"] for r in result.rows if r["index0_disagrees"]] == ["preference_3"]
    coverage = result.summary["coverage"]
    assert sum(c["missing"] for c in coverage) == sum(c["tasks"] for c in coverage) - 31
    released = {t["task_id"]: t["eval_config"] for f in V1.glob("*.json")
                for t in json.loads(f.read_text(encoding="utf-8"))}
    assert all(released[task] == CHECKS[task] for task in later)  # the checks tests/grade/real.py gives them


def _done_when(cat_path: Path, release: Path, tmp_path: Path) -> None:
    """The issue's own check, as a user runs it: the release recorded, the seven logs with every state.json
    removed and two crashed episodes' empty folders beside them, graded through `curate grade`."""
    cat = Catalog(cat_path)
    record_release(cat, release)
    cat.close()
    logs = episodes_copy(tmp_path / "logs")
    for crashed in ("gui_temporal_pause_1", "gui_temporal_pause_2"):
        (logs / "gui_action" / crashed).mkdir()
    add_turns(logs / "close_end_application" / "moderation_9" / "log.json", REPORT_TAP)  # an extra report on 0
    out = _cli(cat_path, tmp_path, str(logs), "--release", "v1.0.0", "--model", "Scripted",
               "--out", str(tmp_path / "out"), "--json")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["crashed"] == ["Scripted/gui_temporal_pause_1", "Scripted/gui_temporal_pause_2"]
    assert sum(c["rejected"] for c in summary["coverage"]) == 0
    assert summary["index0_disagreements"] == ["Scripted/moderation_9"]
    with (tmp_path / "out" / "episodes.csv").open(encoding="utf-8") as handle:
        sr = {r["task_id"]: float(r["sr"]) for r in csv.DictReader(handle)}
    assert sr == RESULTS  # the runner's own SR, the extra report on video 0 flagged beside it
    # the two crashed tasks are the ones the runner profile says the runner cannot grade: listed as defective, and
    # left out of the coverage of what can be scored there
    defective = {d["task_id"]: d["reasons"] for d in summary["defective_tasks"]}
    assert {t for t, why in defective.items() if "ungradable-in-runner" in why} >= {"gui_temporal_pause_1",
                                                                                   "gui_temporal_pause_2"}
    l1 = next(c for c in summary["coverage"] if c["tier"] == "L1")
    assert (l1["crashed"], l1["attempted"], l1["graded"]) == (0, 4, 4)


def test_the_issue_check_on_the_recorded_release(tmp_path):
    extra = {"gui_action.json": [
        {"task_id": f"gui_temporal_pause_{n}", "instruction": f"把第{n}个视频拖到一半",
         "video_feed": element(next(EPISODES.rglob("gui_like_1/log.json")))["video_feed"], "eval_type": "platform",
         "eval_config": [{"func": "eval_playback", "args": {"video_id": 0, "target_pct": 0.5}}]} for n in (1, 2)]}
    _done_when(tmp_path / "c.duckdb", runner_dir(tmp_path / "v1", extra), tmp_path)


@requires_v1
def test_the_issue_check_on_the_public_v1_release(tmp_path):
    _done_when(tmp_path / "c.duckdb", V1, tmp_path)


SHARED_2 = EPISODES_2 / "Scripted"


@requires(V1_FOLDER, EPISODES_2_FOLDER)
def test_text_typed_where_focus_is_not_goes_to_the_caret_and_sends_nothing(catalog, tmp_path):
    """The two episodes of runner-episodes-2, recorded with the public runner: Chinese text typed after a swipe off
    send / submit (see their README). Playwright inserts it at the caret, in the text field, so the Enter after it
    stays there: no comment, no report, and the runner gave 0.0. Rebuilt from the log alone, the replay now holds
    the same field texts as the app did at the end, and agrees with the runner; no reward record is a positive."""
    from curation.env.episodes import read_episode
    from curation.env.replay import rebuild_state

    record_release(catalog, V1, "1.0.0")
    logs = episodes_copy(tmp_path / "logs", roots=(SHARED_2,))
    result = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out", include_defective=True)
    logged = {log.parent.name: json.loads(log.read_text(encoding="utf-8"))["result"]
              for log in SHARED_2.rglob("log.json")}
    assert logged == {"gui_comment_11": 0.0, "gui_report_17": 0.0}
    rows = {r["task_id"]: r for r in result.rows}
    assert {t: r["sr"] for t, r in rows.items()} == logged
    assert not any(r["replay_disagreement"] for r in rows.values()) and not result.summary["replay_disagreements"]
    # the report task is decided by the replay itself; the comment task's text check could be met by one of
    # video 0's own comments, which the log does not show, so the runner's result decides it
    assert rows["gui_report_17"]["sr_from"] == "replay" and rows["gui_comment_11"]["sr_from"] == "result"
    # the field texts the README gives for the app's end state, and nothing posted or reported
    comment = rebuild_state(read_episode(logs / "gui_action" / "gui_comment_11" / "log.json").calls, 3)
    report = rebuild_state(read_episode(logs / "gui_action" / "gui_report_17" / "log.json").calls, 3)
    assert comment.notes[-2].endswith("typed into input: now '很有启发，赞一个。好'")
    assert report.notes[-2].endswith("typed into reason: now '它引起了我的不适\\n好\\n'")
    for rebuilt, folder in ((comment, "gui_comment_11"), (report, "gui_report_17")):
        truth = json.loads((SHARED_2 / "gui_action" / folder / "state.json").read_text(encoding="utf-8"))
        assert [v["reports"] for v in rebuilt.state] == [v["reports"] for v in truth] == [[], [], []]
        assert [c["text"] for c in rebuilt.state[0]["comments"]] == []  # the agent posted nothing
    rewards = build_rewards(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "rewards", load_config().media)
    assert rewards.counts.get("L1 positive", 0) == 0 and rewards.counts["L1 negative"] == 2, rewards.counts


def test_the_runners_result_stands_where_the_replay_contradicts_it(catalog, tmp_path):
    """A replay that, by the runner's own rule, contradicts the runner's logged result is wrong about what happened
    (the runner graded the app's real end state by that rule): the logged result stands, the episode is listed with
    the check that differed, and its reward label follows. Planted both ways on episodes of runner-episodes-more:
    gui_like_13 logged as failed (the replay holds its like), moderation_15 logged as passed without its submit."""
    record_release(catalog, runner_dir(tmp_path / "v1", roots=(EPISODES, MORE)))
    before = build_rewards(catalog, [("Scripted", episodes_copy(tmp_path / "asis", roots=(MORE,)))], "1.0.0",
                           tmp_path / "rewards-asis", load_config().media).counts
    logs = episodes_copy(tmp_path / "logs", roots=(MORE,))
    like = logs / "gui_action" / "gui_like_13" / "log.json"
    data = json.loads(like.read_text(encoding="utf-8"))
    like.write_text(json.dumps({**data, "result": 0.0}, ensure_ascii=False), encoding="utf-8")
    moderation = logs / "close_end_application" / "moderation_15" / "log.json"
    data = json.loads(moderation.read_text(encoding="utf-8"))
    submit = {c["id"] for m in data["history"] if m.get("role") == "assistant" for c in m.get("tool_calls") or []
              if json.loads(c["function"]["arguments"]) == {"x": 709, "y": 693}}
    assert len(submit) == 1
    data["history"] = [m for m in data["history"] if not (
        m.get("tool_call_id") in submit or any(c["id"] in submit for c in m.get("tool_calls") or []))]
    moderation.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out")
    rows = {r["task_id"]: r for r in result.rows}
    assert (rows["gui_like_13"]["sr"], rows["gui_like_13"]["sr_from"], rows["gui_like_13"]["public_sr"]) == \
        (0.0, "result", 1.0)
    assert rows["gui_like_13"]["replay_disagreement"] == "the runner failed it; every check held in the replay"
    assert (rows["moderation_15"]["sr"], rows["moderation_15"]["sr_from"], rows["moderation_15"]["public_sr"]) == \
        (1.0, "result", 0.0)
    assert rows["moderation_15"]["replay_disagreement"].startswith("the runner passed it; the replay found ")
    assert sorted(t for t, r in rows.items() if r["replay_disagreement"]) == ["gui_like_13", "moderation_15"]
    after = build_rewards(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "rewards", load_config().media).counts
    # the like turns from a positive into a negative; the report stays a positive, as the runner logged it
    assert (after["L1 positive"], after["L1 negative"]) == (before["L1 positive"] - 1, before["L1 negative"] + 1)
    assert after["L3 positive"] == before["L3 positive"] and after.get("L3 negative", 0) == before.get("L3 negative", 0)


def test_an_episode_that_ended_without_finish_is_flagged(catalog, tmp_path):
    """The step cap stops an episode with no `finish`: the runner still logs a result. Such an episode is
    flagged in the per-episode table and the summary; the seven that finished are not."""
    record_release(catalog, runner_dir(tmp_path / "release"))
    logs = episodes_copy(tmp_path / "logs")
    log = logs / "gui_action" / "gui_like_1" / "log.json"
    data = json.loads(log.read_text(encoding="utf-8"))
    for message in data["history"]:  # the same taps, but the model never said it was done
        if message.get("role") == "assistant" and message.get("tool_calls"):
            message["tool_calls"] = [c for c in message["tool_calls"] if c["function"]["name"] != "finish"]
    turns = sum(m.get("role") == "assistant" for m in data["history"])
    log.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = grade_logs(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out", include_defective=True)
    flagged = {r["task_id"]: r["cut_off"] for r in result.rows if r["cut_off"]}
    assert flagged == {"gui_like_1": f"no finish: stopped after {turns} turns (the step cap, or it broke off)"}
    assert result.summary["cut_off"] == [f"Scripted/gui_like_1: {flagged['gui_like_1']}"]
    assert pq.read_table(tmp_path / "out" / "episodes.parquet").column("cut_off").null_count == 6


def test_one_models_category_folders_are_one_model(catalog, tmp_path):
    """The runner writes logs/<model>/<category>/<task_id>/: the folder of the model is one model, and so are
    its category folders given one by one (they were graded as three models named after the categories)."""
    record_release(catalog, runner_dir(tmp_path / "release"))
    path = catalog.path
    catalog.close()
    logs = episodes_copy(tmp_path / "logs" / "Scripted")
    whole = _cli(path, tmp_path, str(logs), "--release", "1.0.0", "--out", str(tmp_path / "whole"), "--json")
    parts = _cli(path, tmp_path, *(str(logs / c) for c in ("gui_action", "cross_source_understanding",
                                                            "close_end_application")),
                 "--release", "1.0.0", "--out", str(tmp_path / "parts"), "--json")
    assert whole.returncode == 0 and parts.returncode == 0, whole.stderr + parts.stderr
    for out in (whole, parts):
        summary = json.loads(out.stdout)
        assert {g["model"] for g in summary["per_tier"]} == {"Scripted"}
        assert sum(g["episodes"] for g in summary["per_tier"]) == 7
