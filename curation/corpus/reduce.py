"""The two spaces clustering works in.

The *similarity space* holds every video's vector centred (the corpus mean subtracted) and
re-normalised: e5-style vectors crowd into a narrow cone, where unrelated texts still score ~0.82.
Cosines in it decide which cluster a left-out point joins, each cluster's medoid, and how similar
a feed's videos are. It keeps the model's full dimension, so those cosines are the model's own.

The *clustering space* is where HDBSCAN runs: each distinct keyword set once, reduced with UMAP
(cosine, few dimensions, as BERTopic does) fitted with a seed, or with PCA, or not at all.
"""

from __future__ import annotations

import warnings

import numpy as np

from curation.core.config import ClusterConfig
from curation.corpus.embed import centred_rows


def similarity_space(vectors: np.ndarray, centre: bool = True, rows: np.ndarray | None = None,
                     chunk: int = 100_000) -> np.ndarray:
    """The rows `rows` (default: all) of `vectors`, centred by the mean of *all* of them and
    re-normalised: float32, a chunk at a time, with no float64 copy of them all."""
    picked = np.arange(len(vectors)) if rows is None else rows
    if not centre:
        return np.asarray(vectors[picked], dtype=np.float32)
    mean = vectors.mean(axis=0, keepdims=True)
    out = np.empty((len(picked), vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(picked), chunk):
        part = vectors[start:start + chunk] if rows is None else vectors[rows[start:start + chunk]]
        out[start:start + len(part)] = centred_rows(part, mean)
    return out


def distinct_rows(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(the first row of each distinct text, each row's distinct-text index). Identical keyword sets
    are one point: as many copies of a point would crowd the neighbour lists UMAP and HDBSCAN build
    (on the shipped corpus, 14,242 sets are 9,079 texts), and copies must share a cluster anyway."""
    _, first, inverse = np.unique(np.asarray(texts, dtype=object).astype(str), return_index=True,
                                  return_inverse=True)
    return first.astype(np.int64), inverse.astype(np.int64).ravel()


def clustering_points(points: np.ndarray, config: ClusterConfig) -> np.ndarray:
    """`points` (unit rows of the similarity space) in the space HDBSCAN clusters, float64."""
    dims = config.reduce_dims
    if config.reduce == "none" or not dims or dims >= points.shape[1] or len(points) <= dims + 2:
        return np.asarray(points, dtype=np.float64)  # too few points to reduce: nothing to gain
    if config.reduce == "pca":
        from sklearn.decomposition import PCA

        reduced = PCA(n_components=dims, random_state=config.seed).fit_transform(points)
        reduced /= np.maximum(np.linalg.norm(reduced, axis=1, keepdims=True), 1e-12)
        return reduced.astype(np.float64)
    import umap

    with warnings.catch_warnings():
        # a seed makes UMAP single-threaded (it says so), and its spectral start falls back to a
        # random one, with the same seed, when the neighbour graph has many components (it says so too)
        warnings.simplefilter("ignore", UserWarning)
        model = umap.UMAP(n_neighbors=min(config.umap_neighbors, len(points) - 1), n_components=dims,
                          min_dist=0.0, metric="cosine", random_state=config.seed)
        return np.asarray(model.fit_transform(points), dtype=np.float64)
