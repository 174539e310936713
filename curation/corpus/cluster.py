"""Clusters of videos by keyword set: HDBSCAN over UMAP of the distinct keyword sets.

Each distinct keyword set is one point of the similarity space (corpus mean subtracted,
re-normalised: `reduce.py`), reduced with UMAP and clustered with HDBSCAN; every video takes its
keyword set's cluster. Noise points (and, past `sample_above`, the points left out of the
sample) join the cluster whose centroid is nearest in the similarity space. The settings were
chosen on chance-corrected agreement with KuaiRec's categories (AMI; `bench/cluster.py`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from curation.core.catalog import Catalog, one_row
from curation.core.config import ClusterConfig, as_dict
from curation.core.errors import PrerequisiteError
from curation.core.progress import note
from curation.core.stage import StageRun, stage
from curation.corpus.cluster_report import cluster_report
from curation.corpus.embed import centred_rows, load_vectors, model_id_for
from curation.corpus.quality import source_quality
from curation.corpus.reduce import clustering_points, distinct_rows, similarity_space


@dataclass
class ClusterResult:
    run_id: str
    video_ids: list[str]
    labels: np.ndarray
    reused: bool = False
    quality: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)  # as recorded in `runs`
    report: Path | None = None


def hdbscan_labels(points: np.ndarray, backend: str, min_cluster_size: int, min_samples: int,
                   selection: str = "eom") -> tuple[np.ndarray, np.ndarray]:
    if backend == "hdbscan":
        import hdbscan

        model = hdbscan.HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples,
                                cluster_selection_method=selection, core_dist_n_jobs=1)
    elif backend == "sklearn":
        from sklearn.cluster import HDBSCAN

        model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples,
                        cluster_selection_method=selection, copy=True)
    elif backend == "fast-hdbscan":
        import fast_hdbscan

        model = fast_hdbscan.HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples,
                                     cluster_selection_method=selection)
    else:
        raise ValueError(f"unknown cluster backend {backend!r}")
    labels = model.fit_predict(points)
    return np.asarray(labels, dtype=np.int64), np.asarray(model.probabilities_, dtype=np.float64)


def cluster_sums(points: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The clusters (labels >= 0) and the sum of their points, in one pass over the points
    sorted by label (not one pass per cluster: thousands of clusters over a million points)."""
    inside = np.flatnonzero(labels >= 0)
    order = inside[np.argsort(labels[inside], kind="stable")]
    clusters, starts = np.unique(labels[order], return_index=True)
    if not len(clusters):
        return clusters, np.zeros((0, points.shape[1]))
    return clusters, np.add.reduceat(points[order], starts, axis=0)


def assign_noise(points: np.ndarray, labels: np.ndarray, min_similarity: float,
                 budget: int = 50_000_000) -> np.ndarray:
    """Noise points join the cluster whose centroid is most similar (cosine, in the clustering's
    space) when that similarity reaches `min_similarity`; the rest stay noise. Similarities are
    computed for a chunk of points at a time, at most `budget` of them (400 MB): all at once, a
    million points against thousands of centroids would not fit in memory."""
    clusters, sums = cluster_sums(points, labels)
    noise = np.flatnonzero(labels < 0)
    if not len(clusters) or not len(noise):
        return labels
    centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    chunk = max(1, min(65_536, budget // len(clusters)))  # few clusters: the points' copies bound it instead
    assigned = labels.copy()
    for start in range(0, len(noise), chunk):
        part = noise[start:start + chunk]
        unit = points[part] / np.maximum(np.linalg.norm(points[part], axis=1, keepdims=True), 1e-12)
        sims = unit @ centroids.T
        best = sims.argmax(axis=1)
        take = sims[np.arange(len(part)), best] >= min_similarity
        assigned[part[take]] = clusters[best[take]]
    return assigned


def medoid(members: np.ndarray) -> tuple[int, float]:
    """The member (unit rows) with the highest mean cosine to the others, and the cluster's mean
    of those means. A member's similarities to all members, summed, is its product with their
    sum: no n-by-n matrix for a cluster of 100k members. Members with the same keyword set tie;
    the first of them, not rounding, is the medoid."""
    mean_to_others = (members @ members.sum(axis=0) - 1.0) / max(len(members) - 1, 1)
    at = int(np.flatnonzero(mean_to_others >= mean_to_others.max() - 1e-9)[0])
    return at, float(np.clip(mean_to_others.mean(), -1.0, 1.0))


def class_tfidf(keyword_sets: dict[int, list[list[str]]], top_n: int) -> dict[int, list[str]]:
    """Top keywords per cluster by class-based TF-IDF: frequent here, rare elsewhere."""
    counts = {c: Counter(w for kws in sets for w in kws) for c, sets in keyword_sets.items()}
    overall: Counter[str] = Counter()
    for counter in counts.values():
        overall.update(counter)
    avg_words = sum(overall.values()) / max(len(counts), 1)
    top: dict[int, list[str]] = {}
    for c, counter in counts.items():
        total = sum(counter.values()) or 1
        scored = sorted(((n / total) * math.log(1 + avg_words / overall[w]), w)
                        for w, n in counter.items())
        top[c] = [w for _, w in sorted(scored, key=lambda x: (-x[0], x[1]))[:top_n]]
    return top


def stratified_sample(catalog: Catalog, video_ids: list[str], config: ClusterConfig) -> np.ndarray:
    """Indices of `sample_size` videos, each source in proportion to its size, chosen by a hash of
    the seed and the video id (so the sample is the same whatever order the videos come in)."""
    source_of = dict(catalog.con.execute("SELECT video_id, source FROM videos WHERE video_id IN (SELECT unnest(?))",
                                         [video_ids]).fetchall())
    by_source: dict[str, list[int]] = {}
    for i, video_id in enumerate(video_ids):
        by_source.setdefault(source_of.get(video_id, video_id.split("/", 1)[0]), []).append(i)
    total, chosen = len(video_ids), []
    for members in by_source.values():
        take = max(1, round(config.sample_size * len(members) / total))
        ranked = sorted(members, key=lambda i: hashlib.sha256(f"{config.sample_seed}:{video_ids[i]}".encode())
                        .hexdigest())
        chosen += ranked[:take]
    return np.array(sorted(chosen), dtype=np.int64)


def _fingerprint(video_ids: list[str], hashes: list[str], params: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    for vid, sha in zip(video_ids, hashes, strict=True):
        digest.update(f"{vid}\t{sha}\n".encode())
    return digest.hexdigest()


def clustering_inputs(catalog: Catalog, model_id: str) -> list[tuple[str, str]]:
    """(video id, keyword-set text sha256) of every video whose keyword set has a `model_id` vector, by video id:
    what a clustering is a clustering of."""
    return [(r[0], r[1]) for r in catalog.con.execute(
        "SELECT k.video_id, k.text_sha256 FROM keyword_sets k JOIN embeddings e ON e.text_sha256 = k.text_sha256 "
        "AND e.model_id = ? ORDER BY k.video_id", [model_id]).fetchall()]


def keyword_sets_without_vector(catalog: Catalog, model_id: str) -> tuple[int, int]:
    """(keyword sets, those whose text has no `model_id` vector yet)."""
    total, missing = one_row(
        catalog.con, "SELECT count(*), count(*) FILTER (NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model_id = ? "
        "AND e.text_sha256 = k.text_sha256)) FROM keyword_sets k WHERE k.text_sha256 IS NOT NULL", [model_id])
    return int(total), int(missing)


def stale_cluster_run(catalog: Catalog, run_id: str) -> str | None:
    """Why the clustering of `run_id` is not one of the catalog's vectors as they are now (None: it is)."""
    params = json.loads(catalog.scalar("SELECT params FROM runs WHERE run_id = ?", [run_id]) or "{}")
    if "fingerprint" not in params or "model" not in params:
        return None  # a run from before fingerprints: nothing to compare
    inputs = clustering_inputs(catalog, params["model"])
    clustered_with = {k: v for k, v in params.items() if k not in ("fingerprint", "report")}
    if _fingerprint([i[0] for i in inputs], [i[1] for i in inputs], clustered_with) == params["fingerprint"]:
        return None
    total, missing = keyword_sets_without_vector(catalog, params["model"])
    if missing:
        return (f"{missing:,} of {total:,} keyword sets have no {params['model']} vector (they changed since the "
                f"latest clustering, run {run_id}, or were never embedded): run `curate embed` and `curate cluster`")
    seen = {r[0] for r in catalog.con.execute("SELECT video_id FROM cluster_members WHERE run_id = ?",
                                              [run_id]).fetchall()}
    unseen = sum(1 for video_id, _ in inputs if video_id not in seen)
    return (f"the latest clustering (run {run_id}) is older than the vectors: {len(inputs):,} videos now have "
            f"{params['model']} vectors, {unseen:,} of them not in that clustering (the others' keyword sets may have "
            "changed since); run `curate cluster` first (or name a cluster run with --cluster-run)")


def latest_cluster_run(catalog: Catalog) -> str | None:
    """The run holding the latest clustering (a run that reused an earlier one points at it)."""
    return catalog.scalar(
        "SELECT coalesce(json_extract_string(counts, '$.reused_run'), run_id) FROM runs "
        "WHERE stage = 'cluster' AND status = 'ok' ORDER BY finished_at DESC LIMIT 1")


@stage("cluster", command="curate cluster [--report]",
       reads=("keyword_sets", "embeddings", "videos", "clusters", "cluster_members"),
       writes=("clusters", "cluster_members"), summary="HDBSCAN clusters with top "
       "keywords and medoids; a re-run with the same inputs and parameters reuses the earlier clustering",
       files=("out: report file (--report)",))
def cluster_videos(run: StageRun, config: ClusterConfig, model_spec: str, report: Path | None = None,
                   allow_missing_vectors: bool = False) -> ClusterResult:
    """Cluster (or reuse the clustering of the same inputs); with `report`, write the clusters page there. Keyword
    sets without a vector refuse the run, unless `allow_missing_vectors` (then it says how many it left out)."""
    result = _cluster(run, config, model_spec, allow_missing_vectors)
    result.counts = run.counts
    if report is not None:
        run.params.update(report=str(report))
        result.report = cluster_report(run.db, result.run_id, model_id_for(model_spec), report, counts=run.counts)
    return result


def _cluster(run: StageRun, config: ClusterConfig, model_spec: str, allow_missing_vectors: bool) -> ClusterResult:
    catalog = run.db
    model_id = model_id_for(model_spec)
    video_ids, vectors = load_vectors(catalog, model_id)
    if not video_ids:
        raise PrerequisiteError(f"no embeddings for {model_id}: run `curate keywords` and `curate embed`")
    total, missing = keyword_sets_without_vector(catalog, model_id)
    run.counts["keyword_sets_without_vector"] = missing
    if missing:
        said = (f"{missing:,} of {total:,} keyword sets have no {model_id} vector yet (an embed run was stopped, "
                "or is running)")
        if not allow_missing_vectors:
            raise PrerequisiteError(f"{said}: run `curate embed` first, or cluster only the videos that have one "
                                    "with --allow-missing-vectors")
        note(f"{said}: clustering the {len(video_ids):,} videos that have one (--allow-missing-vectors)")
    params = {"model": model_id, **as_dict(config)}
    rows = catalog.con.execute("SELECT video_id, text_sha256, keywords FROM keyword_sets "
                               "WHERE video_id IN (SELECT unnest(?)) ORDER BY video_id",
                               [video_ids]).fetchall()
    keywords = {r[0]: list(r[2] or []) for r in rows}
    inputs = clustering_inputs(catalog, model_id)
    fingerprint = _fingerprint([i[0] for i in inputs], [i[1] for i in inputs], params)
    run.params.update(params, fingerprint=fingerprint)
    previous = catalog.rows(
        "SELECT coalesce(json_extract_string(counts, '$.reused_run'), run_id) AS run_id, counts FROM runs "
        "WHERE stage = 'cluster' AND status = 'ok' AND json_extract_string(params, '$.fingerprint') = ? "
        "ORDER BY finished_at DESC LIMIT 1", [fingerprint])
    if previous:
        source_run: str = previous[0]["run_id"]
        members = catalog.con.execute("SELECT video_id, cluster_id FROM cluster_members "
                                      "WHERE run_id = ? ORDER BY video_id", [source_run]).fetchall()
        if members:  # an earlier run whose members were deleted since is clustered afresh
            run.counts.update({k: v for k, v in json.loads(previous[0]["counts"] or "{}").items()
                               if k != "reused_run"}, reused_run=source_run)
            return ClusterResult(source_run, [m[0] for m in members], np.array([m[1] for m in members]),
                                 reused=True)

    first, inverse = distinct_rows([r[1] for r in rows])
    points = similarity_space(vectors, config.centre, rows=first)  # one row per distinct keyword set
    sampled = (stratified_sample(catalog, [video_ids[i] for i in first], config)
               if 0 < config.sample_above < len(first) else None)
    chosen = sampled if sampled is not None else np.arange(len(first))
    note(f"clustering {len(chosen):,} distinct keyword sets of {len(video_ids):,} videos "
         f"({config.reduce} to {config.reduce_dims}-d, {config.backend})")
    set_labels = np.full(len(first), -1, dtype=np.int64)
    set_probabilities = np.zeros(len(first), dtype=np.float64)
    if len(chosen) >= config.min_cluster_size:  # fewer points than one cluster needs: all noise
        set_labels[chosen], set_probabilities[chosen] = hdbscan_labels(
            clustering_points(points[chosen], config), config.backend, config.min_cluster_size,
            config.min_samples, config.selection)
    if config.assign_noise or sampled is not None:  # what the sample left out joins the nearest centroid
        set_labels = assign_noise(points, set_labels, config.assign_noise_similarity)
    del points
    labels, probabilities = set_labels[inverse], set_probabilities[inverse]
    run.counts["clustered_points"] = int(len(chosen))
    run.counts["distinct_keyword_sets"] = int(len(first))
    mean = vectors.mean(axis=0, keepdims=True)  # the medoids centre cluster by cluster, as the similarity space

    def members_of(idx: list[int]) -> np.ndarray:
        rows = vectors[idx]
        return (centred_rows(rows, mean) if config.centre else rows).astype(np.float64)

    by_cluster: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        if label >= 0:
            by_cluster.setdefault(int(label), []).append(i)
    top = class_tfidf({c: [keywords[video_ids[i]] for i in idx] for c, idx in by_cluster.items()},
                      config.top_keywords)
    cluster_rows = []
    for c, idx in sorted(by_cluster.items()):
        at, mean_similarity = medoid(members_of(idx))
        cluster_rows.append((c, len(idx), top[c], video_ids[idx[at]], round(mean_similarity, 6)))

    members = pa.table({
        "run_id": [run.run_id] * len(video_ids), "video_id": video_ids,
        "cluster_id": pa.array(labels.tolist(), pa.int32()),
        "probability": pa.array(probabilities.tolist(), pa.float64()),
    })
    clusters = pa.table({
        "run_id": [run.run_id] * len(cluster_rows),
        "cluster_id": pa.array([r[0] for r in cluster_rows], pa.int32()),
        "size": pa.array([r[1] for r in cluster_rows], pa.int32()),
        "top_keywords": pa.array([r[2] for r in cluster_rows], pa.list_(pa.string())),
        "medoid_video": [r[3] for r in cluster_rows],
        "mean_similarity": pa.array([r[4] for r in cluster_rows], pa.float64()),
    })
    with catalog.staged(incoming_members=members, incoming_clusters=clusters):
        catalog.insert_staged("cluster_members", "incoming_members", members.column_names)
        catalog.insert_staged("clusters", "incoming_clusters", clusters.column_names)
    assert run.run_id is not None
    result = ClusterResult(run.run_id, video_ids, labels)
    result.quality = source_quality(catalog, video_ids, labels)
    run.counts.update(videos=len(video_ids), clusters=len(cluster_rows), noise=int((labels < 0).sum()),
                      **result.quality)
    return result
