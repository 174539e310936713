"""The check vocabulary: one spec per function a platform task's `eval_config` may name (the runner's `utils.eval_*`).

A spec states the facts that are data: the check's arguments and their types, its verb in the authoring language,
its sentence in the dataset card, its hard-negative template, which part of the shortcut filter's answer it is,
whether the runner also demands that no other video has it. The facets that are code live beside the code that
uses them, each in one table keyed by the check's function, and each table is checked against this vocabulary when
its module is imported (`every_check`): a check missing a facet is an error at import, never an "undecided" later.

    env/checks.py      READERS     how the check is read on the app's state (grading, the perfect proof)
    tasks/idle.py      IDLE        whether it holds on the state a do-nothing agent leaves
    tasks/perfect.py   PLANNERS    what a perfect agent does for it
    tasks/syntax.py    ARG_READERS / ARG_WRITERS   its arguments in the authoring language, read and written

Adding a check: a spec here, one entry in each of those four tables (docs/development.md, "How to add a check").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

POSITIONS, POSITION, TEXT, CATEGORY = "positions", "position", "text", "category"
FRACTION, SECONDS = "fraction", "seconds"
ARG_TYPES = {POSITIONS: "a position or a list of positions (0-based)", POSITION: "one position (0-based)",
             TEXT: "text", CATEGORY: "one of the app's report categories",
             FRACTION: "a fraction of the video's length, 0 to 1", SECONDS: "seconds from the start"}


@dataclass(frozen=True)
class CheckSpec:
    func: str                        # the runner's function name
    verb: str                        # its first word in the authoring language
    required: dict[str, str]         # argument -> type (ARG_TYPES)
    optional: dict[str, str] = field(default_factory=dict)
    card: str = ""                   # what it means, one sentence in the dataset card
    negative: str = ""               # a hard-negative instruction about another video: {n} ordinal, {cat}, {pct}
    shortcut_key: str | None = None  # the key of the shortcut filter's platform answer it is judged by
    exclusive: bool = False          # the runner also demands that no other video has it (utils._check_others_*)
    joins_lines: bool = False        # lines of it in one end state mean one check over all their positions
    one_of: tuple[str, ...] = ()     # optional arguments of which exactly one must be given

    @property
    def args(self) -> dict[str, str]:
        return {**self.required, **self.optional}

    @property
    def position_arg(self) -> str:
        return next(name for name, kind in self.required.items() if kind in (POSITIONS, POSITION))


VOCABULARY: dict[str, CheckSpec] = {s.func: s for s in (
    CheckSpec("eval_like", "like", {"video_ids": POSITIONS},
              card="the video(s) at `video_ids` are liked when the episode ends",
              negative="给第{n}个视频点赞", shortcut_key="like", exclusive=True, joins_lines=True),
    CheckSpec("eval_collect", "collect", {"video_ids": POSITIONS},
              card="the video(s) at `video_ids` are collected (saved) when the episode ends",
              negative="收藏第{n}个视频", shortcut_key="collect", exclusive=True, joins_lines=True),
    CheckSpec("eval_report", "report", {"video_ids": POSITIONS}, {"expected_cat": CATEGORY, "expected_reason": TEXT},
              card="the video(s) at `video_ids` were reported, in the category `expected_cat` (and with the reason "
                   "`expected_reason`) when the check names one",
              negative="举报第{n}个视频，类别选{cat}", shortcut_key="report", exclusive=True),
    CheckSpec("eval_comment", "comment", {"video_ids": POSITIONS}, {"comment": TEXT},
              card="a comment was posted under the video(s) at `video_ids`, containing the text `comment` when the "
                   "check names one",
              negative="在第{n}个视频下评论"),
    CheckSpec("eval_current_video", "current", {"video_id": POSITION},
              card="the app shows the video at `video_id` when the episode ends", negative="滑到第{n}个视频"),
    CheckSpec("eval_playback", "playback", {"video_id": POSITION}, {"target_pct": FRACTION, "target_sec": SECONDS},
              card="the video at `video_id` was played to `target_pct` (a fraction of its length, 0 to 1) or to "
                   "`target_sec` seconds",
              negative="把第{n}个视频播放到{pct}的位置", one_of=("target_pct", "target_sec")),
)}
VERBS: dict[str, str] = {spec.verb: spec.func for spec in VOCABULARY.values()}


def spec_of(check: Mapping[str, Any]) -> CheckSpec | None:
    return VOCABULARY.get(str(check.get("func")))


def every_check(table: Mapping[str, Any], facet: str) -> None:
    """Refuse, at import, a table of one facet that misses a check of the vocabulary or names one it lacks."""
    missing, unknown = set(VOCABULARY) - set(table), set(table) - set(VOCABULARY)
    if missing or unknown:
        raise RuntimeError(f"the check vocabulary (curation/env/vocabulary.py) and the {facet} table disagree: "
                           + "; ".join(p for p in (f"no {facet} for {', '.join(sorted(missing))}" if missing else "",
                                                   f"{', '.join(sorted(unknown))} not in the vocabulary"
                                                   if unknown else "") if p))
