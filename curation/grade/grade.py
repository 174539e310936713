"""`curate grade LOGS_DIR --release vX.Y.Z [--model NAME]`: the runner's episode logs graded
against a recorded release, one row per (model, task) in `episode_grades`, written out as
Parquet and CSV with a summary per tier, sub-category and model.

A log that cannot be graded (unreadable, a task the release does not hold, a second log of a
task, another instruction) goes to `rejects` with its reason; logs read = graded + rejected
(`collect.py`). The summary's coverage says, per model and tier, how many release tasks were
attempted (a folder), graded, crashed (a folder without a log), rejected and missing, with SR
over every attempted task (a crash or a reject counts as a failure, as in the runner's
all-tasks average) beside SR over the graded episodes. Episodes of defective tasks carry the
reasons in `defective` and are left out of every summary figure unless `include_defective`.

The summary also holds each model's SR, NS and WR per tier and sub-category with 95% intervals and every pair of
models compared on SR (`stats.py`, seeded by `seed`), and the per-task table of the release with its flags
(`task_table.py`) over every graded episode of the release in the catalog, beside it as tasks.parquet / .csv.
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

from curation.core.errors import UsageError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import video_durations
from curation.grade.collect import STATUSES, collect, release_tasks
from curation.grade.evidence import task_facts
from curation.grade.folders import check_logs_arguments
from curation.grade.judged import TASK_FILES, scores_summary, task_analysis, write_task_table
from curation.grade.metrics import BUCKETS, grade_episode
from curation.grade.report import write_grade_page
from curation.release.semver import Version
from curation.tasks.runner_format import subcategory_of

EPISODE_COLUMNS = ("release", "model", "task_id", "log_path", "tier", "subcategory", "eval_type", "sr", "sr_from",
                   "public_sr", "logged_result", "ns", "invalid_calls", "watch_s", "runtime_s", "wr", "progress",
                   "answer", "answered_differently", "state_disagrees", "index0_disagrees", "watched", "buckets",
                   "steps", "state_unknown", "defective", "replay_disagreement", "cut_off", "unmet_checks",
                   "acting_calls")


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


def summary_of(rows: list[dict[str, Any]], release: str, include_defective: bool = False) -> dict[str, Any]:
    """Per tier, sub-category and model; the L2/L3 observation buckets per model; the episodes to look at.
    Episodes of defective tasks count only with `include_defective`; they are listed either way."""
    counted = [r for r in rows if include_defective or not r.get("defective")]
    return {"release": release, "per_tier": summarise(counted, ("model", "tier")),
            "per_subcategory": summarise(counted, ("model", "tier", "subcategory")),
            "observed_l2_l3": summarise([r for r in counted if r["tier"] in ("L2", "L3")], ("model",)),
            "answered_differently": [f"{r['model']}/{r['task_id']}" for r in rows if r["answered_differently"]],
            "index0_disagreements": [f"{r['model']}/{r['task_id']}" for r in rows if r["index0_disagrees"]],
            "state_disagreements": [f"{r['model']}/{r['task_id']}" for r in rows if r["state_disagrees"]],
            "state_unknown": [f"{r['model']}/{r['task_id']}: {r['state_unknown']}" for r in rows
                              if r.get("state_unknown")],
            "replay_disagreements": [f"{r['model']}/{r['task_id']}: {r['replay_disagreement']}" for r in rows
                                     if r.get("replay_disagreement")],
            "cut_off": [f"{r['model']}/{r['task_id']}: {r['cut_off']}" for r in rows if r.get("cut_off")],
            "defective_included": include_defective}


def coverage_of(coverage: list[dict[str, Any]], rows: list[dict[str, Any]], include_defective: bool
                ) -> list[dict[str, Any]]:
    """Per model and tier: release tasks by status, SR over every attempted task and over graded ones."""
    sr = {(r["model"], r["task_id"]): r["sr"] for r in rows}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in coverage:
        if include_defective or not item["defective"]:
            groups[(item["model"], item["tier"])].append(item)
    out = []
    for (model, tier), items in sorted(groups.items()):
        counts = {s: sum(i["status"] == s for i in items) for s in STATUSES}
        attempted = len(items) - counts["missing"]
        graded = [sr[(model, i["task_id"])] or 0.0 for i in items if i["status"] == "graded"]
        out.append({"model": model, "tier": tier, "tasks": len(items), "attempted": attempted, **counts,
                    "sr_attempted": round(sum(graded) / attempted, 4) if attempted else None,
                    "sr_graded": round(mean(graded), 4) if graded else None})
    return out


@dataclass
class GradeResult(RunResult):
    rows: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    report: Path | None = None  # grade.html


def _check(logs: list[tuple[str, Path]], version: str = "", out: Path | None = None, *_: Any, **__: Any) -> None:
    """Folders that can be read and recorded (`folders.py`); a model may come as several folders (its category
    folders, given one by one); a folder only once."""
    check_logs_arguments([folder for _, folder in logs], out, [model for model, _ in logs])
    folders = [folder.resolve() for _, folder in logs]
    if len(set(folders)) != len(folders):
        raise UsageError(f"a logs folder is given twice: {', '.join(str(f) for f in folders)}")


@stage("grade", command="curate grade LOGS_DIR --release vX.Y.Z [--model NAME]", batched=False, check=_check,
       reads=("releases", "release_tasks", "task_transitions", "videos", "episode_grades", "audit_flags"),
       writes=("episode_grades", "rejects"),
       summary="the runner's episode logs graded: SR, NS, WR, progress, observation buckets, coverage; "
       "per tier and model with 95% intervals, pairwise tests, and the release's tasks judged (IRT, flags)",
       files=("out: grade files",))
def grade_logs(run: StageRun, logs: list[tuple[str, Path]], version: str, out: Path,
               include_defective: bool = False, seed: int = 0) -> GradeResult:
    catalog = run.db
    target = str(Version.parse(version))
    tasks = release_tasks(run, target)
    durations = video_durations(catalog, sorted({v for t in tasks.values() for v in t["video_feed"]}))
    run.params.update(release=target, models=[m for m, _ in logs], logs=[str(d) for _, d in logs], out=str(out),
                      include_defective=include_defective, seed=seed)
    found = collect(run, logs, tasks, target, "grading")
    rows: list[dict[str, Any]] = []
    for item in found.played:
        episode, task = item.episode, item.task
        grade = grade_episode(episode, task, [durations.get(v) for v in task["video_feed"]])
        fields = asdict(grade)
        rows.append({"release": target, "model": item.model, "task_id": episode.task_id, "log_path": str(item.log),
                     "tier": task["tier"], "subcategory": subcategory_of(episode.task_id),
                     "eval_type": task["eval_type"], "logged_result": episode.result, "steps": len(episode.steps),
                     "defective": task["defective"] or None, **{k: fields[k] for k in EPISODE_COLUMNS if k in fields}})
    crashed = sum(c["status"] == "crashed" for c in found.coverage)
    run.counts.update(logs=found.logs, graded=len(rows), rejected=len(found.rejected), crashed=crashed,
                      defective=sum(bool(r["defective"]) for r in rows))
    catalog.con.execute("DELETE FROM episode_grades WHERE release = ? AND list_contains(?, model)",
                        [target, [m for m, _ in logs]])
    for row in rows:
        catalog.insert("episode_grades", {**{k: row[k] for k in EPISODE_COLUMNS}, "run_id": run.run_id})
    defective = sorted({(t, task["defective"]) for t, task in tasks.items() if task["defective"]})
    summary = {**summary_of(rows, target, include_defective),
               "coverage": coverage_of(found.coverage, rows, include_defective),
               "crashed": [f"{c['model']}/{c['task_id']}" for c in found.coverage if c["status"] == "crashed"],
               "rejected": found.rejected,
               "defective_tasks": [{"task_id": t, "reasons": why} for t, why in defective],
               "durations_unknown": sorted({v for t in tasks.values() for v in t["video_feed"]
                                            if not durations.get(v)})[:20]}
    counted = [r for r in rows if include_defective or not r["defective"]]
    summary.update(scores_summary(counted, seed))
    # the release's other graded models count in the per-task table: IRT needs many models
    others = [r for r in catalog.rows("SELECT * FROM episode_grades WHERE release = ? AND NOT list_contains(?, model)",
                                      [target, [m for m, _ in logs]]) if include_defective or not r["defective"]]
    analysis = task_analysis(counted + others, task_facts(tasks, durations))
    summary["tasks"] = {**analysis.as_dict(), "files": list(TASK_FILES),
                        "models_from_catalog": sorted({r["model"] for r in others})}
    write_outputs(rows, summary, out)
    write_task_table(analysis, out)
    # beside the run's own files, so that grading another release or logs folder does not overwrite it
    report = write_grade_page(catalog, target, summary, out / "grade.html")
    run.params.update(report=str(report))
    return GradeResult(run.counts, rows, summary, report)


def write_outputs(rows: list[dict[str, Any]], summary: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([{k: r[k] for k in EPISODE_COLUMNS} for r in rows], schema=pa.schema([
        *[(k, pa.string()) for k in ("release", "model", "task_id", "log_path", "tier", "subcategory",
                                     "eval_type")],
        ("sr", pa.float64()), ("sr_from", pa.string()), ("public_sr", pa.float64()), ("logged_result", pa.float64()),
        ("ns", pa.int32()), ("invalid_calls", pa.int32()), ("watch_s", pa.float64()), ("runtime_s", pa.float64()),
        ("wr", pa.float64()), ("progress", pa.float64()), ("answer", pa.string()),
        ("answered_differently", pa.bool_()), ("state_disagrees", pa.bool_()), ("index0_disagrees", pa.bool_()),
        ("watched", pa.list_(pa.float64())), ("buckets", pa.list_(pa.string())), ("steps", pa.int32()),
        ("state_unknown", pa.string()), ("defective", pa.string()), ("replay_disagreement", pa.string()),
        ("cut_off", pa.string()), ("unmet_checks", pa.list_(pa.string())), ("acting_calls", pa.int32())]))
    pq.write_table(table, out / "episodes.parquet")
    flat = table.drop_columns(["watched", "buckets", "unmet_checks"]).append_column(
        "buckets", pa.array([" ".join(b or "unknown" for b in r["buckets"]) for r in rows], pa.string())
    ).append_column("unmet_checks", pa.array(["; ".join(r["unmet_checks"]) if r["unmet_checks"] is not None else None
                                              for r in rows], pa.string()))
    pacsv.write_csv(flat, out / "episodes.csv")
    (out / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
