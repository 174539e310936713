"""Clusters of videos by keyword set: HDBSCAN over centred, reduced embeddings.

e5-style vectors crowd into a narrow cone (unrelated texts still score ~0.82), so
the corpus mean is subtracted and the vectors re-normalised before anything else;
PCA then cuts the dimension, which makes HDBSCAN several times faster at a small
cost in quality (measured in DESIGN/README figures). Noise points join no cluster.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from curation.catalog import Catalog
from curation.embed import load_vectors, model_id_for
from curation.progress import note


@dataclass
class ClusterResult:
    run_id: str
    video_ids: list[str]
    labels: np.ndarray
    reused: bool = False
    quality: dict[str, Any] = field(default_factory=dict)


def centre(vectors: np.ndarray, dims: int | None = None, seed: int = 0) -> np.ndarray:
    """Subtract the mean, re-normalise, optionally reduce with PCA and re-normalise."""
    centred = vectors - vectors.mean(axis=0, keepdims=True)
    centred /= np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
    if dims and dims < centred.shape[1] and len(centred) > dims:
        from sklearn.decomposition import PCA

        centred = PCA(n_components=dims, random_state=seed).fit_transform(centred)
        centred /= np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
    return centred.astype(np.float64)


def hdbscan_labels(points: np.ndarray, backend: str, min_cluster_size: int,
                   min_samples: int) -> tuple[np.ndarray, np.ndarray]:
    if backend == "hdbscan":
        import hdbscan

        model = hdbscan.HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples,
                                core_dist_n_jobs=1)
    elif backend == "sklearn":
        from sklearn.cluster import HDBSCAN

        model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples, copy=True)
    elif backend == "fast-hdbscan":
        import fast_hdbscan

        model = fast_hdbscan.HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min_samples)
    else:
        raise ValueError(f"unknown cluster backend {backend!r}: hdbscan, sklearn or fast-hdbscan")
    labels = model.fit_predict(points)
    return np.asarray(labels, dtype=np.int64), np.asarray(model.probabilities_, dtype=np.float64)


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


def _fingerprint(video_ids: list[str], hashes: list[str], params: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    for vid, sha in zip(video_ids, hashes, strict=True):
        digest.update(f"{vid}\t{sha}\n".encode())
    return digest.hexdigest()


def latest_cluster_run(catalog: Catalog) -> str | None:
    row = catalog.con.execute("SELECT run_id FROM runs WHERE stage = 'cluster' AND status = 'ok' "
                              "ORDER BY finished_at DESC LIMIT 1").fetchone()
    return row[0] if row else None


def run_cluster(catalog: Catalog, config: dict[str, Any], model_spec: str) -> ClusterResult:
    model_id = model_id_for(model_spec)
    video_ids, vectors = load_vectors(catalog, model_id)
    if not video_ids:
        raise ValueError(f"no embeddings for {model_id}: run `curate keywords` and `curate embed`")
    params = {"model": model_id, "backend": config.get("backend", "hdbscan"),
              "min_cluster_size": int(config["min_cluster_size"]),
              "min_samples": int(config["min_samples"]), "centre": bool(config.get("centre", True)),
              "reduce_dims": int(config.get("reduce_dims") or 0),
              "top_keywords": int(config["top_keywords"])}
    rows = catalog.con.execute("SELECT video_id, text_sha256, keywords FROM keyword_sets "
                               "WHERE video_id IN (SELECT unnest(?)) ORDER BY video_id",
                               [video_ids]).fetchall()
    keywords = {r[0]: list(r[2] or []) for r in rows}
    fingerprint = _fingerprint(video_ids, [r[1] for r in rows], params)
    previous = catalog.con.execute(
        "SELECT run_id FROM runs WHERE stage = 'cluster' AND status = 'ok' "
        "AND json_extract_string(params, '$.fingerprint') = ? ORDER BY finished_at DESC LIMIT 1",
        [fingerprint]).fetchone()
    if previous:
        members = catalog.con.execute("SELECT video_id, cluster_id FROM cluster_members "
                                      "WHERE run_id = ? ORDER BY video_id", [previous[0]]).fetchall()
        return ClusterResult(previous[0], [m[0] for m in members],
                             np.array([m[1] for m in members]), reused=True)

    points = centre(vectors, params["reduce_dims"]) if params["centre"] else vectors.astype(float)
    note(f"clustering {len(video_ids):,} keyword sets ({points.shape[1]}-d, {params['backend']})")
    labels, probabilities = hdbscan_labels(points, params["backend"], params["min_cluster_size"],
                                           params["min_samples"])
    full = centre(vectors) if params["centre"] else vectors.astype(float)
    by_cluster: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        if label >= 0:
            by_cluster.setdefault(int(label), []).append(i)
    top = class_tfidf({c: [keywords[video_ids[i]] for i in idx] for c, idx in by_cluster.items()},
                      params["top_keywords"])
    cluster_rows = []
    for c, idx in sorted(by_cluster.items()):
        sims = full[idx] @ full[idx].T
        mean_to_others = (sims.sum(axis=1) - 1.0) / max(len(idx) - 1, 1)
        medoid = video_ids[idx[int(np.argmax(mean_to_others))]]
        cluster_rows.append((c, len(idx), top[c], medoid,
                             round(float(np.clip(mean_to_others.mean(), -1.0, 1.0)), 6)))

    run = catalog.start_run("cluster", {**params, "fingerprint": fingerprint})
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
    with catalog.staged(incoming_members=members, incoming_clusters=clusters), catalog.transaction():
        catalog.con.execute("INSERT INTO cluster_members SELECT * FROM incoming_members")
        catalog.con.execute("INSERT INTO clusters SELECT * FROM incoming_clusters")
        result = ClusterResult(run.run_id, video_ids, labels)
        result.quality = cluster_quality(catalog, video_ids, labels)
        run.counts = {"videos": len(video_ids), "clusters": len(cluster_rows),
                      "noise": int((labels < 0).sum()), **result.quality}
        catalog.finish_run(run)
    return result


def cluster_quality(catalog: Catalog, video_ids: list[str], labels: np.ndarray) -> dict[str, Any]:
    """NMI/ARI against KuaiRec's human categories (noise excluded, noise share beside
    them) and how many FakeSV events are split across clusters."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    label_of = dict(zip(video_ids, labels.tolist(), strict=True))
    quality: dict[str, Any] = {}
    for level in ("second", "third"):
        truth = catalog.con.execute(
            f"SELECT video_id, json_extract_string(extra, '$.{level}_level_category_name') "
            "FROM videos WHERE source = 'KuaiRec'").fetchall()
        pairs = [(t, label_of[v]) for v, t in truth if t and v in label_of]
        if not pairs:
            continue
        kept = [(t, lab) for t, lab in pairs if lab >= 0]
        quality[f"kuairec_{level}_noise"] = round(1 - len(kept) / len(pairs), 4)
        if len(kept) > 1:
            quality[f"kuairec_{level}_nmi"] = round(float(normalized_mutual_info_score(
                [t for t, _ in kept], [lab for _, lab in kept])), 4)
            quality[f"kuairec_{level}_ari"] = round(float(adjusted_rand_score(
                [t for t, _ in kept], [lab for _, lab in kept])), 4)
    events = catalog.con.execute("SELECT video_id, keywords[1] FROM videos "
                                 "WHERE source = 'FakeSV' AND keywords IS NOT NULL").fetchall()
    if events:
        clusters_of: dict[str, set[int]] = {}
        for vid, event in events:
            if vid in label_of and label_of[vid] >= 0:
                clusters_of.setdefault(event, set()).add(label_of[vid])
        quality["fakesv_events"] = len({e for _, e in events})
        quality["fakesv_events_clustered"] = len(clusters_of)
        quality["fakesv_events_split"] = sum(1 for s in clusters_of.values() if len(s) > 1)
    return quality
