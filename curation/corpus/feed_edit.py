"""Feed edits: reorder, delete, swap in a distractor. Each edit makes version v+1;
earlier versions stay in the catalog untouched.

Operations use 0-based positions in the feed as it stands when the operation runs
(the annotation import converts from the 1-based positions annotators see):
`{"op": "reorder", "order": [2, 0, 1]}`, `{"op": "delete", "positions": [3]}`,
`{"op": "swap", "position": 1, "video_id": "KuaiRec/42"}` (without `video_id`, a
distractor is sampled the way the build samples them).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import numpy as np

from curation.core.config import FeedsConfig, SourceConfig
from curation.core.errors import FeedError
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import Feed, FeedContext, feed_runtime, insert_feeds, load_feed
from curation.corpus.visible import video_durations


def _check_position(feed: Feed, position: Any) -> int:
    if not isinstance(position, int) or isinstance(position, bool):
        raise FeedError(f"position {position!r} is not an integer")
    if not 0 <= position < len(feed.video_feed):
        raise FeedError(f"position {position} is outside the feed (0..{len(feed.video_feed) - 1})")
    return position


def _sample_distractor(ctx: FeedContext, feed: Feed, salt: str) -> str:
    taken = set(feed.video_feed)
    anchors = [ctx.index[v] for v in (feed.keyword_videos or feed.video_feed) if v in ctx.index]
    pool = [ctx.video_ids[i] for i in ctx.pool(feed.anchor_cluster, ctx.distractor_sources(anchors))
            if ctx.video_ids[i] not in taken and not ctx.synthetic[i]]
    if not pool:
        raise FeedError(f"no distractor left to swap into {feed.feed_id}")
    digest = hashlib.sha256(f"{feed.feed_id}:{feed.version}:{salt}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return pool[int(rng.integers(len(pool)))]


def apply_edit(feed: Feed, op: dict[str, Any], ctx: FeedContext | None,
               known: set[str] | None = None) -> tuple[Feed, dict[str, Any]]:
    """The feed after one operation, and the operation as recorded (with sampled ids)."""
    videos = list(feed.video_feed)
    keyword, other = list(feed.keyword_videos), list(feed.other_videos)
    kind = op.get("op")
    if kind == "reorder":
        order = op.get("order")
        if not isinstance(order, list) or sorted(order) != list(range(len(videos))):
            raise FeedError(f"reorder needs every position 0..{len(videos) - 1} exactly once")
        videos = [videos[_check_position(feed, p)] for p in order]
    elif kind == "delete":
        positions = op.get("positions")
        if not isinstance(positions, list) or not positions:
            raise FeedError("delete needs a list of positions")
        drop = {videos[_check_position(feed, p)] for p in positions}
        if len(drop) == len(videos):
            raise FeedError("deleting every video would leave the feed empty")
        videos = [v for v in videos if v not in drop]
        keyword = [v for v in keyword if v not in drop]
        other = [v for v in other if v not in drop]
    elif kind == "swap":
        position = _check_position(feed, op.get("position"))
        new = op.get("video_id")
        if new is None:
            if ctx is None:
                raise FeedError("swap without video_id needs the clustering to sample from")
            new = _sample_distractor(ctx, feed, str(position))
            op = {**op, "video_id": new}
        elif not isinstance(new, str) or (known is not None and new not in known):
            raise FeedError(f"video {new!r} is not in the catalog")
        if new in videos:
            raise FeedError(f"video {new} is already in the feed")
        old = videos[position]
        videos[position] = new
        keyword = [v for v in keyword if v != old]
        other = [v for v in other if v != old] + [new]
    else:
        raise FeedError(f"unknown edit {kind!r}: reorder, delete or swap")
    # With no anchor video left the ratio is undefined: None (JSON null), never infinity.
    ratio = round(len(other) / len(keyword), 6) if keyword else None
    edited = replace(feed, keyword_videos=keyword, other_videos=other, video_feed=videos,
                     ratio=ratio)
    return edited, op


@stage("feeds-edit", command="curate feeds edit <feed_id>", reads=("feeds", "videos", "runs", "clusters",
       "cluster_members", "keyword_sets", "embeddings", "media_files", "media_outputs"), writes=("feeds",),
       summary="reorder / delete / swap, as a new feed version")
def edit_feed(run: StageRun, feed_id: str, ops: list[dict[str, Any]], config: FeedsConfig,
              author: str | None = None, base_version: int | None = None,
              sources: dict[str, SourceConfig] | None = None) -> Feed:
    """Apply `ops` in order to `base_version` (default: the latest) of `feed_id` and store
    the result as the next version after the latest."""
    catalog = run.db
    if not ops:
        raise FeedError("no edit given")
    latest = load_feed(catalog, feed_id).version
    feed = load_feed(catalog, feed_id, base_version)
    ctx = None
    if any(op.get("op") == "swap" and op.get("video_id") is None for op in ops):
        ctx = FeedContext(catalog, feed.cluster_run, config, sources)
    known = {r[0] for r in catalog.con.execute(
        "SELECT video_id FROM videos WHERE list_contains(?, video_id)",
        [[op["video_id"] for op in ops if op.get("video_id")]]).fetchall()}
    recorded = []
    current = feed
    for op in ops:
        current, done = apply_edit(current, op, ctx, known)
        recorded.append(done)
    run.params.update(feed_id=feed_id, from_version=feed.version, ops=recorded, author=author)
    durations = video_durations(catalog, current.video_feed)
    new = replace(current, version=latest + 1, run_id=run.run_id,
                  total_runtime_s=feed_runtime(durations, current.video_feed),
                  edit=[{**op, "author": author} if author else op for op in recorded])
    insert_feeds(catalog, [new])
    run.counts.update(version=new.version, videos=len(new.video_feed))
    return new
