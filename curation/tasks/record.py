"""The task record: one shape for a task whichever door it comes through.

An annotation in Label Studio (a draft in the authoring language), a row of the catalog, an
element of a runner file: each becomes a `TaskRecord`, and the one rule set
(`curation.tasks.rules`) judges the record. A door never judges its own input shape, so a
defect gets the same verdict at every door.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from curation.tasks.runner_format import TIER_OF_FILE, runner_instruction, subcategory_of
from curation.tasks.syntax import parse_options, parse_platform_state, split_instruction
from curation.tasks.taxonomy import load_taxonomy


@dataclass
class TaskRecord:
    task_id: str
    tier: str | None
    subcategory: str | None
    eval_type: str | None
    question: str
    options: dict[str, str]
    eval_config: Any                      # as written: [{"answer": …}] or a list of checks
    video_feed: list[str]
    keyword_videos: list[str] | None = None   # the base feed as built (L2), when known
    other_videos: list[str] | None = None
    version: int | None = None
    # what the authoring language could not read ("line 2: cannot read …"); empty elsewhere
    unreadable: list[str] = field(default_factory=list)
    feed_edit_problems: list[str] = field(default_factory=list)

    @property
    def answer(self) -> Any:
        config = self.eval_config
        if isinstance(config, list) and len(config) == 1 and isinstance(config[0], dict) and "func" not in config[0]:
            return config[0].get("answer")
        return None

    @property
    def instruction(self) -> str:
        return runner_instruction(self.question, self.options)

    def to_runner(self) -> dict[str, Any]:
        out: dict[str, Any] = {"task_id": self.task_id, "instruction": self.instruction,
                               "video_feed": list(self.video_feed), "eval_type": self.eval_type,
                               "eval_config": self.eval_config if self.eval_config is not None else []}
        if self.eval_type == "label" and self.keyword_videos is not None:
            out["keyword_videos"] = list(self.keyword_videos)
            out["other_videos"] = list(self.other_videos or [])
        return out


def from_runner(element: dict[str, Any], runner_file: str | None = None) -> TaskRecord:
    """A runner element (`_file` or `runner_file` says which tier's file it came from)."""
    task_id = str(element.get("task_id") or "(no task_id)")
    question, options = split_instruction(element.get("instruction") or "")
    if element.get("eval_type") != "label":
        question = element.get("instruction") or ""
    sub = subcategory_of(task_id)
    known = load_taxonomy().subcategories.get(sub)
    file = runner_file or element.get("_file")
    tier = TIER_OF_FILE.get(file) if file else (known.tier if known else None)
    return TaskRecord(task_id=task_id, tier=tier, subcategory=sub, eval_type=element.get("eval_type"),
                      question=question, options=options if element.get("eval_type") == "label" else {},
                      eval_config=element.get("eval_config"), video_feed=list(element.get("video_feed") or []),
                      keyword_videos=element.get("keyword_videos"), other_videos=element.get("other_videos"))


def same_task(a: TaskRecord, b: TaskRecord) -> bool:
    """The same question, options, eval type, checks and feed (wording of the instruction's option
    list and the base-feed lists aside): what a grader or an agent would see as the same task."""
    return (a.eval_type, " ".join(a.question.split()), a.options, a.eval_config, a.video_feed) == \
        (b.eval_type, " ".join(b.question.split()), b.options, b.eval_config, b.video_feed)


def from_catalog(row: dict[str, Any]) -> TaskRecord:
    """A catalog task row joined with its feed (`video_feed`) and base feed (`keyword_videos`, `other_videos`)."""
    # the runner's base-feed lists belong to label tasks; a platform task's feed is judged as it stands
    lists = row.get("eval_type") == "label"
    return TaskRecord(task_id=row["task_id"], tier=row.get("tier"), subcategory=row.get("subcategory"),
                      eval_type=row.get("eval_type"), question=row.get("instruction") or "",
                      options=json.loads(row["options"]) if row.get("options") else {},
                      eval_config=json.loads(row["eval_config"]) if row.get("eval_config") else [],
                      video_feed=list(row.get("video_feed") or []),
                      keyword_videos=list(row.get("keyword_videos") or []) if lists else None,
                      other_videos=list(row.get("other_videos") or []) if lists else None,
                      version=row.get("version"))


@dataclass
class Draft:
    """What an author (or the deciding group) wrote, in the authoring language."""
    tier: str | None = None
    subcategory: str | None = None
    instruction: str | None = None
    options_text: str | None = None
    answer: str | None = None
    platform_state: str | None = None
    feed_edits: str | None = None


def from_draft(draft: Draft, task_id: str, video_feed: list[str], *, keyword_videos: list[str] | None = None,
               other_videos: list[str] | None = None, feed_edit_problems: list[str] | None = None) -> TaskRecord:
    """A draft as a record. Its eval type is the sub-category's; a label draft that also wrote an end
    state (or a platform draft with an answer) keeps both, so the rules can say so."""
    sub = load_taxonomy().subcategories.get(draft.subcategory or "")
    eval_type = sub.eval_type if sub else None
    checks, unreadable = parse_platform_state(draft.platform_state)
    config: list[dict[str, Any]] = []
    if draft.answer:
        config.append({"answer": draft.answer})
    if eval_type != "label" or draft.platform_state:
        config.extend(checks)
    return TaskRecord(task_id=task_id, tier=draft.tier, subcategory=draft.subcategory, eval_type=eval_type,
                      question=(draft.instruction or "").strip(), options=parse_options(draft.options_text),
                      eval_config=config, video_feed=list(video_feed), keyword_videos=keyword_videos,
                      other_videos=other_videos, unreadable=unreadable,
                      feed_edit_problems=list(feed_edit_problems or []))


def stored_fields(record: TaskRecord) -> dict[str, Any]:
    """The catalog columns a record fills (eval_type, options, eval_config as JSON text)."""
    return {"eval_type": record.eval_type,
            "options": json.dumps(record.options, ensure_ascii=False) if record.options else None,
            "eval_config": json.dumps(record.eval_config, ensure_ascii=False) if record.eval_config else None}
