"""A release of generated tasks and the episodes of noisy-oracle agents on it, in the public runner's exact log shape.

Each agent plays the perfect plan (`curation/tasks/perfect.py` for platform tasks: the plan a perfect agent plays
from the checks; the key for a label task) but errs at each step with its own probability: a platform step it errs
on is left out (a swipe or tap not made), a label answer it errs on is another option, drawn at random. So its
expected SR is known without grading: (1 − p) on a label task, (1 − p)^steps on a platform task.

Two planted defects:
- `event_association_99`: a wrong key. The question is obvious (every agent knows the answer, B) but the key says
  A: every agent answers B, and is graded wrong.
- `gui_like_99`: a check nobody can meet for the same reason. The instruction asks to like video 2, the check
  reads video 4: agents do what the instruction says, and every episode leaves `eval_like 3` unmet, although the
  perfect-agent proof (which plays the checks) passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from curation.tasks.perfect import perfect_plan

LABEL_SUBS = ("feature_analysis", "event_association", "spatiotemporal_aggregation")
PLATFORM_SUBS = (("gui_like", "eval_like", "gui_action.json"), ("gui_collect", "eval_collect", "gui_action.json"),
                 ("preference", "eval_like", "close_end_application.json"))
WRONG_KEY, UNMEETABLE = "event_association_99", "gui_like_99"
ORDINAL = "一二三四五"
FEED = 5


@dataclass
class GeneratedRelease:
    folder: Path
    tasks: list[dict[str, Any]]
    plans: dict[str, list[list[tuple[str, dict[str, Any]]]]]   # what an agent plays (the instruction's plan)

    def expected_sr(self, error: float) -> float:
        """An agent's expected SR over the good tasks (the planted ones left out)."""
        rates = [(1 - error) ** _steps(self.plans[t["task_id"]]) if t["eval_type"] == "platform" else 1 - error
                 for t in self.tasks if t["task_id"] not in (WRONG_KEY, UNMEETABLE)]
        return float(np.mean(rates))


def _steps(plan: list[list[tuple[str, dict[str, Any]]]]) -> int:
    return sum(name in ("click", "swipe", "type") for turn in plan for name, _ in turn)


def generate_release(folder: Path, labels: int, platform: int, seed: int) -> GeneratedRelease:
    rng = np.random.default_rng(seed)
    files: dict[str, list[dict[str, Any]]] = {}
    tasks, plans = [], {}
    for n in range(labels):
        sub = LABEL_SUBS[n % len(LABEL_SUBS)]
        task_id = WRONG_KEY if n == 0 else f"{sub}_{n + 1}"
        key = "A" if task_id == WRONG_KEY else "ABCD"[int(rng.integers(4))]
        tasks.append({"task_id": task_id, "instruction": f"问题 {n + 1}：视频里出现了什么？\nA:猫 B:狗 C:鸟 D:鱼",
                      "video_feed": [f"FakeSV/g{n}_{i}" for i in range(FEED)], "eval_type": "label",
                      "eval_config": [{"answer": key}]})
        plans[task_id] = [[("answer", {"text": "B" if task_id == WRONG_KEY else key})], [("finish", {})]]
        files.setdefault("cross_source_understanding.json", []).append(tasks[-1])
    for n in range(platform):
        sub, func, file = PLATFORM_SUBS[n % len(PLATFORM_SUBS)]
        task_id = UNMEETABLE if n == 0 else f"{sub}_{n + 1}"
        asked = 1 if task_id == UNMEETABLE else int(rng.integers(FEED))
        checked = 3 if task_id == UNMEETABLE else asked
        verb = "点赞" if func == "eval_like" else "收藏"
        tasks.append({"task_id": task_id, "instruction": f"给第{ORDINAL[asked]}个视频{verb}",
                      "video_feed": [f"FakeSV/p{n}_{i}" for i in range(FEED)], "eval_type": "platform",
                      "eval_config": [{"func": func, "args": {"video_ids": checked}}]})
        turns, why_not = perfect_plan([{"func": func, "args": {"video_ids": asked}}], [None] * FEED)
        assert why_not is None, why_not
        plans[task_id] = turns
        files.setdefault(file, []).append(tasks[-1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in files.items():
        (folder / name).write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    return GeneratedRelease(folder, tasks, plans)


def play(release: GeneratedRelease, logs: Path, error: float, seed: int) -> dict[str, bool]:
    """One agent's episodes under `logs/<task_id>/log.json`; returns whether it played each task without error."""
    rng = np.random.default_rng(seed)
    clean = {}
    for task in release.tasks:
        turns, erred = [], False
        for turn in release.plans[task["task_id"]]:
            kept = []
            for name, args in turn:
                if name == "answer" and rng.random() < error:
                    erred = True
                    args = {"text": str(rng.choice([o for o in "ABCD" if o != args["text"]]))}
                elif name in ("click", "swipe", "type") and rng.random() < error:
                    erred = True
                    continue
                kept.append((name, args))
            turns.append(kept)
        clean[task["task_id"]] = not erred
        _write_log(logs / task["task_id"], task["instruction"], [t for t in turns if t])
    return clean


def _write_log(folder: Path, instruction: str, turns: list[list[tuple[str, dict[str, Any]]]]) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": "你是一个手机短视频应用上的智能体。"},
                                     {"role": "user", "content": [{"type": "text", "text": instruction}]}]
    for n, turn in enumerate(turns):
        calls = [{"id": f"call_{n}_{i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                 for i, (name, args) in enumerate(turn)]
        history.append({"role": "assistant", "content": "", "tool_calls": calls})
        history += [{"role": "tool", "content": [{"type": "text", "text": "这是执行上一步动作后的屏幕截图。"}],
                     "tool_call_id": c["id"]} for c in calls]
    folder.mkdir(parents=True, exist_ok=True)
    # no `result`: the runner's verdict is what the grader rebuilds (the replay), not something this writer claims
    (folder / "log.json").write_text(json.dumps({"instruction": instruction, "history": history}, ensure_ascii=False),
                                     encoding="utf-8")
