"""Reward records: a 1-fps step video with one frame per step (probed), the graded label, and a
hard negative derived from the task's own ground truth."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace

import pytest

from curation.core.config import load_config
from curation.grade.negatives import make_negative
from curation.grade.rewards import build_rewards
from curation.release.build import build_release
from tests.core.contract import run_traced
from tests.grade.logs import UP, write_episode
from tests.release.helpers import reviewed_catalog, settings


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", *args], check=True)


def screenshot(path, colour: str) -> None:
    ffmpeg("-f", "lavfi", "-i", f"color=c={colour}:s=375x812", "-frames:v", "1", str(path))


@pytest.mark.parametrize(("task", "instruction", "config", "how"), [
    ({"eval_type": "label", "instruction": "几种动物？\nA:一种 B:两种 C:三种", "eval_config": [{"answer": "B"}]},
     "几种动物？\nA:两种 B:一种 C:三种", [{"answer": "A"}], "options B and A swapped"),
    ({"eval_type": "platform", "instruction": "给第二个视频点赞", "video_feed": ["a", "b", "c"],
      "eval_config": [{"func": "eval_like", "args": {"video_ids": 1}}]},
     "给第二个视频收藏", [{"func": "eval_collect", "args": {"video_ids": 1}}], "点赞 → 收藏"),
    ({"eval_type": "platform", "instruction": "给第2个视频评论", "video_feed": ["a", "b", "c"],
      "eval_config": [{"func": "eval_comment", "args": {"video_ids": 1}}]},
     "给第3个视频评论", [{"func": "eval_comment", "args": {"video_ids": 2}}], "video 2 → 3"),
    ({"eval_type": "platform", "instruction": "举报不实视频", "video_feed": ["a", "b", "c"],
      "eval_config": [{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "不实信息"}}]},
     "举报血腥暴力视频", [{"func": "eval_report", "args": {"video_ids": 2, "expected_cat": "血腥暴力"}}],
     "report category → 血腥暴力"),
    ({"eval_type": "platform", "instruction": "暂停在一半", "video_feed": ["a", "b"],
      "eval_config": [{"func": "eval_playback", "args": {"video_id": 0, "target_pct": 0.5}}]},
     "把第二个视频播放到50%的位置", [{"func": "eval_playback", "args": {"video_id": 1, "target_pct": 0.5}}],
     "video 1 → 2"),
])
def test_a_negative_asks_for_something_the_task_did_not(task, instruction, config, how):
    negative = make_negative(task)
    assert (negative.instruction, negative.eval_config, negative.how) == (instruction, config, how)


def test_reward_records_with_a_one_frame_per_step_video(clustered_catalog, tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)
    build_release(cat, "1.0.0", settings(tmp_path / "releases"))
    logs = tmp_path / "logs"
    folder = write_episode(logs, "gui_like_1", "给第二个视频点赞", [
        ("swipe", UP), ("watch", {"seconds": 2}), ("click", {"x": 883, "y": 607}), ("finish", {})], result=1.0)
    for n, colour in ((0, "red"), (1, "green"), (3, "white")):
        screenshot(folder / f"step_{n}.png", colour)
    ffmpeg("-f", "lavfi", "-i", "color=c=blue:s=368x800:r=1", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
           str(folder / "step_2.mp4"))
    asked = json.loads(cat.scalar("SELECT runner FROM release_tasks WHERE task_id = 'feature_analysis_1'"))
    write_episode(logs, "feature_analysis_1", asked["instruction"], [("answer", {"text": "C"}), ("finish", {})],
                  result=0.0)
    screenshot(logs / "feature_analysis_1" / "step_0.png", "black")
    write_episode(logs, "moderation_1", "举报不实视频", [("finish", {})], result=0.0)  # no recordings: rejected
    media = replace(load_config().media)
    counts = run_traced(cat, "rewards-build", lambda: build_rewards(cat, [("m", logs)], "1.0.0", tmp_path / "out",
                                                                     media))
    assert (counts["logs"], counts["rejected"], counts["records"]) == (3, 1, 3)
    assert (counts["L1 positive"], counts["L1 derived negative"], counts["L2 negative"]) == (1, 1, 1)
    lines = [json.loads(line) for line in (tmp_path / "out" / "rewards.jsonl").read_text(encoding="utf-8").splitlines()]
    like = [r for r in lines if r["videos"] == ["videos/m/gui_like_1.mp4"]]
    assert [r["conversations"][1]["value"] for r in like] == ["\\box{correct}", "\\box{incorrect} [3s, 4s)"]
    assert like[0]["conversations"][0]["value"].startswith("<video>给第二个视频点赞")
    assert like[1]["conversations"][0]["value"] == "<video>给第二个视频收藏"
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-show_streams", "-of", "json",
         str(tmp_path / "out" / "videos" / "m" / "gui_like_1.mp4")], capture_output=True, text=True,
        check=True).stdout)["streams"][0]
    assert int(probe["nb_read_frames"]) == 4 and probe["r_frame_rate"] == "1/1"  # one frame per step, at 1 fps
    assert all(not r["videos"][0].startswith("/") for r in lines)


def test_steps_keep_the_runners_numbering_across_a_failed_call_and_frame_only_watches(tmp_path):
    from curation.env.episodes import read_episode
    from curation.grade.negatives import Negative
    from curation.grade.rewards import departure_second

    folder = write_episode(tmp_path, "gui_like_1", "给第二个视频点赞", [
        ("watch", {"seconds": 2}), ("click", "{broken"), ("click", {"x": 930, "y": 520}), ("finish", {})], 1.0)
    for name in ("step_0.png", "step_1_frame_0.png", "step_1_frame_1.png", "step_3.png"):  # step 2: an error text
        screenshot(folder / name, "gray")
    episode = read_episode(folder / "log.json")
    assert [p.name for p in episode.steps] == ["step_0.png", "step_1_frame_1.png", "step_3.png"]
    like_to_collect = Negative("给第二个视频收藏", "点赞 → 收藏", [])
    assert departure_second(episode, like_to_collect) == 2  # the click's step 3 is the video's third frame
