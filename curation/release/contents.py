"""What a release holds, read from the catalog: the tasks whose life cycle ended well (latest
version `kept` or `reviewed_ok`), each with its feed version, QC summary and pseudonymous
people; every feed and video they use. Rows come out in one fixed order, so that the same
catalog state always gives the same release."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from curation.core.catalog import Catalog, now
from curation.corpus.visible import load_visible
from curation.qc.shortcut.record import verdicts_in_force
from curation.release.lite_config import LITE_CONFIG
from curation.tasks.lifecycle import RELEASED_STATES, inherited_tasks
from curation.tasks.record import from_catalog, from_runner, same_task
from curation.tasks.runner_format import RUNNER_FILES, catalog_task_rows
from curation.tasks.syntax import split_instruction

CONFIGS = {"L1": "l1_gui_action", "L2": "l2_cross_source_understanding", "L3": "l3_close_end_application"}


def config_rows(tasks: list[dict[str, Any]], delta: str | None = None, added: list[str] | None = None,
                lite: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Each config of a release with its rows, in the order the card and Croissant list them: `all`, one per tier
    with tasks, `delta` (the tasks `added` since the parent, when any), the Lite subset (`lite`: its task ids)."""
    out = {"all": tasks}
    out |= {config: rows for tier, config in CONFIGS.items() if (rows := [t for t in tasks if t["tier"] == tier])}
    if delta and added:
        out[delta] = [t for t in tasks if t["task_id"] in set(added)]
    if lite:
        out[LITE_CONFIG] = [t for t in tasks if t["task_id"] in set(lite)]
    return out


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sha256_of(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def task_order(task_id: str) -> tuple[str, int, str]:
    match = re.fullmatch(r"(.*)_(\d+)", task_id)
    return (match.group(1), int(match.group(2)), task_id) if match else (task_id, 0, task_id)


@dataclass
class ReleaseContents:
    tasks: list[dict[str, Any]] = field(default_factory=list)    # one row per task (the `all` config)
    runner: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # runner file -> elements
    feeds: list[dict[str, Any]] = field(default_factory=list)
    videos: list[dict[str, Any]] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)              # the catalog runs behind it


def pseudonym(catalog: Catalog, person: str | None) -> str | None:
    """A stable id for a person (never their name or e-mail), given in order of first appearance."""
    if not person:
        return None
    known = catalog.scalar("SELECT pseudonym FROM pseudonyms WHERE person = ?", [person])
    if known:
        return str(known)
    number = int(catalog.scalar("SELECT count(*) FROM pseudonyms")) + 1
    name = f"annotator-{number:03d}"
    catalog.insert("pseudonyms", {"person": person, "pseudonym": name, "created_at": now()})
    return name


def released_task_rows(catalog: Catalog) -> list[dict[str, Any]]:
    """Latest versions whose life cycle ended well (with their feed's runtime and ratio)."""
    return [row for row in catalog_task_rows(catalog) if row["state"] in RELEASED_STATES]


def shipped_elements(catalog: Catalog, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Task id -> the runner element a release ships for it. A task version that came from an
    imported release keeps the element it came as (its wording and lists exactly), so that a release
    built on an imported parent does not see every task as changed, but only while the catalog's row
    still says the same task: a row changed since (a hand edit, an older toolkit) ships as it is now,
    and the release gate judges that."""
    verbatim = {(r["task_id"], r["task_version"]): (json.loads(r["runner"]), r["runner_file"]) for r in catalog.rows(
        "SELECT t.task_id, t.task_version, t.runner, t.runner_file FROM release_tasks t JOIN releases r "
        "USING (version) WHERE r.origin = 'imported' AND t.task_version IS NOT NULL ORDER BY r.created_at")}
    out = {}
    for row in rows:
        built = from_catalog(row)
        kept = verbatim.get((row["task_id"], row["version"]))
        out[row["task_id"]] = kept[0] if kept and same_task(from_runner(kept[0], kept[1]), built) else built.to_runner()
    return out


def _qc_summary(catalog: Catalog, task_id: str, version: int,
                verdicts: dict[tuple[str, int], dict[str, Any]]) -> dict[str, Any]:
    verdict = verdicts.get((task_id, version))
    review = catalog.rows("SELECT reviewer, outcome FROM reviews WHERE task_id = ? AND task_version = ?",
                          [task_id, version])
    decision = catalog.scalar("SELECT decision FROM decisions WHERE task_id = ? AND task_version = ?",
                              [task_id, version])
    answers = verdict["answers"] if verdict else []
    return {"shortcut_verdict": verdict["verdict"] if verdict else None,
            "shortcut_answers": canonical([{k: a.get(k) for k in ("inspector", "sample", "parsed", "correct")}
                                           for a in answers]),
            "review_outcome": review[0]["outcome"] if review else None, "decision": decision,
            "reviewer": review[0]["reviewer"] if review else None}


# What a video's public metadata can lack, each as the test of a `videos.parquet` row; a video lacking all of
# them has no public metadata (`metadata_missing`), as has one the catalog holds only as a stub.
METADATA_PARTS = {
    "caption": lambda v: not v["caption"],
    "hashtags": lambda v: not v["hashtags"],
    "author": lambda v: not v["author_name"] and not v["author_bio"],
    "counts": lambda v: all(v[k] is None for k in ("like_count", "collect_count", "comment_count", "share_count")),
}


def lacking(video: dict[str, Any]) -> list[str]:
    """The parts of METADATA_PARTS a shipped video row lacks."""
    return [part for part, lacks in METADATA_PARTS.items() if lacks(video)]


def gather(catalog: Catalog, rows: list[dict[str, Any]] | None = None,
           elements: dict[str, dict[str, Any]] | None = None) -> ReleaseContents:
    """Everything a release of `rows` (by default every released task) holds, each task as its
    element in `elements` (by default `shipped_elements`); writes only new pseudonyms."""
    out = ReleaseContents(runner={name: [] for name in RUNNER_FILES.values()})
    rows = sorted(released_task_rows(catalog) if rows is None else rows,
                  key=lambda r: (r["tier"] or "", *task_order(r["task_id"])))
    elements = shipped_elements(catalog, rows) if elements is None else elements
    inherited = inherited_tasks(catalog)
    verdicts = verdicts_in_force(catalog)
    feeds_used: dict[tuple[str, int], None] = {}
    for row in rows:
        runner = elements[row["task_id"]]
        out.runner[RUNNER_FILES[row["tier"]]].append(runner)
        qc = _qc_summary(catalog, row["task_id"], row["version"], verdicts)
        options = json.loads(row["options"]) if row["options"] else {}
        question = split_instruction(row["instruction"] or "")[0] if not options else (row["instruction"] or "")
        config = json.loads(row["eval_config"]) if row["eval_config"] else []
        out.tasks.append({
            "task_id": row["task_id"], "task_version": row["version"], "tier": row["tier"],
            "subcategory": row["subcategory"], "config": CONFIGS[row["tier"]], "eval_type": row["eval_type"],
            "instruction": question, "options": [{"label": k, "text": v} for k, v in sorted(options.items())],
            "answer": config[0].get("answer") if row["eval_type"] == "label" and config else None,
            "eval_config": canonical(config), "runner_instruction": runner["instruction"],
            "feed_id": row["feed_id"], "feed_version": row["feed_version"], "video_feed": list(row["video_feed"]),
            "anchor_videos": list(row["keyword_videos"] or []), "distractor_videos": list(row["other_videos"] or []),
            "feed_runtime_s": row["total_runtime_s"], "distractor_ratio": row["ratio"],
            "qc": {**{k: qc[k] for k in ("shortcut_verdict", "shortcut_answers", "review_outcome", "decision")},
                   "inherited_from": inherited.get(row["task_id"])},
            "author_id": pseudonym(catalog, row["author"]), "reviewer_id": pseudonym(catalog, qc["reviewer"]),
            "content_sha256": sha256_of(runner)})
        feeds_used[(row["feed_id"], row["feed_version"])] = None
        feeds_used[(row["feed_id"], row["base_feed_version"] or row["feed_version"])] = None
    for feed_id, version in sorted(feeds_used):
        feed = catalog.rows("SELECT * FROM feeds WHERE feed_id = ? AND version = ?", [feed_id, version])[0]
        out.feeds.append({"feed_id": feed_id, "version": version, "video_feed": list(feed["video_feed"]),
                          "anchor_videos": list(feed["keyword_videos"] or []),
                          "distractor_videos": list(feed["other_videos"] or []),
                          "anchor_cluster": feed["anchor_cluster"],
                          "distractor_ratio": feed["ratio"], "total_runtime_s": feed["total_runtime_s"],
                          "seed": feed["seed"], "edited": feed["edit"] is not None})
    ids = sorted({v for f in out.feeds for key in ("video_feed", "anchor_videos", "distractor_videos")
                  for v in f[key]})
    visible = load_visible(catalog, ids)
    extra = {r["video_id"]: r for r in catalog.rows(
        "SELECT v.video_id, v.source, v.metadata_missing, p.sha256 FROM videos v "
        "LEFT JOIN media_probes p USING (video_id) WHERE list_contains(?, v.video_id)", [ids])}
    for video_id in ids:
        seen, more = visible[video_id], extra.get(video_id, {})
        video = {"video_id": video_id, "source": more.get("source") or video_id.split("/", 1)[0],
                 "caption": seen.caption, "hashtags": list(seen.hashtags), "author_name": seen.author_name,
                 "author_bio": seen.author_bio, "like_count": seen.like_count, "collect_count": seen.collect_count,
                 "comment_count": seen.comment_count, "share_count": seen.share_count,
                 "duration_s": seen.duration_s, "media_sha256": more.get("sha256")}
        stub = bool(more.get("metadata_missing")) or video_id not in extra
        out.videos.append(video | {"metadata_missing": stub or len(lacking(video)) == len(METADATA_PARTS)})
    out.run_ids = sorted({r[0] for r in catalog.con.execute(
        "SELECT DISTINCT run_id FROM task_transitions WHERE list_contains(?, task_id) AND run_id IS NOT NULL "
        "UNION SELECT DISTINCT run_id FROM tasks WHERE list_contains(?, task_id) AND run_id IS NOT NULL",
        [[r["task_id"] for r in rows], [r["task_id"] for r in rows]]).fetchall()})
    return out
