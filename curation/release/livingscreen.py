"""Existing releases in the public runner's format, in and out.

`import-livingscreen` records a runner directory as a release: every element as it was (so
that its export gives back the same JSON, task for task and in order), and each well-formed
task in the catalog (state `imported`; `curate qc validate` then settles it, and the shortcut
filter runs on it). A task whose `video_feed` is a version of a feed the catalog built stays on
that feed (and version). Any other task's feed becomes feed versions: the base feed from its
`keyword_videos` / `other_videos` lists, and the `video_feed` it uses as the edited version
when it differs. Videos the catalog does not know are created as stubs marked
`metadata_missing`. A malformed element is rejected with its reason, never dropped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog, now
from curation.core.errors import InputError, PrerequisiteError, StateError
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.feeds import CARRIED_IN, Feed, insert_feeds
from curation.release.build import record_runner_tasks
from curation.release.contents import canonical, sha256_of
from curation.release.semver import Version
from curation.tasks.lifecycle import move
from curation.tasks.runner_format import RUNNER_FILES, TIER_OF_FILE, load_runner_dir, subcategory_of
from curation.tasks.syntax import split_instruction


def malformed(element: dict[str, Any]) -> str | None:
    """Why an element cannot become a catalog task (None: it can)."""
    if not isinstance(element.get("task_id"), str) or not re.fullmatch(r".+_\d+", element["task_id"]):
        return "task_id must be <subcategory>_<n>"
    feed = element.get("video_feed")
    if not isinstance(feed, list) or not feed or not all(isinstance(v, str) and "/" in v for v in feed):
        return "video_feed must be a non-empty list of <source>/<id> video ids"
    for key in ("keyword_videos", "other_videos"):
        if key in element and not (isinstance(element[key], list) and all(isinstance(v, str) for v in element[key])):
            return f"{key} must be a list of video ids"
    if element.get("eval_type") not in ("label", "platform"):
        return f"eval_type {element.get('eval_type')!r} is neither label nor platform"
    if not isinstance(element.get("eval_config"), list):
        return "eval_config must be a list"
    if not isinstance(element.get("instruction"), str):
        return "instruction must be text"
    return None


def runnable_elements(catalog: Catalog, version: str) -> list[dict[str, Any]]:
    """A recorded release's well-formed elements in file and position order, each with its `tier`
    (an imported release may hold malformed ones, kept for its export: they cannot be run)."""
    rows = catalog.rows("SELECT runner_file, runner FROM release_tasks WHERE version = ? "
                        "ORDER BY runner_file, position", [version])
    if not rows:
        raise PrerequisiteError(f"no release {version} is recorded: `curate release list` shows what is")
    elements = [(r["runner_file"], json.loads(r["runner"])) for r in rows]
    return [{**e, "tier": TIER_OF_FILE[name]} for name, e in elements if isinstance(e, dict) and not malformed(e)]


def catalog_feed_of(catalog: Catalog, element: dict[str, Any]) -> tuple[str, int, int] | None:
    """(feed id, base version, version used) of a feed the catalog built whose version shows exactly the
    element's `video_feed`: a task written over one of the toolkit's own feeds stays on that feed. The base is
    the version whose anchor and distractor lists are the element's (the version used when it names none)."""
    found = catalog.rows("SELECT feed_id, version FROM feeds WHERE video_feed = ?::VARCHAR[] AND cluster_run <> ? "
                         "ORDER BY feed_id, version LIMIT 1", [list(element["video_feed"]), CARRIED_IN])
    if not found:
        return None
    feed_id, used = found[0]["feed_id"], int(found[0]["version"])
    keyword, other = element.get("keyword_videos"), element.get("other_videos")
    base = used
    if keyword is not None or other is not None:
        same = catalog.rows("SELECT version FROM feeds WHERE feed_id = ? AND keyword_videos = ?::VARCHAR[] AND "
                            "other_videos = ?::VARCHAR[] AND version <= ? ORDER BY version LIMIT 1",
                            [feed_id, list(keyword or []), list(other or []), used])
        base = int(same[0]["version"]) if same else used
    return feed_id, base, used


def _feed_versions(catalog: Catalog, run: StageRun, element: dict[str, Any]) -> tuple[str, int, int]:
    """(feed id, base version, version used) for an element, adding versions only when new."""
    if (own := catalog_feed_of(catalog, element)) is not None:
        run.counts["tasks_on_catalog_feeds"] += 1
        return own
    feed_id = f"ls-{element['task_id']}"
    used = list(element["video_feed"])
    keyword, other = list(element.get("keyword_videos") or []), list(element.get("other_videos") or [])
    base = keyword + other if (keyword or other) else used
    existing = catalog.rows("SELECT version, video_feed, keyword_videos, other_videos FROM feeds WHERE feed_id = ? "
                            "ORDER BY version", [feed_id])

    def version_of(videos: list[str], edited: bool) -> int:
        for row in existing:
            if list(row["video_feed"]) == videos and list(row["keyword_videos"]) == keyword \
                    and list(row["other_videos"]) == other:
                return int(row["version"])
        number = max([r["version"] for r in existing], default=0) + 1
        ratio = len(other) / len(keyword) if keyword else None
        feed = Feed(feed_id, number, -1, CARRIED_IN, keyword, other, videos, ratio, 0, run.run_id, None,
                    [{"op": "imported", "note": "the release's video_feed"}] if edited else None)
        insert_feeds(catalog, [feed])
        existing.append({"version": number, "video_feed": videos, "keyword_videos": keyword, "other_videos": other})
        return number

    base_version = version_of(base, edited=False)
    return feed_id, base_version, base_version if used == base else version_of(used, edited=True)


def _stub_videos(catalog: Catalog, run: StageRun, ids: list[str]) -> int:
    known = {r[0] for r in catalog.con.execute("SELECT video_id FROM videos WHERE list_contains(?, video_id)",
                                               [ids]).fetchall()}
    missing = sorted(set(ids) - known)
    for video_id in missing:
        source, native = video_id.split("/", 1)
        catalog.insert("videos", {"video_id": video_id, "source": source, "native_id": native, "synthetic": False,
                                  "run_id": run.run_id, "metadata_missing": True})
    return len(missing)


def refuse_repeated_ids(folder: Path, by_file: dict[str, list[dict[str, Any]]]) -> None:
    """A task id is one task: two elements with one id are not a task and its next version (the second would
    take the first's place with another task's text), so such a release is refused whole, both named."""
    where: dict[str, list[str]] = {}
    for name, items in by_file.items():
        for position, element in enumerate(items):
            where.setdefault(str(element.get("task_id")), []).append(f"{name}[{position}]")
    repeated = {task_id: places for task_id, places in where.items() if len(places) > 1}
    if repeated:
        shown = "; ".join(f"{t} at {' and '.join(p)}" for t, p in sorted(repeated.items()))
        raise InputError(f"{folder}: a task id is used by more than one element ({shown}); a task id is one task: "
                         "nothing of this release was recorded")


@stage("release-import-livingscreen", command="curate release import-livingscreen DIR --version V",
       reads=("releases", "release_tasks", "tasks", "feeds", "videos", "task_transitions"),
       writes=("releases", "release_tasks", "tasks", "feeds", "videos", "task_transitions", "rejects"),
       summary="a release in the runner's format into the catalog: tasks (state imported), feeds as versions, "
       "unknown videos as stubs")
def import_livingscreen(run: StageRun, folder: Path, version: str) -> RunResult:
    catalog = run.db
    target = str(Version.parse(version))
    elements = load_runner_dir(folder)
    by_file: dict[str, list[dict[str, Any]]] = {}
    for element in elements:
        by_file.setdefault(element.pop("_file"), []).append(element)
    content = sha256_of(by_file)
    run.params.update(folder=str(folder), version=target)
    run.counts.update(elements=len(elements), tasks_new=0, tasks_new_versions=0, tasks_unchanged=0, rejected=0,
                      feeds_new=0, video_stubs=0, tasks_on_catalog_feeds=0)
    recorded = catalog.rows("SELECT content_sha256, origin FROM releases WHERE version = ?", [target])
    if recorded:
        if recorded[0]["content_sha256"] != content:
            raise StateError(f"release {target} is already recorded ({recorded[0]['origin']}) with other content")
        run.counts["tasks_unchanged"] = len(elements)
        return RunResult(run.counts)
    refuse_repeated_ids(folder, by_file)
    feeds_before = catalog.scalar("SELECT count(*) FROM feeds")
    versions: dict[str, int] = {}
    for name, items in by_file.items():
        for position, element in enumerate(items):
            why = malformed(element)
            if why:
                run.reject(source="livingscreen", raw_ref=f"{folder / name}[{position}]", reason=why,
                           raw=canonical(element).encode(), record_id=str(element.get("task_id")))
                run.counts["rejected"] += 1
                continue
            versions[element["task_id"]] = _import_task(run, name, element, target)
    run.counts["feeds_new"] = catalog.scalar("SELECT count(*) FROM feeds") - feeds_before
    catalog.insert("releases", {"version": target, "parent": None, "origin": "imported", "path": str(folder.resolve()),
                                "content_sha256": content, "manifest_sha256": None, "tasks": len(elements),
                                "run_id": run.run_id, "created_at": now()})
    record_runner_tasks(catalog, target, by_file, versions)
    return RunResult(run.counts)


def _import_task(run: StageRun, file: str, element: dict[str, Any], release: str) -> int:
    catalog = run.db
    task_id = element["task_id"]
    run.counts["video_stubs"] += _stub_videos(catalog, run, sorted(
        set(element["video_feed"]) | set(element.get("keyword_videos") or []) | set(element.get("other_videos") or [])))
    feed_id, base_version, feed_version = _feed_versions(catalog, run, element)
    question, options = split_instruction(element["instruction"]) if element["eval_type"] == "label" else (
        element["instruction"], {})
    row = {"tier": TIER_OF_FILE[file], "subcategory": subcategory_of(task_id), "eval_type": element["eval_type"],
           "instruction": question, "options": json.dumps(options, ensure_ascii=False) if options else None,
           "eval_config": json.dumps(element["eval_config"], ensure_ascii=False), "feed_id": feed_id,
           "base_feed_version": base_version, "feed_version": feed_version}
    latest = catalog.rows("SELECT * FROM tasks WHERE task_id = ? ORDER BY version DESC LIMIT 1", [task_id])
    if latest and all(latest[0][k] == v for k, v in row.items() if k not in ("options", "eval_config")) and \
            json.loads(latest[0]["eval_config"] or "null") == element["eval_config"] and \
            json.loads(latest[0]["options"] or "{}") == options:
        run.counts["tasks_unchanged"] += 1
        return int(latest[0]["version"])
    version = latest[0]["version"] + 1 if latest else 1
    catalog.insert("tasks", {"task_id": task_id, "version": version, "author": None, "run_id": run.run_id,
                             "created_at": now(), **row})
    move(run, task_id, version, "imported", reason=f"release {release} ({file})", who="release-import")
    run.counts["tasks_new" if version == 1 else "tasks_new_versions"] += 1
    return version


@stage("release-export-livingscreen", command="curate release export-livingscreen V OUT",
       reads=("releases", "release_tasks"), writes=(),
       summary="any recorded release, built or imported, as the runner's three JSON files",
       files=("out: runner folder",))
def export_livingscreen(run: StageRun, version: str, out: Path) -> RunResult:
    catalog = run.db
    target = str(Version.parse(version))
    if not catalog.rows("SELECT 1 FROM releases WHERE version = ?", [target]):
        known = ", ".join(r[0] for r in catalog.con.execute("SELECT version FROM releases ORDER BY 1").fetchall())
        raise PrerequisiteError(f"no release {target} is recorded (recorded: {known or 'none'})")
    out.mkdir(parents=True, exist_ok=True)
    run.params.update(version=target, out=str(out))
    for name in RUNNER_FILES.values():
        elements = [json.loads(r[0]) for r in catalog.con.execute(
            "SELECT runner FROM release_tasks WHERE version = ? AND runner_file = ? ORDER BY position",
            [target, name]).fetchall()]
        (out / name).write_text(json.dumps(elements, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        run.counts[name] = len(elements)
    return RunResult(run.counts)
