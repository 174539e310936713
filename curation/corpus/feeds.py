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
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from curation.core.catalog import Catalog, now
from curation.core.config import ClusterConfig, Config, FeedsConfig, SourceConfig, as_dict
from curation.core.errors import ConfigError, FeedError, PrerequisiteError
from curation.core.stage import StageRun, stage
from curation.corpus.cluster import latest_cluster_run, stale_cluster_run
from curation.corpus.coherence import (
    AnchorCoherence,
    anchor_coherence,
    chance_anchors,
    human_labels,
    summary,
    write_coherence,
)
from curation.corpus.embed import load_vectors
from curation.corpus.feeds_report import feeds_report
from curation.corpus.playable import playable_video_ids
from curation.corpus.reduce import similarity_space
from curation.env.profile import default_profile

SIMILARITY_SAMPLE = 2048  # candidates whose similarities set a cluster's distractor threshold
# the `cluster_run` of a feed that came with an imported release: no cluster of this catalog built it
CARRIED_IN = "imported"


@dataclass
class Feed:
    feed_id: str
    version: int
    anchor_cluster: int
    cluster_run: str
    keyword_videos: list[str]
    other_videos: list[str]
    video_feed: list[str]
    ratio: float | None  # distractors per anchor video; None once no anchor video is left
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

    def __init__(self, catalog: Catalog, cluster_run: str, config: FeedsConfig,
                 sources: dict[str, SourceConfig] | None = None) -> None:
        self.cluster_run = cluster_run
        self.config = config
        params = catalog.con.execute("SELECT params FROM runs WHERE run_id = ?",
                                     [cluster_run]).fetchone()
        if not params:
            raise FeedError(f"cluster run {cluster_run} not found")
        cluster_params = json.loads(params[0])
        model_id = cluster_params["model"]
        members = catalog.con.execute(
            "SELECT m.video_id, m.cluster_id, k.keywords, v.synthetic, v.duration_s, v.source "
            "FROM cluster_members m JOIN keyword_sets k USING (video_id) "
            "JOIN videos v USING (video_id) WHERE m.run_id = ? ORDER BY m.video_id",
            [cluster_run]).fetchall()
        if not members:
            raise FeedError(f"cluster run {cluster_run} has no members any more: run `curate cluster`")
        self.video_ids = [m[0] for m in members]
        self.index = {v: i for i, v in enumerate(self.video_ids)}
        self.labels = np.array([m[1] for m in members], dtype=np.int64)
        self.synthetic = np.array([bool(m[3]) for m in members], dtype=bool)
        self.duration = {m[0]: m[4] for m in members}
        self.source_names, codes = np.unique(np.array([m[5] for m in members], dtype=object).astype(str),
                                             return_inverse=True)
        self.source_code = codes.astype(np.int64)
        playable = playable_video_ids(catalog, Config().sources if sources is None else sources)
        self.playable = np.array([v in playable for v in self.video_ids], dtype=bool)
        postings: dict[str, list[int]] = {}
        for i, m in enumerate(members):
            for word in m[2] or []:
                postings.setdefault(word, []).append(i)
        self.postings = {w: np.asarray(ix, dtype=np.int64) for w, ix in postings.items()}
        ids, vectors = load_vectors(catalog, model_id)
        row_of = {v: i for i, v in enumerate(ids)}
        stale = [v for v in self.video_ids if v not in row_of]
        if stale:
            raise PrerequisiteError(
                f"{len(stale):,} videos of cluster run {cluster_run} have no {model_id} vector for their "
                f"current keyword set (e.g. {stale[0]}): keyword sets changed since; "
                "run `curate embed` and `curate cluster`")
        # Similarities are taken in the space the clustering assigned and measured in (centred).
        # the members are usually every video with a vector: no reordered copy of them all then
        mine = vectors if ids == self.video_ids else vectors[[row_of[v] for v in self.video_ids]]
        del vectors
        known = {f.name for f in fields(ClusterConfig)}
        clustered_with = ClusterConfig(**{k: v for k, v in cluster_params.items() if k in known})
        self.vectors = similarity_space(mine, clustered_with.centre)
        del mine
        labelled = human_labels(catalog, self.video_ids)
        self.human = [labelled.get(v, {}) for v in self.video_ids]
        self.coherence: dict[str, AnchorCoherence] = {}  # of the feeds build_feeds drew, by feed id
        self.clusters = {r[0]: (r[1], list(r[2] or [])) for r in catalog.con.execute(
            "SELECT cluster_id, size, top_keywords FROM clusters WHERE run_id = ? "
            "ORDER BY cluster_id", [cluster_run]).fetchall()}
        self.members_of = {c: np.flatnonzero(self.labels == c) for c in self.clusters}
        self._pools: dict[tuple[int, tuple[int, ...] | None], np.ndarray] = {}
        self._criteria_cache: dict[int, tuple[np.ndarray, float, np.ndarray]] = {}
        # One fixed random sample of the corpus sets every cluster's similarity threshold.
        n = len(self.video_ids)
        self._sample = np.sort(np.random.default_rng(0x5EED).choice(n, size=min(n, SIMILARITY_SAMPLE),
                                                                     replace=False))
        self._sample_labels = self.labels[self._sample]
        self._sample_vectors = self.vectors[self._sample]

    def _criteria(self, cluster_id: int) -> tuple[np.ndarray, float, np.ndarray]:
        """(centroid, similarity threshold, excluded indices) for distractors of a cluster.

        The threshold is the configured quantile of the similarities of the candidates in
        one fixed random sample of the corpus (all of it when small), so that the exact pool and
        the sampler below apply one and the same rule without scanning 100k videos.
        """
        if cluster_id in self._criteria_cache:
            return self._criteria_cache[cluster_id]
        centroid = self.vectors[self.members_of[cluster_id]].mean(axis=0)
        words = self.clusters[cluster_id][1]
        excluded = np.unique(np.concatenate([self.postings[w] for w in words if w in self.postings]
                                            or [np.zeros(0, dtype=np.int64)]))
        quantile = self.config.distractor_similarity_quantile
        threshold = np.inf
        if quantile < 1.0:
            keep = (self._sample_labels != cluster_id) & self.playable[self._sample]
            if len(excluded):
                pos = np.minimum(np.searchsorted(excluded, self._sample), len(excluded) - 1)
                keep &= excluded[pos] != self._sample
            if keep.any():
                sims = (self._sample_vectors @ centroid)[keep]
                k = min(int(quantile * (len(sims) - 1)), len(sims) - 1)  # lower quantile, no interpolation
                threshold = float(np.partition(sims, k)[k])
        self._criteria_cache[cluster_id] = (centroid, threshold, excluded)
        return self._criteria_cache[cluster_id]

    def acceptable(self, cluster_id: int, idx: np.ndarray, sources: tuple[int, ...] | None = None) -> np.ndarray:
        """Which of the videos `idx` may be distractors for `cluster_id` (from `sources` only, if given)."""
        centroid, threshold, excluded = self._criteria(cluster_id)
        ok = (self.labels[idx] != cluster_id) & self.playable[idx]
        if sources is not None:
            ok &= np.isin(self.source_code[idx], sources)
        if len(excluded):  # membership by binary search: np.isin is slow on small arrays
            pos = np.minimum(np.searchsorted(excluded, idx), len(excluded) - 1)
            ok &= excluded[pos] != idx
        if np.isfinite(threshold):
            ok &= (self.vectors[idx] @ centroid) < threshold
        return ok

    def pool(self, cluster_id: int, sources: tuple[int, ...] | None = None) -> np.ndarray:
        """Indices of every video that may be a distractor for `cluster_id`, sorted."""
        if (cluster_id, sources) not in self._pools:
            everything = np.arange(len(self.video_ids))
            self._pools[(cluster_id, sources)] = everything[self.acceptable(cluster_id, everything, sources)]
        return self._pools[(cluster_id, sources)]

    def distractor_sources(self, anchors: list[int]) -> tuple[int, ...] | None:
        """The sources distractors may come from: the anchors' own, unless configured `any`."""
        if self.config.distractor_sources == "any":
            return None
        return tuple(sorted({int(self.source_code[a]) for a in anchors}))

    def source_names_of(self, sources: tuple[int, ...] | None) -> str:
        return "any source" if sources is None else "/".join(str(self.source_names[c]) for c in sources)

    def sample_distractors(self, cluster_id: int, m: int, rng: np.random.Generator,
                           allow_synthetic: bool, sources: tuple[int, ...] | None = None) -> list[int]:
        """m distinct acceptable videos, uniformly: rejection sampling over the whole corpus,
        falling back to the exact pool when acceptable videos are rare."""
        chosen: list[int] = []
        seen: set[int] = set()
        for _ in range(8):
            idx = rng.integers(0, len(self.video_ids), size=max(4 * (m - len(chosen)), 16))
            ok = self.acceptable(cluster_id, idx, sources)
            if not allow_synthetic:
                ok &= ~self.synthetic[idx]
            for i in idx[ok].tolist():
                if i not in seen:
                    seen.add(i)
                    chosen.append(i)
                    if len(chosen) == m:
                        return sorted(chosen)
        pool = self.pool(cluster_id, sources)
        if not allow_synthetic:
            pool = pool[~self.synthetic[pool]]
        if len(pool) < m:
            raise FeedError(f"only {len(pool)} playable distractors from {self.source_names_of(sources)} "
                            f"for cluster {cluster_id}, {m} needed")
        return sorted(rng.choice(pool, size=m, replace=False).tolist())

    def runtime(self, video_ids: list[str]) -> float | None:
        return feed_runtime(self.duration, video_ids)


def feed_runtime(durations: dict[str, float | None], video_ids: list[str]) -> float | None:
    """Total duration of a feed, or None while any of its videos' durations is unknown."""
    known = [d for v in video_ids if (d := durations.get(v)) is not None]
    return round(float(sum(known)), 3) if len(known) == len(video_ids) else None


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


ANCHOR_DRAWS = 20


def _draw_anchors(ctx: FeedContext, cluster: int, pool: np.ndarray, k: int, rng: np.random.Generator) -> list[int]:
    """k videos of `pool`; drawn again while their mean cosine is below `min_anchor_similarity` (at the
    default, -1, the first draw always stands: no extra random numbers are taken)."""
    threshold = ctx.config.min_anchor_similarity
    for _ in range(ANCHOR_DRAWS):
        anchors = sorted(rng.choice(pool, size=k, replace=False).tolist())
        found = anchor_coherence(ctx.vectors, anchors, [], []).anchor_similarity
        if found is None or found >= threshold:
            return anchors
    raise FeedError(f"no {k} videos of cluster {cluster} reach [feeds] min_anchor_similarity {threshold} in "
                    f"{ANCHOR_DRAWS} draws: lower it, or ask for fewer feeds")


def _draw_feed(ctx: FeedContext, cluster: int, allowed_synthetic: int, rng: np.random.Generator
               ) -> tuple[int, list[int], list[int], int, int]:
    """(cluster, anchor rows, distractor rows, k, m) of one feed anchored on `cluster`; FeedError when it cannot be."""
    cfg = ctx.config
    members = ctx.members_of[cluster]
    members = members[ctx.playable[members]]
    real = members[~ctx.synthetic[members]]
    anchors_pool = members if allowed_synthetic > 0 else real
    k = int(rng.integers(cfg.anchor_min, min(cfg.anchor_max, len(real)) + 1))
    r = float(rng.uniform(cfg.ratio_min, cfg.ratio_max))
    m = min(_distractor_count(k, r, cfg.ratio_min, cfg.ratio_max), cfg.max_feed_len - k)
    anchors = _draw_anchors(ctx, cluster, anchors_pool, k, rng)
    others = ctx.sample_distractors(cluster, m, rng, allowed_synthetic > 0, ctx.distractor_sources(anchors))
    if ctx.synthetic[anchors + others].sum() > max(allowed_synthetic, 0):
        anchors = _draw_anchors(ctx, cluster, real, k, rng)
        others = ctx.sample_distractors(cluster, m, rng, False, ctx.distractor_sources(anchors))
    return cluster, anchors, others, k, m


def build_feeds(ctx: FeedContext, n: int, seed: int) -> list[Feed]:
    """`n` feeds from playable videos; FeedError naming how many could be built when the pool is short."""
    cfg = ctx.config
    a_min = cfg.anchor_min
    usable = ctx.playable & ~ctx.synthetic  # what an anchor set can always be drawn from
    anchor_sizes = {c: int(usable[ctx.members_of[c]].sum()) for c in ctx.clusters}
    eligible = np.array([c for c, size in anchor_sizes.items() if size >= a_min])
    if len(eligible) == 0:
        raise FeedError(f"no cluster has the {a_min} playable videos an anchor needs "
                        f"(playable sources: {', '.join(sorted(set(ctx.source_names[ctx.source_code[ctx.playable]])))}"
                        " or none; see [sources] in the config)")
    weights = anchor_weights(np.array([anchor_sizes[c] for c in eligible]), cfg.anchor_weight)
    cdf = np.cumsum(weights)
    budget_fraction = cfg.synthetic_fraction
    placed = synthetic_used = 0
    feeds: list[Feed] = []
    failures: list[str] = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        # Synthetic videos may take at most budget_fraction of what earlier feeds placed.
        allowed_synthetic = math.floor(budget_fraction * placed) - synthetic_used
        # A cluster that cannot anchor this feed (no distractors left outside it, or no coherent enough anchor)
        # is set aside and another drawn, for this feed only: a feed still depends on nothing but (seed, i).
        blocked = np.zeros(len(eligible), dtype=bool)
        drawn: tuple[int, list[int], list[int], int, int] | None = None
        last: FeedError | None = None
        while drawn is None and not blocked.all():
            share = cdf if not blocked.any() else np.cumsum(np.where(blocked, 0.0, weights))
            pick = min(int(np.searchsorted(share, rng.random() * share[-1], side="right")), len(eligible) - 1)
            try:
                drawn = _draw_feed(ctx, int(eligible[pick]), allowed_synthetic, rng)
            except FeedError as exc:
                blocked[pick], last = True, exc
        if drawn is None:
            failures.append(f"feed {i}: no cluster can anchor it ({last})")
            continue
        cluster, anchors, others, k, m = drawn
        order = rng.permutation(anchors + others).tolist()
        synthetic_used += int(ctx.synthetic[order].sum())
        placed += len(order)
        feed_videos = [ctx.video_ids[j] for j in order]
        ctx.coherence[f"feed-{seed}-{i:04d}"] = anchor_coherence(ctx.vectors, anchors, others,
                                                                 [ctx.human[j] for j in anchors])
        feeds.append(Feed(
            feed_id=f"feed-{seed}-{i:04d}", version=1, anchor_cluster=cluster,
            cluster_run=ctx.cluster_run, keyword_videos=[ctx.video_ids[j] for j in anchors],
            other_videos=[ctx.video_ids[j] for j in others], video_feed=feed_videos,
            ratio=round(m / k, 6), seed=seed, total_runtime_s=ctx.runtime(feed_videos)))
    if failures:
        raise FeedError(f"only {len(feeds)} of the {n} feeds asked for can be built from playable videos "
                        f"({failures[0]}{f'; and {len(failures) - 1} more' if len(failures) > 1 else ''}); "
                        "ask for fewer, make more sources playable, or set [feeds] distractor_sources = \"any\"")
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
    return [_row_to_feed(r) for r in catalog.rows("SELECT * FROM latest_feeds ORDER BY feed_id")]


FeedKey = tuple[str, int]  # a feed version: (feed_id, version)


def latest_versions(catalog: Catalog) -> list[FeedKey]:
    """Each feed's latest version, by feed id: a twentieth of reading the feeds themselves (6,000 feeds)."""
    return [(f, int(v)) for f, v in catalog.con.execute(
        "SELECT feed_id, max(version) FROM feeds GROUP BY feed_id ORDER BY feed_id").fetchall()]


def load_feeds(catalog: Catalog, keys: list[FeedKey]) -> dict[FeedKey, Feed]:
    """The feed versions `keys` names, in one read; a key the catalog does not hold is left out."""
    wanted = pa.table({"feed_id": pa.array([k[0] for k in keys], pa.string()),
                       "version": pa.array([k[1] for k in keys], pa.int32())})
    with catalog.staged(wanted_feeds=wanted):
        rows = catalog.rows("SELECT * FROM feeds SEMI JOIN wanted_feeds USING (feed_id, version)")
    return {(r["feed_id"], r["version"]): _row_to_feed(r) for r in rows}


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
    with catalog.staged(incoming_feeds=table):
        catalog.insert_staged("feeds", "incoming_feeds", table.column_names)


@stage("feeds", command="curate feeds build --n N --seed S",
       reads=("clusters", "cluster_members", "keyword_sets", "embeddings", "videos", "runs", "ls_tasks",
              "media_files", "media_outputs"),
       writes=("feeds", "feed_coherence"), summary="anchor cluster + unrelated distractors, shuffled, "
       "versioned", files=("out: report file (--report)",))
def build_feed_set(run: StageRun, config: FeedsConfig, n: int, seed: int, cluster_run: str | None = None,
                   replace: bool = False, sources: dict[str, SourceConfig] | None = None,
                   report: Path | None = None) -> dict[str, Any]:
    """Build the feeds of `seed`; with `report`, write the feeds page there (its path joins the run's params)."""
    counts = _build_feed_set(run, config, n, seed, cluster_run, replace, sources)
    if report is not None:
        run.params.update(report=str(report))
        feeds_report(run.db, report, latest_feeds(run.db), config.ratio_min, config.ratio_max, sources,
                     counts.get("coherence"))
    return counts


def _build_feed_set(run: StageRun, config: FeedsConfig, n: int, seed: int, cluster_run: str | None,
                    replace: bool, sources: dict[str, SourceConfig] | None) -> dict[str, Any]:
    catalog = run.db
    profile = default_profile()
    if config.max_feed_len > profile.max_feed:  # every task on such a feed would be refused at every door
        raise ConfigError(f"[feeds] max_feed_len {config.max_feed_len} is longer than {profile.name} reads "
                          f"(positions {profile.others_first}-{profile.others_last}: at most {profile.max_feed} "
                          "videos; `curate env show`)")
    if cluster_run is None:  # the latest clustering, which must be of the vectors as they are now
        cluster_run = latest_cluster_run(catalog)
        if cluster_run is None:
            raise PrerequisiteError("no clustering yet: run `curate cluster` first")
        if (stale := stale_cluster_run(catalog, cluster_run)) is not None:
            raise PrerequisiteError(stale)
    sources = Config().sources if sources is None else sources
    run.params.update(n=n, seed=seed, cluster_run=cluster_run, replace=replace, **as_dict(config),
                      playable_sources=sorted(s for s, c in sources.items() if c.playable))
    ctx = FeedContext(catalog, cluster_run, config, sources)
    feeds = build_feeds(ctx, n, seed)
    existing = {f.feed_id: f for f in (_row_to_feed(r) for r in catalog.rows(
        "SELECT * FROM feeds WHERE version = 1 AND seed = ?", [seed]))}
    same = [f for f in feeds if f.feed_id in existing
            and existing[f.feed_id].content() == f.content()]
    run.counts.update(feeds=len(feeds), written=0, cluster_run=cluster_run,
                      coherence=summary([ctx.coherence[f.feed_id] for f in feeds], chance_anchors(
                          ctx.vectors, ctx.human, ctx.playable & ~ctx.synthetic, ctx.source_code,
                          [([ctx.index[v] for v in f.keyword_videos], [ctx.index[v] for v in f.other_videos])
                           for f in feeds], seed)))
    if len(same) == len(feeds) and len(existing) == len(feeds):
        # the same feeds: their coherence rows are (re)written, for feeds built before the table existed
        write_coherence(catalog, [(f.feed_id, f.version, run.run_id, ctx.coherence[f.feed_id]) for f in feeds])
        return run.counts
    if existing and not replace:
        # Unedited feeds nobody has seen are derived data: rebuild them from the new inputs.
        # Feeds that were edited or sent to annotators are work: never dropped silently.
        worked_on = catalog.scalar(
            "SELECT count(*) FROM feeds WHERE seed = ? AND (version > 1 OR feed_id IN "
            "(SELECT feed_id FROM ls_tasks))", [seed])
        if worked_on:
            raise FeedError(f"feeds with seed {seed} already exist from other inputs or parameters and "
                            f"{worked_on} of them were edited or sent to annotators; use another --seed "
                            "or --replace (drops them and their edits)")
        replace = True
    for feed in feeds:
        feed.run_id = run.run_id
    if replace:
        catalog.con.execute("DELETE FROM feed_coherence WHERE feed_id IN (SELECT feed_id FROM feeds WHERE seed = ?)",
                            [seed])
        catalog.con.execute("DELETE FROM feeds WHERE seed = ?", [seed])
    insert_feeds(catalog, feeds)
    write_coherence(catalog, [(f.feed_id, f.version, run.run_id, ctx.coherence[f.feed_id]) for f in feeds])
    run.counts.update(written=len(feeds), videos=sum(len(f.video_feed) for f in feeds))
    return run.counts
