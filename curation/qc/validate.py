"""`curate qc validate`: structural checks of tasks in the runner's shape.

Every defect is (task id, severity, stable code, one line). The same checks run
over the catalog's tasks and over a runner directory, so published releases can
be checked too. The codes are part of the interface: scripts filter on them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from curation.annotate.syntax import split_instruction
from curation.annotate.taxonomy import Taxonomy, load_taxonomy
from curation.core.config import Config, FeedsConfig, SourceConfig
from curation.core.stage import StageRun, stage
from curation.corpus.playable import playable_video_ids, scanned_sources
from curation.qc.runner_format import subcategory_of

MAX_FEED = 20
ARGS = {
    "eval_like": ({"video_ids"}, set()),
    "eval_collect": ({"video_ids"}, set()),
    "eval_report": ({"video_ids"}, {"expected_cat", "expected_reason"}),
    "eval_comment": ({"video_ids"}, {"comment"}),
    "eval_current_video": ({"video_id"}, set()),
    "eval_playback": ({"video_id"}, {"target_pct", "target_sec"}),
}
_QUOTE = re.compile(r"[“\"「『]([^”\"」』]{1,200})[”\"」』]")


@dataclass(frozen=True)
class Defect:
    task_id: str
    severity: str  # "error" | "warning" | "info"
    code: str
    message: str

    def line(self) -> str:
        return f"{self.task_id}\t{self.severity}\t{self.code}\t{self.message}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _positions(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def check_feed(task: dict[str, Any], known_videos: set[str] | None, lo: float, hi: float,
               playable: Playability | None = None) -> list[Defect]:
    tid = task["task_id"]
    feed = task.get("video_feed") or []
    out: list[Defect] = []
    if not feed:
        return [Defect(tid, "error", "feed-empty", "video_feed is empty")]
    if len(feed) > MAX_FEED:
        out.append(Defect(tid, "warning", "feed-too-long",
                          f"{len(feed)} videos; the paper's feeds hold at most {MAX_FEED}"))
    for video, count in Counter(feed).items():
        if count > 1:
            where = [str(i + 1) for i, v in enumerate(feed) if v == video]
            out.append(Defect(tid, "warning", "feed-duplicate-video",
                              f"{video} is in the feed {count} times, at positions {' and '.join(where)} (from 1)"))
    if known_videos is not None:
        unknown = [v for v in feed if v not in known_videos]
        if unknown:
            out.append(Defect(tid, "error", "feed-unknown-video",
                              f"{len(unknown)} not in the catalog, e.g. {unknown[0]}"))
    if playable is not None:
        out.extend(playable.check(tid, feed))
    keyword, other = task.get("keyword_videos"), task.get("other_videos")
    if keyword is not None or other is not None:
        # The lists describe the base feed as built; video_feed is after the annotator's edits.
        keyword, other = keyword or [], other or []
        both = set(keyword) & set(other)
        if both:
            out.append(Defect(tid, "warning", "feed-keyword-other-overlap",
                              f"{len(both)} videos are both keyword and other videos, e.g. {sorted(both)[0]}"))
        in_feed, base = set(feed), set(keyword) | set(other)
        deleted = [v for v in (*keyword, *other) if v not in in_feed]
        swapped_in = [v for v in feed if v not in base]
        if deleted or swapped_in:
            out.append(Defect(tid, "info", "feed-edited",
                              f"the base feed was edited: {len(deleted)} base videos deleted, "
                              f"{len(swapped_in)} videos swapped in"))
        if keyword and not lo <= len(other) / len(keyword) <= hi:
            out.append(Defect(tid, "warning", "feed-ratio-out-of-range",
                              f"base distractor ratio {len(other) / len(keyword):.2f} outside [{lo}, {hi}]"))
    return out


class Playability:
    """Which videos the app can play; before media was scanned for a source, a video of it
    that is not playable is a warning, afterwards an error."""

    def __init__(self, playable: set[str], scanned_sources: set[str]) -> None:
        self.playable, self.scanned = playable, scanned_sources

    def check(self, tid: str, feed: list[str]) -> list[Defect]:
        out = []
        missing = [v for v in feed if v not in self.playable]
        for scanned in (True, False):
            group = [v for v in missing if (v.split("/")[0] in self.scanned) is scanned]
            if group:
                out.append(Defect(tid, "error" if scanned else "warning", "feed-video-not-playable",
                                  f"{len(group)} videos the app cannot play"
                                  + (" (no normalised file)" if scanned else " (source not playable, or no media yet)")
                                  + f", e.g. {group[0]}"))
        return out


def check_label(task: dict[str, Any], sub_id: str, taxonomy: Taxonomy) -> list[Defect]:
    tid = task["task_id"]
    _, options = split_instruction(task.get("instruction") or "")
    config = task.get("eval_config")
    out: list[Defect] = []
    if len(options) < 2:
        out.append(Defect(tid, "error", "options-unparsed", "no A/B/... options found in the instruction"))
    answer = config[0].get("answer") if (isinstance(config, list) and len(config) == 1
                                         and isinstance(config[0], dict)) else None
    if not isinstance(answer, str) or not re.fullmatch(r"[A-H]", answer):
        out.append(Defect(tid, "error", "answer-malformed",
                          "eval_config must be [{\"answer\": \"<one letter>\"}]"))
    elif options and answer not in options:
        out.append(Defect(tid, "error", "answer-not-an-option",
                          f"answer {answer} is not among the options {', '.join(sorted(options))}"))
    sub = taxonomy.subcategories.get(sub_id)
    if sub and sub.requires_cannot_determine and options and not taxonomy.offers_cannot_determine(options):
        out.append(Defect(tid, "warning", "no-cannot-determine-option",
                          "robust-evaluation tasks usually offer a 'none of the above' / 'cannot be determined' "
                          "option; none of these options reads like one"))
    return out


def check_platform(task: dict[str, Any], taxonomy: Taxonomy, durations: dict[str, float] | None) -> list[Defect]:
    tid = task["task_id"]
    feed = task.get("video_feed") or []
    config = task.get("eval_config")
    if not isinstance(config, list) or not config:
        return [Defect(tid, "error", "checks-missing", "eval_config must be a non-empty list of checks")]
    out: list[Defect] = []
    commented_text = False
    for n, check in enumerate(config):
        where = f"check {n}"
        func = check.get("func") if isinstance(check, dict) else None
        if func not in ARGS:
            out.append(Defect(tid, "error", "unknown-func", f"{where}: unknown func {func!r}"))
            continue
        args = check.get("args") if isinstance(check.get("args"), dict) else {}
        required, optional = ARGS[func]
        extra = set(args) - required - optional
        if extra:
            out.append(Defect(tid, "error", "unexpected-arg", f"{where}: {func} takes no {', '.join(sorted(extra))}"))
        missing = required - set(args)
        if missing:
            out.append(Defect(tid, "error", "missing-arg", f"{where}: {func} needs {', '.join(sorted(missing))}"))
            continue
        for position in _positions(args.get("video_ids", args.get("video_id"))):
            if not isinstance(position, int) or isinstance(position, bool):
                out.append(Defect(tid, "error", "position-not-integer", f"{where}: position {position!r}"))
            elif not 0 <= position < len(feed):
                out.append(Defect(tid, "error", "position-outside-feed",
                                  f"{where}: position {position} outside 0..{len(feed) - 1}"))
        if func == "eval_report" and args.get("expected_cat") is not None \
                and args["expected_cat"] not in taxonomy.report_categories:
            allowed = ", ".join(taxonomy.report_categories)
            out.append(Defect(tid, "error", "report-category-unknown",
                              f"{where}: {args['expected_cat']!r} is not one of {allowed}"))
        if func == "eval_playback":
            pct, sec = args.get("target_pct"), args.get("target_sec")
            if pct is None and sec is None:
                out.append(Defect(tid, "error", "missing-arg", f"{where}: playback needs target_pct or target_sec"))
            if pct is not None and not (isinstance(pct, int | float) and 0 <= pct <= 1):
                out.append(Defect(tid, "error", "target-pct-out-of-range",
                                  f"{where}: target_pct {pct!r} not in [0, 1]"))
            if sec is not None:
                video = feed[args["video_id"]] if isinstance(args["video_id"], int) and \
                    0 <= args["video_id"] < len(feed) else None
                duration = (durations or {}).get(video) if video else None
                if not isinstance(sec, int | float) or sec < 0:
                    out.append(Defect(tid, "error", "target-sec-negative", f"{where}: target_sec {sec!r} < 0"))
                elif duration is not None and sec > duration:
                    out.append(Defect(tid, "error", "target-sec-beyond-duration",
                                      f"{where}: target_sec {sec} beyond the video's {duration:.1f} s"))
        if func == "eval_comment" and args.get("comment"):
            commented_text = True
    quoted = _QUOTE.search(task.get("instruction") or "")
    if quoted and any(isinstance(c, dict) and c.get("func") == "eval_comment" for c in config) \
            and not commented_text:
        out.append(Defect(tid, "warning", "comment-text-missing",
                          f"the instruction quotes {quoted.group(1)!r} but no comment check gives the text"))
    return out


def validate_tasks(tasks: list[dict[str, Any]], *, known_videos: set[str] | None = None,
                   durations: dict[str, float] | None = None, ratio_range: tuple[float, float] = (0.5, 2.0),
                   taxonomy: Taxonomy | None = None, playable: Playability | None = None) -> list[Defect]:
    """Every defect of `tasks`. Severity is a contract: `error` = the task cannot be run or graded as
    written; `warning` = a person should look, the task may be what its author meant; `info` = normal
    facts worth counting (edits to the base feed)."""
    taxonomy = taxonomy or load_taxonomy()
    defects: list[Defect] = []
    ids = Counter(t.get("task_id") for t in tasks)
    seen_instructions: dict[tuple[tuple[str, ...], str], str] = {}
    for task in tasks:
        tid = task.get("task_id") or "(no task_id)"
        task = {**task, "task_id": tid}
        if ids[task.get("task_id")] > 1:
            defects.append(Defect(tid, "error", "duplicate-task-id", f"task id used {ids[tid]} times"))
        sub_id = subcategory_of(tid)
        sub = taxonomy.subcategories.get(sub_id)
        if sub is None:
            defects.append(Defect(tid, "warning", "unknown-subcategory",
                                  f"id prefix {sub_id!r} is not a sub-category of the taxonomy"))
        elif task.get("eval_type") in ("label", "platform") and task.get("eval_type") != sub.eval_type:
            defects.append(Defect(tid, "warning", "eval-type-mismatch",
                                  f"{sub_id} tasks are {sub.eval_type} tasks, not {task.get('eval_type')!r}"))
        if not (task.get("instruction") or "").strip():
            defects.append(Defect(tid, "error", "instruction-empty", "the instruction is empty"))
        defects.extend(check_feed(task, known_videos, *ratio_range, playable=playable))
        if task.get("eval_type") == "label":
            defects.extend(check_label(task, sub_id, taxonomy))
        elif task.get("eval_type") == "platform":
            defects.extend(check_platform(task, taxonomy, durations))
        else:
            defects.append(Defect(tid, "error", "eval-type-unknown",
                                  f"eval_type {task.get('eval_type')!r}: the runner grades 'label' or 'platform'"))
        key = (tuple(task.get("video_feed") or []), " ".join((task.get("instruction") or "").split()))
        if key in seen_instructions:
            defects.append(Defect(tid, "warning", "near-duplicate-task",
                                  f"same feed and instruction as {seen_instructions[key]}"))
        else:
            seen_instructions[key] = tid
    return defects


def catalog_tasks(catalog: Any) -> tuple[list[dict[str, Any]], int]:
    """Latest versions of the catalog's tasks in the runner's shape, and how many were left
    out because the import already marked them needs_fix."""
    from curation.qc.runner_format import catalog_task_rows, task_to_runner

    rows = catalog_task_rows(catalog)
    out = [task_to_runner(row, row) for row in rows if row["status"] != "needs_fix"]
    return out, len(rows) - len(out)


@stage("qc-validate", command="curate qc validate",
       reads=("tasks", "feeds", "videos", "media_files", "media_outputs", "task_transitions"),
       writes=("task_transitions", "tasks"),
       summary="structural checks with stable defect codes; tasks imported from a release become valid or "
       "needs_fix by them")
def validate_catalog(run: StageRun, config: FeedsConfig, sources: dict[str, SourceConfig] | None = None
                     ) -> tuple[list[dict[str, Any]], list[Defect], int]:
    """(tasks checked, defects, how many needs_fix tasks were left to `curate annotate status`)."""
    catalog = run.db
    tasks, skipped = catalog_tasks(catalog)
    known = {r[0] for r in catalog.con.execute("SELECT video_id FROM videos").fetchall()}
    durations = dict(catalog.con.execute(
        "SELECT video_id, duration_s FROM videos WHERE duration_s IS NOT NULL").fetchall())
    playable = Playability(playable_video_ids(catalog, Config().sources if sources is None else sources),
                           scanned_sources(catalog))
    defects = validate_tasks(tasks, known_videos=known, durations=durations,
                             ratio_range=(config.ratio_min, config.ratio_max), playable=playable)
    by_severity = Counter(d.severity for d in defects)
    _settle_imported(run, defects)
    run.counts.update(tasks=len(tasks), errors=by_severity["error"], warnings=by_severity["warning"],
                      notes=by_severity["info"], needs_fix_skipped=skipped)
    return tasks, defects, skipped


def _settle_imported(run: StageRun, defects: list[Defect]) -> None:
    """Tasks imported from a release have had no import-time checks: these checks decide their state."""
    from curation.qc.lifecycle import move

    errors: dict[str, list[str]] = {}
    for defect in defects:
        if defect.severity == "error":
            errors.setdefault(defect.task_id, []).append(f"{defect.code}: {defect.message}")
    imported = run.db.con.execute("SELECT s.task_id, s.version FROM task_states s JOIN latest_tasks t ON "
                                  "t.task_id = s.task_id AND t.version = s.version WHERE s.state = 'imported' "
                                  "ORDER BY 1").fetchall()
    for task_id, version in imported:
        found = errors.get(task_id)
        move(run, task_id, version, "needs_fix" if found else "valid", reason="; ".join(found) if found else None,
             who="qc-validate")
        if found:  # what `curate annotate status` and `explain` read
            run.db.con.execute("UPDATE tasks SET status = 'needs_fix', reasons = ? WHERE task_id = ? AND version = ?",
                               [json.dumps(found, ensure_ascii=False), task_id, version])
    run.counts["imported_settled"] = len(imported)
