"""`curate release env-feeds vX.Y.Z DIR`: for every task of a release, the video list the
runner's app takes at `/api/reset`, filled from the catalog (real counts and comment threads),
one `DIR/<task_id>.json` per task.

Per video: `id` (1-based), `video_url` where the runner serves it (FakeSV
`static/data/FakeSV/videos/<id>.mp4`, LiveBot `static/data/LiveBot/videos/<category>/<title>.mp4`,
Video-SafetyBench `static/data/<path>.mp4`, any other source `static/data/<source>/videos/<id>.mp4`;
URL-quoted), `author` (bio, else name, else `用户<id>`), `desc` (the caption), `likes`,
`collects`, `comments` (`{id, user, text, replies}`, replies nested under their parent),
`is_liked` / `is_collected` false and no `reports`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from curation.core.catalog import Catalog
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import load_visible
from curation.release.semver import Version


def video_url(video_id: str) -> str:
    source, _, native = video_id.partition("/")
    if source == "LiveBot" and "/" in native:
        category, name = native.split("/", 1)
        return f"static/data/LiveBot/videos/{category}/" + quote(f"{name}.mp4")
    if source == "Video-SafetyBench":
        return "static/data/" + quote(f"{video_id}.mp4")
    return f"static/data/{source}/videos/" + quote(f"{native}.mp4")


def comment_threads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Top-level comments in order, each with its replies; ids renumbered from 1 as the app shows them."""
    top = [r for r in rows if not r.get("parent_id")]
    replies: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("parent_id"):
            replies.setdefault(r["parent_id"], []).append(r)
    out, number = [], 0
    for row in top:
        number += 1
        thread = {"id": number, "user": row.get("author") or f"评论{number}", "text": (row.get("text") or "").strip(),
                  "replies": []}
        for reply in replies.get(row["comment_id"], []):
            number += 1
            thread["replies"].append({"id": number, "user": reply.get("author") or f"评论{number}",
                                      "text": (reply.get("text") or "").strip()})
        out.append(thread)
    return out


def reset_payload(catalog: Catalog, video_feed: list[str]) -> list[dict[str, Any]]:
    visible = load_visible(catalog, video_feed)
    comments: dict[str, list[dict[str, Any]]] = {}
    for row in catalog.rows("SELECT * FROM comments WHERE list_contains(?, video_id) "
                            "ORDER BY video_id, coalesce(time_s, 0), created_at NULLS LAST, comment_id", [video_feed]):
        comments.setdefault(row["video_id"], []).append(row)
    out = []
    for position, video_id in enumerate(video_feed, start=1):
        seen = visible[video_id]
        out.append({"id": position, "video_url": video_url(video_id),
                    "author": seen.author_bio or seen.author_name or f"用户{position}", "desc": seen.caption or "",
                    "likes": seen.like_count or 0, "collects": seen.collect_count or 0,
                    "comments": comment_threads(comments.get(video_id, [])), "is_liked": False,
                    "is_collected": False, "reports": []})
    return out


@stage("release-env-feeds", command="curate release env-feeds vX.Y.Z DIR", reads=("releases", "release_tasks",
       "videos", "comments"), writes=("env feed folder",),
       summary="per task, the video list the runner's app takes at /api/reset, with real counts and comments")
def export_env_feeds(run: StageRun, version: str, out: Path) -> RunResult:
    catalog = run.db
    target = str(Version.parse(version))
    from curation.release.livingscreen import runnable_elements

    elements = runnable_elements(catalog, target)
    recorded = catalog.scalar("SELECT count(*) FROM release_tasks WHERE version = ?", [target])
    out.mkdir(parents=True, exist_ok=True)
    run.params.update(version=target, out=str(out))
    run.counts.update(tasks=0, videos=0, videos_without_metadata=0, malformed_skipped=recorded - len(elements))
    for element in run.progress(elements, "env feeds"):
        payload = reset_payload(catalog, list(element.get("video_feed") or []))
        (out / f"{element['task_id']}.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n",
                                                         encoding="utf-8")
        run.counts["tasks"] += 1
        run.counts["videos"] += len(payload)
        run.counts["videos_without_metadata"] += sum(1 for v in payload if not v["desc"])
    return RunResult(run.counts)
