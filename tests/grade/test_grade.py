"""Grading the runner's episodes against a release: SR by the runner's rules (and where ours
differ), NS, WR by hand, observation buckets at their edges, and the logs that cannot be graded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from curation.core.catalog import Catalog
from curation.env.episodes import parse_calls
from curation.grade.grade import grade_logs
from curation.grade.metrics import bucket, track_watching
from tests.conftest import ROOT
from tests.core.contract import run_traced
from tests.grade.logs import DOWN, UP, app_state, write_episode


def test_bucket_edges_and_a_swipe_past_either_end():
    assert [bucket(r) for r in (0.0, 0.0001, 0.10, 0.1001, 0.80, 0.8001, 1.5)] == [
        "skipped", "glanced", "glanced", "partially_viewed", "partially_viewed", "fully_consumed", "fully_consumed"]
    calls = parse_calls([{"role": "assistant", "tool_calls": [
        {"function": {"name": name, "arguments": json.dumps(args)}} for name, args in [
            ("swipe", DOWN), ("watch", {"seconds": 2}), ("swipe", UP), ("swipe", UP), ("swipe", UP),
            ("watch", {"seconds": 3, "fps": 2}), ("swipe", {"x1": 500, "y1": 600, "x2": 500, "y2": 500}),
            ("watch", {"seconds": 1}), ("swipe", DOWN), ("watch", {"seconds": 4})]]}])
    # down at the top stays on video 0; three ups on a 3-video feed stop at the last; a short swipe moves nothing
    assert track_watching(calls, 3) == [2.0, 4.0, 4.0]


def test_episodes_graded_by_the_runners_rules_with_ours_beside_them(released, tmp_path):
    cat, tasks = released
    logs = tmp_path / "logs" / "model-a" / "all"
    fa1 = tasks["feature_analysis_1"]
    write_episode(logs, "feature_analysis_1", fa1["instruction"], [
        ("watch", {"seconds": 2}),                      # video 0 (20 s): r = 0.10, glanced at the edge
        ("swipe", UP), ("watch", {"seconds": 8}),       # video 1: r = 0.80, partially viewed at the edge
        ("swipe", UP), ("watch", {"seconds": 9.5}),     # video 2: fully consumed
        ("answer", {"text": " B "}), ("answer", {"text": "C"}), ("finish", {})], result=1.0)
    write_episode(logs, "feature_analysis_2", tasks["feature_analysis_2"]["instruction"], [
        ("click", {"x": 500.5, "y": 300}), ("swipe", "{not json"), ("wait", {"seconds": 3}),
        ("mark_point", {"x": 1, "y": 2}), ("type", {"text": "hello"}), ("finish", {})], result=0.0)
    write_episode(logs, "gui_like_1", tasks["gui_like_1"]["instruction"],
                  [("swipe", UP), ("click", {"x": 930, "y": 520}), ("finish", {})], result=1.0,
                  state=app_state(len(tasks["gui_like_1"]["video_feed"]), v0={"is_liked": True},
                                  v1={"is_liked": True}))
    write_episode(logs, "moderation_1", tasks["moderation_1"]["instruction"], [("swipe", UP), ("swipe", UP),
                                                                           ("finish", {})], result=0.0)
    write_episode(logs, "gui_collect_9", "不在发布里的任务", [("finish", {})], result=0.0)
    (logs / "broken").mkdir()
    (logs / "broken" / "log.json").write_text("{", encoding="utf-8")

    result = run_traced(cat, "grade", lambda: grade_logs(cat, [("model-a", tmp_path / "logs")], "1.0.0",
                                                          tmp_path / "out"))
    assert (result["logs"], result["graded"], result["rejected"]) == (6, 4, 2)
    reasons = sorted(r["reason"] for r in cat.rows("SELECT reason FROM rejects WHERE stage = 'grade'"))
    assert "not readable JSON" in reasons[0] and "task gui_collect_9 is not in release 1.0.0" in reasons[1]
    rows = {r["task_id"]: r for r in result.rows}

    first = rows["feature_analysis_1"]
    assert (first["sr"], first["sr_from"], first["answer"], first["answered_differently"]) == (1.0, "answer", "B", True)
    assert first["ns"] == 8 and first["watch_s"] == 19.5
    runtime = 20.0 + 10.0 * (len(fa1["video_feed"]) - 1)
    assert first["runtime_s"] == runtime and first["wr"] == pytest.approx(19.5 / runtime)
    assert first["buckets"][:3] == ["glanced", "partially_viewed", "fully_consumed"]
    assert set(first["buckets"][3:]) <= {"skipped"}

    second = rows["feature_analysis_2"]
    assert (second["sr"], second["answer"], second["ns"], second["invalid_calls"]) == (0.0, None, 6, 2)
    assert second["wr"] == 0.0 and set(second["buckets"]) == {"skipped"}

    like = rows["gui_like_1"]
    # the runner never reads video 0 for an extra like: it logged 1.0, and SR is the runner's rule; the extra like
    # is flagged beside it
    assert (like["sr"], like["public_sr"], like["sr_from"], like["logged_result"]) == (1.0, 1.0, "state", 1.0)
    assert like["index0_disagrees"] and not like["state_disagrees"] and like["progress"] == 1.0
    report = rows["moderation_1"]
    # no state.json: the state rebuilt from the two swipes has no report on video 2
    assert (report["sr"], report["sr_from"], report["progress"]) == (0.0, "replay", 0.5)

    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["index0_disagreements"] == ["model-a/gui_like_1"]
    assert summary["answered_differently"] == ["model-a/feature_analysis_1"]
    l2 = next(g for g in summary["per_tier"] if g["tier"] == "L2")
    assert (l2["episodes"], l2["sr"], l2["ns"]) == (2, 0.5, 7.0)
    assert (tmp_path / "out" / "episodes.csv").read_text(encoding="utf-8").count("\n") == 5
    assert cat.scalar("SELECT count(*) FROM episode_grades") == 4
    again = grade_logs(cat, [("model-a", tmp_path / "logs")], "1.0.0", tmp_path / "out")
    assert again["graded"] == 4 and cat.scalar("SELECT count(*) FROM episode_grades") == 4


def test_two_models_from_the_command_line(released, tmp_path):
    cat, tasks = released
    for model, text in (("seed", "B"), ("gemini", "C")):
        write_episode(tmp_path / model, "feature_analysis_1", tasks["feature_analysis_1"]["instruction"],
                      [("watch", {"seconds": 5 if model == "seed" else 1}), ("answer", {"text": text})], result=0.0)
    path = cat.path
    cat.close()
    config = tmp_path / "curation.toml"
    config.write_text(f'[reports]\ndir = "{tmp_path / "reports"}"\n', encoding="utf-8")
    base = [sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config), "grade"]
    out = subprocess.run([*base, str(tmp_path / "seed"), str(tmp_path / "gemini"), "--release", "v1.0.0",
                          "--model", "seed", "--model", "gemini", "--out", str(tmp_path / "out"), "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    per_tier = {g["model"]: g for g in json.loads(out.stdout)["per_tier"]}
    assert per_tier["seed"]["sr"] == 1.0 and per_tier["gemini"]["sr"] == 0.0
    assert per_tier["seed"]["wr"] > per_tier["gemini"]["wr"]
    page = (tmp_path / "out" / "grade.html").read_text(encoding="utf-8")  # beside the run's files
    assert "Success against cost" in page and page.count("<circle") == 4
    typo = subprocess.run([*base, str(tmp_path / "seed"), "--release", "1.0.0", "--model", "a", "--model", "b"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert typo.returncode == 2 and "give one --model per logs folder" in typo.stderr
    with Catalog(path) as again:
        assert again.scalar("SELECT count(*) FROM episode_grades") == 2


def test_an_empty_folder_or_a_second_log_of_a_task_is_named(released, tmp_path):
    from curation.core.errors import InputError
    from curation.grade.metrics import first_answer

    cat, tasks = released
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no episode logs"):
        grade_logs(cat, [("m", tmp_path / "empty")], "1.0.0", tmp_path / "out")
    asked = tasks["feature_analysis_1"]["instruction"]
    write_episode(tmp_path / "logs", "feature_analysis_1", asked, [("answer", {"text": "B"})], 1.0)
    write_episode(tmp_path / "logs" / "retry", "feature_analysis_1", asked, [("answer", {"text": "C"})], 0.0)
    result = grade_logs(cat, [("m", tmp_path / "logs")], "1.0.0", tmp_path / "out")
    assert (result["graded"], result["rejected"]) == (1, 1)
    assert "a second log of feature_analysis_1 for m" in cat.scalar("SELECT reason FROM rejects WHERE stage = 'grade'")
    # the runner counts the first answer call even when its arguments were broken
    calls = parse_calls([{"role": "assistant", "tool_calls": [{"function": {"name": "answer", "arguments": "{B"}},
                                                              {"function": {"name": "answer",
                                                                            "arguments": '{"text": "B"}'}}]}])
    assert first_answer(calls) == ("", True)
