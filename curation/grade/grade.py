"""`curate grade LOGS_DIR --release vX.Y.Z [--model NAME]`: the runner's episode logs graded
against a recorded release, one row per (model, task) in `episode_grades`, written out as
Parquet and CSV with a summary per tier, sub-category and model.

A log that cannot be graded (unreadable, or a task the release does not hold) goes to
`rejects` with its reason; logs read = graded + rejected.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from curation.core.errors import InputError, UsageError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import video_durations
from curation.grade.episodes import EpisodeError, find_logs, read_episode
from curation.grade.metrics import BUCKETS, grade_episode
from curation.release.livingscreen import runnable_elements
from curation.release.semver import Version
from curation.tasks.runner_format import subcategory_of

EPISODE_COLUMNS = ("release", "model", "task_id", "log_path", "tier", "subcategory", "eval_type", "sr", "sr_from",
                   "public_sr", "logged_result", "ns", "invalid_calls", "watch_s", "runtime_s", "wr", "progress",
                   "answer", "answered_differently", "state_disagrees", "index0_disagrees", "watched", "buckets",
                   "steps")


def release_tasks(run: StageRun, version: str) -> dict[str, dict[str, Any]]:
    """The release's runnable tasks by id."""
    return {t["task_id"]: t for t in runnable_elements(run.db, version)}


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(mean(known), 4) if known else None


def summarise(rows: list[dict[str, Any]], by: tuple[str, ...]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in by)].append(row)
    out = []
    for key, group in sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])):
        seen = [b for r in group for b in r["buckets"] if b is not None]
        out.append({**dict(zip(by, key, strict=True)), "episodes": len(group), "sr": _mean([r["sr"] for r in group]),
                    "ns": _mean([r["ns"] for r in group]), "wr": _mean([r["wr"] for r in group]),
                    "progress": _mean([r["progress"] for r in group if r["eval_type"] == "platform"]),
                    "buckets": {b: round(seen.count(b) / len(seen), 4) if seen else None for b in BUCKETS},
                    "videos_bucketed": len(seen)})
    return out


def summary_of(rows: list[dict[str, Any]], release: str) -> dict[str, Any]:
    """Per tier, sub-category and model; the L2/L3 observation buckets per model; the episodes to look at."""
    return {"release": release, "per_tier": summarise(rows, ("model", "tier")),
            "per_subcategory": summarise(rows, ("model", "tier", "subcategory")),
            "observed_l2_l3": summarise([r for r in rows if r["tier"] in ("L2", "L3")], ("model",)),
            "answered_differently": [f"{r['model']}/{r['task_id']}" for r in rows if r["answered_differently"]],
            "index0_disagreements": [f"{r['model']}/{r['task_id']}" for r in rows if r["index0_disagrees"]],
            "state_disagreements": [f"{r['model']}/{r['task_id']}" for r in rows if r["state_disagrees"]]}


@dataclass
class GradeResult(RunResult):
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def _check(logs: list[tuple[str, Path]], *_: Any, **__: Any) -> None:
    models = [m for m, _ in logs]
    if len(set(models)) != len(models):
        raise UsageError(f"each model needs a name of its own (--model), got {', '.join(models)}")


@stage("grade", command="curate grade LOGS_DIR --release vX.Y.Z [--model NAME]", batched=False, check=_check,
       reads=("releases", "release_tasks", "videos", "episode_grades"), writes=("episode_grades", "rejects",
                                                                             "grade files"),
       summary="the runner's episode logs graded: SR, NS, WR, progress, observation buckets; per tier and model")
def grade_logs(run: StageRun, logs: list[tuple[str, Path]], version: str, out: Path) -> GradeResult:
    catalog = run.db
    target = str(Version.parse(version))
    tasks = release_tasks(run, target)
    durations = video_durations(catalog, sorted({v for t in tasks.values() for v in t["video_feed"]}))
    run.params.update(release=target, models=[m for m, _ in logs], logs=[str(d) for _, d in logs], out=str(out))
    run.counts.update(logs=0, graded=0, rejected=0)
    rows: list[dict[str, Any]] = []
    rejected: list[dict[str, str]] = []
    for model, folder in logs:
        found = find_logs(folder)
        if not found:
            raise InputError(f"{folder} holds no episode logs (<task_id>/log.json): give the folder the runner "
                             "wrote, e.g. logs/<model>/<category>")
        graded: dict[str, Path] = {}
        for log in run.progress(found, f"grading {model}"):
            run.counts["logs"] += 1
            try:
                episode = read_episode(log)
                task = tasks.get(episode.task_id)
                if task is None:
                    raise EpisodeError(f"{log}: task {episode.task_id} is not in release {target}")
                if episode.task_id in graded:
                    raise EpisodeError(f"{log}: a second log of {episode.task_id} for {model} "
                                       f"(the first: {graded[episode.task_id]})")
            except EpisodeError as exc:
                run.reject(source=model, raw_ref=str(log), reason=str(exc), raw=b"",
                           record_id=f"{model}/{log.parent.name}")
                run.counts["rejected"] += 1
                rejected.append({"model": model, "log": str(log), "reason": str(exc).removeprefix(f"{log}: ")})
                continue
            graded[episode.task_id] = log
            run.clear_rejects(record_id=f"{model}/{log.parent.name}")
            grade = grade_episode(episode, task, [durations.get(v) for v in task["video_feed"]])
            fields = asdict(grade)
            rows.append({"release": target, "model": model, "task_id": episode.task_id, "log_path": str(log),
                         "tier": task["tier"], "subcategory": subcategory_of(episode.task_id),
                         "eval_type": task["eval_type"], "logged_result": episode.result,
                         "steps": len(episode.steps), **{k: fields[k] for k in EPISODE_COLUMNS if k in fields}})
            run.counts["graded"] += 1
    catalog.con.execute("DELETE FROM episode_grades WHERE release = ? AND list_contains(?, model)",
                        [target, [m for m, _ in logs]])
    for row in rows:
        catalog.insert("episode_grades", {**row, "run_id": run.run_id})
    summary = {**summary_of(rows, target), "rejected": rejected,
               "durations_unknown": sorted({v for t in tasks.values() for v in t["video_feed"]
                                            if not durations.get(v)})[:20]}
    write_outputs(rows, summary, out)
    return GradeResult(run.counts, rows, summary)


def write_outputs(rows: list[dict[str, Any]], summary: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([{k: r[k] for k in EPISODE_COLUMNS} for r in rows], schema=pa.schema([
        *[(k, pa.string()) for k in ("release", "model", "task_id", "log_path", "tier", "subcategory",
                                     "eval_type")],
        ("sr", pa.float64()), ("sr_from", pa.string()), ("public_sr", pa.float64()), ("logged_result", pa.float64()),
        ("ns", pa.int32()), ("invalid_calls", pa.int32()), ("watch_s", pa.float64()), ("runtime_s", pa.float64()),
        ("wr", pa.float64()), ("progress", pa.float64()), ("answer", pa.string()),
        ("answered_differently", pa.bool_()), ("state_disagrees", pa.bool_()), ("index0_disagrees", pa.bool_()),
        ("watched", pa.list_(pa.float64())), ("buckets", pa.list_(pa.string())), ("steps", pa.int32())]))
    pq.write_table(table, out / "episodes.parquet")
    flat = table.drop_columns(["watched", "buckets"]).append_column(
        "buckets", pa.array([" ".join(b or "unknown" for b in r["buckets"]) for r in rows], pa.string()))
    pacsv.write_csv(flat, out / "episodes.csv")
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
