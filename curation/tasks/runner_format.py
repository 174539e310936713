"""The public LivingScreen runner's task format: three JSON arrays, one per tier.

Each element: task_id, instruction (question, then the options for label tasks),
video_feed, keyword_videos / other_videos (L2), eval_type, eval_config.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from curation.core.errors import InputError

RUNNER_FILES = {"L1": "gui_action.json", "L2": "cross_source_understanding.json",
                "L3": "close_end_application.json"}
TIER_OF_FILE = {name: tier for tier, name in RUNNER_FILES.items()}


def subcategory_of(task_id: str) -> str:
    """Task ids are `<subcategory>_<n>`."""
    return re.sub(r"_\d+$", "", task_id)


class RunnerFormatError(InputError):
    """A runner directory that cannot be read; the message names the file."""


def runner_instruction(question: str, options: dict[str, str] | None) -> str:
    if not options:
        return question
    return question.rstrip() + "\n" + " ".join(f"{k}:{v}" for k, v in sorted(options.items()))


def catalog_task_rows(catalog: Any) -> list[dict[str, Any]]:
    """The latest version of every task with its life-cycle `state` and `origin` (authored or
    imported), in the runner's terms: `video_feed` is the feed the task uses (after the annotator's
    edits); `keyword_videos` / `other_videos` describe the base feed the annotator was given, so that
    its edits show as deletions and swaps."""
    return catalog.rows("""
        SELECT t.*, s.state, o.to_state AS origin, f.video_feed, f.total_runtime_s, f.ratio,
               b.keyword_videos, b.other_videos
        FROM latest_tasks t
        JOIN task_states s ON s.task_id = t.task_id AND s.version = t.version
        JOIN task_transitions o ON o.task_id = t.task_id AND o.version = t.version AND o.seq = 1
        JOIN feeds f ON f.feed_id = t.feed_id AND f.version = t.feed_version
        JOIN feeds b ON b.feed_id = t.feed_id AND b.version = coalesce(t.base_feed_version, t.feed_version)
        ORDER BY t.task_id""")


def load_runner_dir(folder: Path) -> list[dict[str, Any]]:
    """Tasks of a runner directory, each tagged with the file it came from (`_file`)."""
    if not folder.is_dir():
        raise RunnerFormatError(f"{folder} is not a folder")
    tasks: list[dict[str, Any]] = []
    found = 0
    for name in RUNNER_FILES.values():
        path = folder / name
        if not path.exists():
            continue
        found += 1
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RunnerFormatError(f"{path}: not valid JSON ({exc})") from None
        if not isinstance(items, list):
            raise RunnerFormatError(f"{path}: expected a JSON array of tasks")
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise RunnerFormatError(f"{path}[{index}]: a task must be a JSON object")
            tasks.append({**item, "_file": name})
    if not found:
        raise RunnerFormatError(f"{folder} holds none of {', '.join(RUNNER_FILES.values())}")
    return tasks
