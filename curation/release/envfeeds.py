"""`curate release env-feeds vX.Y.Z DIR`: for every task of a release, the video list the
runner's app takes at `/api/reset`, one `DIR/<task_id>.json` per task.

By default each video is what the runner shows (its `utils.feed2data`, as the runner profile states it:
`url`, `shown`, `comments` per source, curation/env/profile.py), key by key, so an episode played on these
feeds sees what a run of the runner sees. For the public runner:
- FakeSV: read from the source record the video was ingested from (the runner's own
  `data_complete.json` line): `author` the stripped `author_verified_intro` (no other name of
  it), else `用户<id>`; `desc` the raw `title` (no other name, its HTML kept); `likes` /
  `collects` are `count_like` / `count_star` as Python's int() reads them, else 0 (so `"1.2w"`
  is 0); `comments` as `{id, user: 评论<n>, text}`, the texts the video starts with by the runner profile
  (`curation/env/starts.py`, which the do-nothing proof reads too). When that file can no
  longer be read, the catalog stands in for it as closely as it can (counted:
  `fakesv_from_catalog`), since its counts are parsed and its titles cleaned.
- LiveBot: the title (the name in its id) as `desc`, `用户<id>`, no counts, no comments.
- Video-SafetyBench: nothing but `用户<id>`.
`display_fixes` (`--display-fixes`) instead fills every video from the catalog: parsed counts,
the author's bio or name, the caption, comment threads with their replies (`{id, user, text,
replies}`). Sources the runner does not know (it refuses them) always get that view.

Every video: `id` (1-based), `video_url` where the runner serves it (the profile's `url`: FakeSV
`static/data/FakeSV/videos/<id>.mp4`, LiveBot `static/data/LiveBot/videos/<category>/<title>.mp4`,
Video-SafetyBench `static/data/<path>.mp4`; any other source `static/data/<source>/videos/<id>.mp4`;
URL-quoted), `is_liked` / `is_collected` false and no `reports`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from curation.core.catalog import Catalog
from curation.core.stage import RunResult, StageRun, stage
from curation.corpus.visible import VisibleVideo, load_visible
from curation.env.profile import default_profile
from curation.env.starts import comment_rows, starting_comments
from curation.release.semver import Version


def video_url(video_id: str) -> str:
    """Where the runner serves the video (its profile's `url`); a source it does not serve, by the same layout."""
    served = default_profile().source_of(video_id)
    if served is not None:
        return served.url_of(video_id)
    source, _, native = video_id.partition("/")
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
        thread: dict[str, Any] = {"id": number, "user": row.get("author") or f"评论{number}",
                                  "text": (row.get("text") or "").strip(), "replies": []}
        for reply in replies.get(row["comment_id"], []):
            number += 1
            thread["replies"].append({"id": number, "user": reply.get("author") or f"评论{number}",
                                      "text": (reply.get("text") or "").strip()})
        out.append(thread)
    return out


def _as_runner_int(value: Any) -> int:
    """A count as the runner reads it: Python's int() of the raw value, 0 when int() refuses it."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def source_records(catalog: Catalog, video_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The FakeSV source records of these videos, read again from the JSON Lines file each was ingested from
    (the file the runner reads as `data_complete.json`): video id -> the record. A video whose file or line
    cannot be read any more, or no longer holds its record, is left out."""
    rows = catalog.rows("SELECT v.video_id, v.native_id, v.raw_ref, r.params->>'$.path' AS path FROM videos v "
                        "JOIN runs r ON r.run_id = v.run_id WHERE v.source = 'FakeSV' "
                        "AND list_contains(?, v.video_id)", [list(video_ids)])
    wanted: dict[Path, dict[int, tuple[str, str]]] = defaultdict(dict)
    for row in rows:
        name, _, line = str(row["raw_ref"] or "").rpartition(":")
        if row["path"] and line.isdigit() and Path(row["path"]).name == name:
            wanted[Path(row["path"])][int(line)] = (row["video_id"], row["native_id"])
    out: dict[str, dict[str, Any]] = {}
    for path, lines in wanted.items():
        try:
            with path.open("rb") as handle:
                for number, raw in enumerate(handle, start=1):  # numbered as ingest numbers them (readers.py)
                    if number in lines:
                        video_id, native = lines[number]
                        record = _json_line(raw)  # a line that no longer parses leaves out its video alone
                        if isinstance(record, dict) and str(record.get("video_id")) == native:
                            out[video_id] = record
        except OSError:  # the file is gone or unreadable: its videos are counted as read from the catalog
            continue
    return out


def _json_line(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def runner_video(position: int, video_id: str, record: dict[str, Any] | None, catalog: Catalog,
                 starts: list[str] | None, counts: dict[str, int] | None) -> dict[str, Any] | None:
    """A video as the runner's feed2data shows it (its profile's `shown`); None for a source it does not serve."""
    served = default_profile().source_of(video_id)
    if served is None:
        return None
    texts = [{"id": n, "user": f"评论{n}", "text": t} for n, t in enumerate(starts or [], start=1)]
    if served.shown != "record":
        native = video_id[len(served.prefix):]
        desc = (native.split("/", 1)[1] if "/" in native else native) if served.shown == "name" else ""
        return _shown(position, video_id, f"用户{position}", desc, 0, 0, texts)
    if record is None:  # the source file is gone: the catalog stands in, with what it kept of the raw fields
        row = (catalog.rows("SELECT title, like_count, collect_count, extra, metadata_missing FROM videos "
                            "WHERE video_id = ?", [video_id]) or [{"metadata_missing": True}])[0]
        if counts is not None and not row["metadata_missing"]:
            counts["fakesv_from_catalog"] += 1
        extra = json.loads(row.get("extra") or "{}")
        record = {"author_verified_intro": extra.get("author_verified_intro"), "title": row.get("title"),
                  "count_like": row.get("like_count"), "count_star": row.get("collect_count")}
    author = str(record.get("author_verified_intro") or "").strip() or f"用户{position}"
    # the comments the video starts with, as the proofs read them; [] when only the runner's own metadata knows
    return _shown(position, video_id, author, record.get("title") or "", _as_runner_int(record.get("count_like", 0)),
                  _as_runner_int(record.get("count_star", 0)), texts)


def _shown(position: int, video_id: str, author: str, desc: str, likes: int, collects: int,
           comments: list[dict[str, Any]]) -> dict[str, Any]:
    # the runner's key order, so that the JSON text matches as well as the values
    return {"id": position, "video_url": video_url(video_id), "author": author, "desc": desc, "likes": likes,
            "collects": collects, "is_liked": False, "is_collected": False, "comments": comments, "reports": []}


def reset_payload(catalog: Catalog, video_feed: list[str], display_fixes: bool = False,
                  counts: dict[str, int] | None = None) -> list[dict[str, Any]]:
    visible = load_visible(catalog, video_feed)
    comments = comment_rows(catalog, video_feed)
    records = {} if display_fixes else source_records(catalog, video_feed)
    starts = starting_comments(catalog, default_profile(), video_feed)
    out = []
    for position, video_id in enumerate(video_feed, start=1):
        shown = None if display_fixes else runner_video(position, video_id, records.get(video_id), catalog,
                                                         starts.get(video_id), counts)
        out.append(shown or displayed(position, video_id, visible[video_id], comments.get(video_id, [])))
    return out


def displayed(position: int, video_id: str, seen: VisibleVideo, comments: list[dict[str, Any]]) -> dict[str, Any]:
    """A video as the catalog knows it (the display fixes)."""
    return {"id": position, "video_url": video_url(video_id),
            "author": seen.author_bio or seen.author_name or f"用户{position}", "desc": seen.caption or "",
            "likes": seen.like_count or 0, "collects": seen.collect_count or 0,
            "comments": comment_threads(comments), "is_liked": False, "is_collected": False, "reports": []}


@stage("release-env-feeds", command="curate release env-feeds vX.Y.Z DIR", reads=("releases", "release_tasks",
       "videos", "comments", "runs"), writes=(),
       summary="per task, the video list the runner's app takes at /api/reset, as the runner shows it "
       "(or with display fixes)", files=("out: env feed folder",))
def export_env_feeds(run: StageRun, version: str, out: Path, display_fixes: bool = False) -> RunResult:
    catalog = run.db
    target = str(Version.parse(version))
    from curation.release.livingscreen import runnable_elements

    elements = runnable_elements(catalog, target)
    recorded = catalog.scalar("SELECT count(*) FROM release_tasks WHERE version = ?", [target])
    out.mkdir(parents=True, exist_ok=True)
    run.params.update(version=target, out=str(out), display_fixes=display_fixes)
    run.counts.update(tasks=0, videos=0, videos_without_metadata=0, malformed_skipped=recorded - len(elements),
                      fakesv_from_catalog=0)
    for element in run.progress(elements, "env feeds"):
        payload = reset_payload(catalog, list(element.get("video_feed") or []), display_fixes, run.counts)
        (out / f"{element['task_id']}.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n",
                                                         encoding="utf-8")
        run.counts["tasks"] += 1
        run.counts["videos"] += len(payload)
        run.counts["videos_without_metadata"] += sum(1 for v in payload if not v["desc"])
    return RunResult(run.counts)
