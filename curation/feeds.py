"""Feeds: an anchor cluster's videos plus r x k unrelated distractors, shuffled.

For each feed: draw an anchor cluster (weighted by a configurable rule), k anchor
videos from it, r ~ U[ratio_min, ratio_max], round(r*k) distractors from other
clusters or noise that share none of the anchor cluster's top keywords and sit
below a similarity quantile to its centroid; shuffle. Every random draw comes
from a generator seeded by (seed, feed index), so a feed does not depend on how
many others were built, and the same inputs give byte-identical feeds.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from curation.catalog import Catalog, now
from curation.cluster import centre, latest_cluster_run
from curation.embed import load_vectors


class FeedError(ValueError):
    """A feed operation that cannot be done; the message says why."""


@dataclass
class Feed:
    feed_id: str
    version: int
    anchor_cluster: int
    cluster_run: str
    keyword_videos: list[str]
    other_videos: list[str]
    video_feed: list[str]
    ratio: float
    seed: int
    run_id: str | None = None
    total_runtime_s: float | None = None
    edit: list[dict[str, Any]] | None = None

    def content(self) -> dict[str, Any]:
        """Everything but the run that wrote it: what determinism is judged on."""
        return {k: v for k, v in asdict(self).items() if k != "run_id"}

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, indent=2) + "\n"


class FeedContext:
    """One cluster run's members, keyword sets and vectors, loaded once."""

    def __init__(self, catalog: Catalog, cluster_run: str, config: dict[str, Any]) -> None:
        self.cluster_run = cluster_run
        self.config = config
        params = catalog.con.execute("SELECT params FROM runs WHERE run_id = ?",
                                     [cluster_run]).fetchone()
        if not params:
            raise FeedError(f"cluster run {cluster_run} not found")
        model_id = json.loads(params[0])["model"]
        members = catalog.con.execute(
            "SELECT m.video_id, m.cluster_id, k.keywords, v.synthetic, v.duration_s "
            "FROM cluster_members m JOIN keyword_sets k USING (video_id) "
            "JOIN videos v USING (video_id) WHERE m.run_id = ? ORDER BY m.video_id",
            [cluster_run]).fetchall()
        self.video_ids = [m[0] for m in members]
        self.index = {v: i for i, v in enumerate(self.video_ids)}
        self.labels = np.array([m[1] for m in members], dtype=np.int64)
        self.synthetic = np.array([bool(m[3]) for m in members])
        self.duration = {m[0]: m[4] for m in members}
        postings: dict[str, list[int]] = {}
        for i, m in enumerate(members):
            for word in m[2] or []:
                postings.setdefault(word, []).append(i)
        self.postings = postings
        ids, vectors = load_vectors(catalog, model_id)
        order = [ids.index(v) for v in self.video_ids] if ids != self.video_ids else None
        self.vectors = centre(vectors if order is None else vectors[order])
        self.clusters = {r[0]: (r[1], list(r[2] or [])) for r in catalog.con.execute(
            "SELECT cluster_id, size, top_keywords FROM clusters WHERE run_id = ? "
            "ORDER BY cluster_id", [cluster_run]).fetchall()}
        self.members_of = {c: np.flatnonzero(self.labels == c) for c in self.clusters}
        self._pools: dict[int, np.ndarray] = {}

    def pool(self, cluster_id: int) -> np.ndarray:
        """Indices of videos that may be distractors for `cluster_id`, sorted."""
        if cluster_id in self._pools:
            return self._pools[cluster_id]
        allowed = self.labels != cluster_id
        for word in self.clusters[cluster_id][1]:
            allowed[self.postings.get(word, [])] = False
        candidates = np.flatnonzero(allowed)
        quantile = float(self.config.get("distractor_similarity_quantile", 1.0))
        if quantile < 1.0 and len(candidates):
            centroid = self.vectors[self.members_of[cluster_id]].mean(axis=0)
            sims = self.vectors[candidates] @ centroid
            candidates = candidates[sims < np.quantile(sims, quantile)]
        self._pools[cluster_id] = candidates
        return candidates

    def runtime(self, video_ids: list[str]) -> float | None:
        durations = [self.duration.get(v) for v in video_ids]
        return None if any(d is None for d in durations) else round(float(sum(durations)), 3)


def _distractor_count(k: int, r: float, lo: float, hi: float) -> int:
    # Half-up rounding, then clamped so that count/k stays inside [lo, hi].
    return min(max(int(math.floor(r * k + 0.5)), math.ceil(lo * k)), math.floor(hi * k))


def anchor_weights(sizes: np.ndarray, rule: str) -> np.ndarray:
    if rule == "uniform":
        weights = np.ones(len(sizes))
    elif rule == "size":
        weights = sizes.astype(float)
    elif rule == "sqrt_size":
        weights = np.sqrt(sizes.astype(float))
    else:
        raise FeedError(f"unknown anchor_weight rule {rule!r}: uniform, size or sqrt_size")
    return weights / weights.sum()


def build_feeds(ctx: FeedContext, n: int, seed: int) -> list[Feed]:
    cfg = ctx.config
    a_min, a_max = int(cfg["anchor_min"]), int(cfg["anchor_max"])
    lo, hi = float(cfg["ratio_min"]), float(cfg["ratio_max"])
    max_len = int(cfg.get("max_feed_len", 20))
    eligible = np.array([c for c, (size, _) in ctx.clusters.items() if size >= a_min])
    if len(eligible) == 0:
        raise FeedError(f"no cluster has the {a_min} videos an anchor needs")
    weights = anchor_weights(np.array([ctx.clusters[c][0] for c in eligible]),
                             cfg.get("anchor_weight", "sqrt_size"))
    budget_fraction = float(cfg.get("synthetic_fraction", 0.01))
    placed = synthetic_used = 0
    feeds: list[Feed] = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        # Synthetic videos may take at most budget_fraction of what earlier feeds placed.
        allowed_synthetic = math.floor(budget_fraction * placed) - synthetic_used
        for _attempt in range(1000):
            cluster = int(rng.choice(eligible, p=weights))
            members = ctx.members_of[cluster]
            real = members[~ctx.synthetic[members]]
            if len(real) >= a_min:  # k never needs a synthetic anchor, so a redraw can drop them
                break
        else:
            raise FeedError(f"feed {i}: no cluster has {a_min} non-synthetic videos")
        anchors_pool = members if allowed_synthetic > 0 else real
        k = int(rng.integers(a_min, min(a_max, len(real)) + 1))
        r = float(rng.uniform(lo, hi))
        m = min(_distractor_count(k, r, lo, hi), max_len - k)
        pool = ctx.pool(cluster)
        if allowed_synthetic <= 0:
            pool = pool[~ctx.synthetic[pool]]
        if len(pool) < m:
            raise FeedError(f"feed {i}: only {len(pool)} distractors for cluster {cluster}, {m} needed")
        anchors = sorted(rng.choice(anchors_pool, size=k, replace=False).tolist())
        others = sorted(rng.choice(pool, size=m, replace=False).tolist())
        if ctx.synthetic[anchors + others].sum() > max(allowed_synthetic, 0):
            anchors_pool = real
            pool = pool[~ctx.synthetic[pool]]
            if len(pool) < m:
                raise FeedError(f"feed {i}: cluster {cluster} has too few non-synthetic videos")
            anchors = sorted(rng.choice(anchors_pool, size=k, replace=False).tolist())
            others = sorted(rng.choice(pool, size=m, replace=False).tolist())
        order = rng.permutation(anchors + others).tolist()
        synthetic_used += int(ctx.synthetic[order].sum())
        placed += len(order)
        feed_videos = [ctx.video_ids[j] for j in order]
        feeds.append(Feed(
            feed_id=f"feed-{seed}-{i:04d}", version=1, anchor_cluster=cluster,
            cluster_run=ctx.cluster_run, keyword_videos=[ctx.video_ids[j] for j in anchors],
            other_videos=[ctx.video_ids[j] for j in others], video_feed=feed_videos,
            ratio=round(m / k, 6), seed=seed, total_runtime_s=ctx.runtime(feed_videos)))
    return feeds


# -- catalog I/O ---------------------------------------------------------------

_COLUMNS = ("feed_id", "version", "anchor_cluster", "cluster_run", "keyword_videos",
            "other_videos", "video_feed", "ratio", "seed", "run_id", "total_runtime_s", "edit")


def _row_to_feed(row: dict[str, Any]) -> Feed:
    values = {k: row[k] for k in _COLUMNS}
    values["edit"] = json.loads(row["edit"]) if row["edit"] else None
    return Feed(**values)


def load_feed(catalog: Catalog, feed_id: str, version: int | None = None) -> Feed:
    rows = catalog.rows("SELECT * FROM feeds WHERE feed_id = ? AND (? IS NULL OR version = ?) "
                        "ORDER BY version DESC LIMIT 1", [feed_id, version, version])
    if not rows:
        raise FeedError(f"no feed {feed_id}" + (f" version {version}" if version else ""))
    return _row_to_feed(rows[0])


def latest_feeds(catalog: Catalog) -> list[Feed]:
    return [_row_to_feed(r) for r in catalog.rows(
        "SELECT * FROM feeds QUALIFY version = max(version) OVER (PARTITION BY feed_id) "
        "ORDER BY feed_id")]


def insert_feeds(catalog: Catalog, feeds: list[Feed]) -> None:
    table = pa.table({
        **{c: [getattr(f, c) for f in feeds] for c in ("feed_id", "cluster_run", "run_id")},
        "version": pa.array([f.version for f in feeds], pa.int32()),
        "anchor_cluster": pa.array([f.anchor_cluster for f in feeds], pa.int32()),
        **{c: pa.array([getattr(f, c) for f in feeds], pa.list_(pa.string()))
           for c in ("keyword_videos", "other_videos", "video_feed")},
        "ratio": pa.array([f.ratio for f in feeds], pa.float64()),
        "seed": pa.array([f.seed for f in feeds], pa.int64()),
        "total_runtime_s": pa.array([f.total_runtime_s for f in feeds], pa.float64()),
        "edit": [json.dumps(f.edit, ensure_ascii=False) if f.edit else None for f in feeds],
        "created_at": pa.array([now()] * len(feeds), pa.timestamp("us")),
    })
    catalog.con.register("incoming_feeds", table)
    try:
        catalog.con.execute(f"INSERT INTO feeds SELECT {', '.join(_COLUMNS)}, created_at "
                            "FROM incoming_feeds")
    finally:
        catalog.con.unregister("incoming_feeds")


def run_build(catalog: Catalog, config: dict[str, Any], n: int, seed: int,
              cluster_run: str | None = None, replace: bool = False) -> dict[str, Any]:
    cluster_run = cluster_run or latest_cluster_run(catalog)
    if cluster_run is None:
        raise FeedError("no clustering yet: run `curate cluster` first")
    ctx = FeedContext(catalog, cluster_run, config)
    feeds = build_feeds(ctx, n, seed)
    existing = {f.feed_id: f for f in (_row_to_feed(r) for r in catalog.rows(
        "SELECT * FROM feeds WHERE version = 1 AND seed = ?", [seed]))}
    same = [f for f in feeds if f.feed_id in existing
            and existing[f.feed_id].content() == f.content()]
    if len(same) == len(feeds) and len(existing) == len(feeds):
        return {"feeds": len(feeds), "written": 0, "cluster_run": cluster_run}
    if existing and not replace:
        raise FeedError(f"feeds with seed {seed} already exist from other inputs or parameters; "
                        "use another --seed or --replace (drops them and their edits)")
    params = {"n": n, "seed": seed, "cluster_run": cluster_run,
              **{k: v for k, v in config.items()}}
    run = catalog.start_run("feeds", params)
    for feed in feeds:
        feed.run_id = run.run_id
    with catalog.transaction():
        if replace:
            catalog.con.execute("DELETE FROM feeds WHERE seed = ?", [seed])
        insert_feeds(catalog, feeds)
        run.counts = {"feeds": len(feeds), "written": len(feeds),
                      "videos": sum(len(f.video_feed) for f in feeds)}
        catalog.finish_run(run)
    return {**run.counts, "cluster_run": cluster_run}
