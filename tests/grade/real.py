"""The v1 tasks the recorded episodes played, rebuilt from facts about those episodes (not copied from the
release): the instruction as each log.json carries it, the feed from the video URLs in state.json, the checks
of the seven from what the fixtures' README says each script did and the runner's result; those of the
episodes recorded later (runner-episodes-more) are the public tasks' `eval_config`, which their README lists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from curation.core.catalog import Catalog
from curation.qc.accept import accept_imported
from curation.release.livingscreen import import_livingscreen

EPISODES = Path(__file__).parents[1] / "fixtures" / "runner-episodes" / "Scripted"
MORE = Path(__file__).parents[1] / "fixtures" / "runner-episodes-more" / "Scripted"
CHECKS: dict[str, list[dict[str, Any]]] = {
    "gui_like_1": [{"func": "eval_like", "args": {"video_ids": 0}}],        # tapped like on the first video
    "gui_collect_1": [{"func": "eval_collect", "args": {"video_ids": 0}}],
    "gui_comment_1": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "这个视频拍得真好！"}}],
    "gui_swipe_7": [{"func": "eval_current_video", "args": {"video_id": 2}}],  # two valid swipes, "第三个"
    # swiped to video 1 and picked the first category of the report form; the runner gave 1.0
    "moderation_9": [{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "血腥暴力"}}],
    "spatiotemporal_aggregation_12": [{"answer": "D"}],  # answered D, 1.0
    "event_association_16": [{"answer": "C"}],  # answered A first and got 0.0: C, its second answer, stands in
    # runner-episodes-more: the public v1 task's eval_config (BITHLP/LivingScreen data/<category>.json)
    "gui_like_4": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_like_5": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_like_7": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_like_10": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_like_13": [{"func": "eval_like", "args": {"video_ids": 0}}],
    "gui_collect_4": [{"func": "eval_collect", "args": {"video_ids": 0}}],
    "gui_collect_7": [{"func": "eval_collect", "args": {"video_ids": 0}}],
    "gui_comment_4": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "太实用了，感谢分享。"}}],
    "gui_comment_7": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "我也想要链接。"}}],
    "gui_comment_13": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "加油，支持一下。"}}],
    "gui_comment_16": [{"func": "eval_comment", "args": {"video_ids": 0, "comment": "博主太强了！"}}],
    "gui_comment_19": [{"func": "eval_comment", "args": {"video_ids": 0}}],
    "gui_report_1": [{"func": "eval_report", "args": {"video_ids": 0}}],
    "gui_report_4": [{"func": "eval_report", "args": {"video_ids": 0, "expected_cat": "色情低俗"}}],
    "gui_swipe_1": [{"func": "eval_current_video", "args": {"video_id": 1}}],
    "gui_swipe_4": [{"func": "eval_current_video", "args": {"video_id": 1}}],
    "preference_3": [{"func": "eval_collect", "args": {"video_ids": [5, 7]}}],
    "preference_4": [{"func": "eval_like", "args": {"video_ids": [5, 7]}}],
    "preference_10": [{"func": "eval_like", "args": {"video_ids": [1, 5, 9]}}],
    "preference_12": [{"func": "eval_like", "args": {"video_ids": [2, 6]}}],
    "fact_check_62": [{"func": "eval_like", "args": {"video_ids": [5]}}],
    "moderation_15": [{"func": "eval_report", "args": {"video_ids": 6, "expected_cat": "不实信息"}}],
    "feature_analysis_23": [{"answer": "C"}],
    "contextual_association_267": [{"answer": "C"}],
}


def feed_entry(video_url: str) -> str:
    """The runner's feed entry back from the URL utils.py feed2data gave its video."""
    for prefix, source in (("static/data/FakeSV/videos/", "FakeSV/"), ("static/data/LiveBot/videos/", "LiveBot/"),
                           ("static/data/", "")):
        if video_url.startswith(prefix) and video_url.endswith(".mp4"):
            return source + unquote(video_url[len(prefix):-len(".mp4")])
    raise ValueError(f"not a URL feed2data writes: {video_url}")


def element(log: Path) -> dict[str, Any]:
    instruction = json.loads(log.read_text(encoding="utf-8"))["instruction"]
    state = json.loads((log.parent / "state.json").read_text(encoding="utf-8"))
    feed = [feed_entry(v["video_url"]) for v in state]
    checks = CHECKS[log.parent.name]
    return {"task_id": log.parent.name, "instruction": instruction, "video_feed": feed,
            "eval_type": "label" if "answer" in checks[0] else "platform", "eval_config": checks}


def runner_dir(folder: Path, extra: dict[str, list[dict[str, Any]]] | None = None,
               roots: tuple[Path, ...] = (EPISODES,)) -> Path:
    """The recorded episodes' tasks (the seven unless `roots` says) as the runner's files (a file per category
    folder), plus `extra` by file name."""
    files: dict[str, list[dict[str, Any]]] = {}
    for log in sorted(log for root in roots for log in root.rglob("log.json")):
        files.setdefault(f"{log.parent.parent.name}.json", []).append(element(log))
    for name, items in (extra or {}).items():
        files.setdefault(name, []).extend(items)
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in files.items():
        (folder / name).write_text(json.dumps(items, ensure_ascii=False, indent=2), encoding="utf-8")
    return folder


def record_release(cat: Catalog, folder: Path, version: str = "1.0.0") -> None:
    """Imported as the runner files are, then carried forward as inherited (the tasks that pass the rules
    become `kept`, a released state)."""
    import_livingscreen(cat, folder, version)
    accept_imported(cat, version, "the public release, graded as published", who="test")


def episodes_copy(target: Path, keep_state: bool = False, roots: tuple[Path, ...] = (EPISODES,)) -> Path:
    """The recorded episodes as a run leaves them: no state.json (the public runner never writes one), nor the
    instrumented copy's page.json."""
    for root in roots:
        shutil.copytree(root, target, dirs_exist_ok=True)
    for written in target.rglob("page.json"):
        written.unlink()
    if not keep_state:
        for state in target.rglob("state.json"):
            state.unlink()
    return target


def add_turns(log: Path, before_first: list[tuple[str, dict[str, Any]]]) -> None:
    """Insert turns (one tool call each, with the runner's tool message after it) before the first assistant
    turn of a log, in the runner's exact message shape."""
    data = json.loads(log.read_text(encoding="utf-8"))
    at = next(i for i, m in enumerate(data["history"]) if m.get("role") == "assistant")
    extra: list[dict[str, Any]] = []
    for n, (name, args) in enumerate(before_first):
        call_id = f"call_extra_{n}"
        extra += [{"role": "assistant", "content": "", "tool_calls": [{
                   "id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
                  {"role": "tool", "content": [{"type": "text", "text": "这是执行上一步动作后的屏幕截图。"}],
                   "tool_call_id": call_id}]
    data["history"] = data["history"][:at] + extra + data["history"][at:]
    log.write_text(json.dumps(data, ensure_ascii=False, indent=4), encoding="utf-8")
