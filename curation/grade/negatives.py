"""Hard negatives without a model, in the spirit of ExeVR's adversarial instruction translation:
a trajectory that fulfils its task is paired with a plausible instruction it does not fulfil,
derived from the task's own ground truth and worded like the original.

- label tasks: the right option's text changes place with another option's, so the same letters
  now ask for something else; the trajectory departs at its answer;
- platform tasks: another target position (the ordinal in the wording follows), the other of
  like / collect, another report category, another playback point. When the wording names
  nothing that can be changed, the instruction is written from a template in the same style.

A moderation instruction carries its rubric: one line per report category, `<category>：<definition>`.
Swapping a category's name inside it would give one name two definitions, so its negative asks
for the target video under another category of that rubric (the first other one in the app's
order) and quotes that category's own definition from it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from curation.env.vocabulary import VOCABULARY
from curation.tasks.runner_format import runner_instruction
from curation.tasks.syntax import split_instruction
from curation.tasks.taxonomy import load_taxonomy

ORDINALS = "一二三四五六七八九十"


@dataclass(frozen=True)
class Negative:
    instruction: str
    how: str                      # what was changed, for the record
    eval_config: list[dict[str, Any]]
    departs_at_answer: bool = False
    new_target: int | None = None  # the position the new instruction is about (platform tasks)
    departs_at_first_action: bool = True  # False when no single step tells (a category chosen among clicks)


def ordinal(position: int) -> str:
    n = position + 1
    return ORDINALS[n - 1] if n <= 10 else str(n)


def _swap_position(text: str, old: int, new: int) -> str:
    for before, after in ((f"第{ordinal(old)}个", f"第{ordinal(new)}个"), (f"第{old + 1}个", f"第{new + 1}个")):
        if before in text:
            return text.replace(before, after, 1)
    return text


TEMPLATES = {func: spec.negative for func, spec in VOCABULARY.items()}  # the check vocabulary's


def rubric(text: str) -> dict[str, str]:
    """The instruction's category lines, `<category>：<definition>`, for the app's report categories, in order."""
    categories = load_taxonomy().report_categories
    found = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\s*(\S+?)\s*[：:]\s*(.+?)\s*", line)
        if match and match.group(1) in categories:
            found[match.group(1)] = match.group(2)
    return found


def rubric_negative(checks: list[dict[str, Any]], text: str, first: int) -> Negative | None:
    """For an instruction that carries a rubric of two categories or more: report the same video under the
    first other category of the rubric, with that category's definition."""
    args = checks[0]["args"]
    defined = rubric(text)
    category = args.get("expected_cat")
    others = [c for c in defined if c != category]
    if len(defined) < 2 or category not in defined or not others:
        return None
    new_cat = others[0]
    args["expected_cat"] = new_cat
    return Negative(f"举报第{ordinal(first)}个视频，类别选{new_cat}。{new_cat}：{defined[new_cat]}",
                    f"report category → {new_cat}", checks, new_target=first, departs_at_first_action=False)


def label_negative(task: dict[str, Any]) -> Negative | None:
    question, options = split_instruction(task["instruction"])
    answer = str((task.get("eval_config") or [{}])[0].get("answer", "")).strip()
    others = [k for k in sorted(options) if k != answer]
    if answer not in options or not others:
        return None
    other = others[0]
    swapped = {**options, answer: options[other], other: options[answer]}
    return Negative(runner_instruction(question, swapped), f"options {answer} and {other} swapped",
                    [{"answer": other}], departs_at_answer=True)


def platform_negative(task: dict[str, Any], feed_len: int) -> Negative | None:
    checks = copy.deepcopy(task.get("eval_config") or [])
    if not checks or feed_len < 2:
        return None
    check = checks[0]
    func, args = check.get("func"), check.setdefault("args", {})
    key = "video_ids" if "video_ids" in args else "video_id"
    ids = args.get(key)
    first = ids if isinstance(ids, int) else (ids or [0])[0]
    text = task["instruction"]
    if func in ("eval_like", "eval_collect") and ("点赞" in text) != ("收藏" in text):
        swap = {"eval_like": ("eval_collect", "点赞", "收藏"), "eval_collect": ("eval_like", "收藏", "点赞")}[func]
        check["func"] = swap[0]
        return Negative(text.replace(swap[1], swap[2]), f"{swap[1]} → {swap[2]}", checks, new_target=first)
    if func == "eval_report" and len(rubric(text)) >= 2:
        return rubric_negative(checks, text, first)
    category = str(args.get("expected_cat") or "")
    named = next((w for w in (category, category[:2]) if w and w in text), None)  # 不实信息, or just 不实
    if func == "eval_report" and named:
        new_cat = next(c for c in load_taxonomy().report_categories if c != category)
        changed = text.replace(named, new_cat, 1)
        args["expected_cat"] = new_cat
        return Negative(changed, f"report category → {new_cat}", checks, new_target=first,
                        departs_at_first_action=False)
    taken = set([ids] if isinstance(ids, int) else ids or [])
    new = next(((first + step) % feed_len for step in range(1, feed_len) if (first + step) % feed_len not in taken),
               None)
    if new is None:
        return None
    args[key] = new if isinstance(ids, int) or key == "video_id" else [new if i == first else i for i in ids]
    changed = _swap_position(text, first, new)
    if changed == text:  # the wording names no position: say it as the templates do
        pct = f"{round(float(args.get('target_pct', 0.5)) * 100)}%"
        changed = TEMPLATES.get(func, "第{n}个视频").format(n=ordinal(new), cat=args.get("expected_cat", ""), pct=pct)
    return Negative(changed, f"video {first + 1} → {new + 1}", checks, new_target=new)


def make_negative(task: dict[str, Any]) -> Negative | None:
    if task["eval_type"] == "label":
        return label_negative(task)
    return platform_negative(task, len(task.get("video_feed") or []))
