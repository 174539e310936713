"""Reward records read episodes as grading does (one rule for second logs and rejects), never make a
positive of a defective task, and a moderation negative names another real category with its own
definition from the task's rubric."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from curation.core.catalog import now
from curation.core.config import load_config
from curation.grade.negatives import make_negative, rubric
from curation.grade.rewards import build_rewards
from curation.tasks.taxonomy import load_taxonomy
from tests.grade.real import episodes_copy, record_release, runner_dir
from tests.skips import V1, requires_v1

CATEGORIES = load_taxonomy().report_categories
# our own wording of a moderation rubric, one definition per category (v1's tasks carry one like it)
DEFINITIONS = {"血腥暴力": "流血、打斗、虐待动物的画面。", "不实信息": "伪科学、编造的历史或常识。",
               "虚假营销": "诱导转账、虚假免费领取、来历不明的链接。", "色情低俗": "性暗示、裸露或低俗挑逗。"}


def moderation_tasks() -> list[dict]:
    """Every moderation task of a 10-video feed this rubric allows: each category at each position, with the
    rubric's lines written with a full-width colon and a space (as v1 does) or an ASCII colon."""
    tasks = []
    for colon in ("： ", ":"):
        lines = [f"{c}{colon}{d}" for c, d in DEFINITIONS.items()]
        text = "\n".join(["请审核以下十个视频，按下列类别在系统中举报。", *lines])
        for category in CATEGORIES:
            for position in range(10):
                tasks.append({"task_id": f"moderation_{len(tasks) + 1}", "instruction": text, "eval_type": "platform",
                              "video_feed": [f"FakeSV/v{i}" for i in range(10)],
                              "eval_config": [{"func": "eval_report",
                                               "args": {"video_ids": position, "expected_cat": category}}]})
    return tasks


def names_another_category(task: dict) -> None:
    negative = make_negative(task)
    assert negative is not None, task["task_id"]
    args = task["eval_config"][0]["args"]
    defined = rubric(task["instruction"])
    named = [c for c in CATEGORIES if c in negative.instruction]
    assert len(named) == 1 and named[0] != args["expected_cat"] and named[0] in defined, negative.instruction
    assert negative.instruction.endswith(f"{named[0]}：{defined[named[0]]}")  # its own definition, whole
    assert negative.eval_config == [{"func": "eval_report", "args": {"video_ids": args["video_ids"],
                                                                      "expected_cat": named[0]}}]


@pytest.mark.parametrize("task", moderation_tasks(), ids=lambda t: t["task_id"])
def test_a_moderation_negative_names_another_category_with_its_definition(task):
    names_another_category(task)




@requires_v1
def test_every_v1_moderation_task_gets_such_a_negative():
    tasks = [t for t in json.loads((V1 / "close_end_application.json").read_text(encoding="utf-8"))
             if t["task_id"].startswith("moderation_")]
    assert len(tasks) == 41
    for task in tasks:
        names_another_category(task)


def screenshots(folder: Path, n: int) -> None:
    for step in range(n):
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i", "color=c=gray:s=375x812",
                        "-frames:v", "1", str(folder / f"step_{step}.png")], check=True)


def test_rewards_reject_a_second_log_and_skip_defective_tasks(catalog, tmp_path):
    record_release(catalog, runner_dir(tmp_path / "v1"))
    catalog.insert("task_transitions", {"task_id": "gui_collect_1", "version": 1, "seq": 4, "from_state": "kept",
                                        "to_state": "needs_fix", "reason": "test: sent back", "who": "test",
                                        "run_id": "test", "moved_at": now()})
    logs = episodes_copy(tmp_path / "logs")
    for folder in (logs / "gui_action" / "gui_like_1", logs / "gui_action" / "gui_collect_1"):
        screenshots(folder, 2)
    retry = logs / "retry" / "gui_like_1"
    shutil.copytree(logs / "gui_action" / "gui_like_1", retry)  # a second run of the same task
    counts = build_rewards(catalog, [("Scripted", logs)], "1.0.0", tmp_path / "out", replace(load_config().media))
    # 8 logs: the retry is rejected as grade rejects it; five have no recordings; gui_collect_1 is defective
    assert (counts["logs"], counts["rejected"], counts["defective skipped"]) == (8, 6, 1)
    assert (counts["L1 positive"], counts["records"]) == (1, 2)  # gui_like_1 and its derived negative
    lines = [json.loads(x) for x in (tmp_path / "out" / "rewards.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["videos"][0] for r in lines} == {"videos/Scripted/gui_like_1.mp4"}
    reasons = [r["reason"] for r in catalog.rows("SELECT reason FROM rejects WHERE stage = 'rewards-build'")]
    assert sum("a second log of gui_like_1 for Scripted" in r for r in reasons) == 1
