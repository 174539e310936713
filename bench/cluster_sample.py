"""Clustering a sample and assigning the rest (the `[cluster] sample_above` path) against
clustering every point, on a catalog where both run (default: the `make feeds` catalog).

Prints, per sample share: the time of each path, the ratio between them, and how the two
partitions agree (adjusted Rand index and NMI over all videos, noise counted as one more
label; and the share of videos that are noise in each).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.config import load_config  # noqa: E402
from curation.corpus.cluster import cluster_videos  # noqa: E402


def main() -> None:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog", type=Path, default=ROOT / "build" / "catalog.duckdb")
    parser.add_argument("--shares", type=float, nargs="+", default=[0.5, 0.25, 0.1])
    parser.add_argument("--model", default="", help="the embedding model of the catalog (default: configured)")
    args = parser.parse_args()
    if not args.catalog.exists():
        sys.exit(f"{args.catalog} does not exist: run `make feeds` first")
    config = load_config()
    model = args.model or config.embedding.model
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "catalog.duckdb"
        shutil.copy(args.catalog, work)
        with Catalog(work) as cat:
            t0 = time.perf_counter()
            full = cluster_videos(cat, replace(config.cluster, sample_above=0, min_samples=1), model)
            full_s = time.perf_counter() - t0
            n = len(full.video_ids)
            print(f"{n:,} keyword sets: every point clustered in {full_s:.1f} s, "
                  f"{int((full.labels < 0).sum()) / n:.1%} noise")
            for share in args.shares:
                size = max(2, int(n * share))
                sampled_config = replace(config.cluster, sample_above=1, sample_size=size, min_samples=1)
                t0 = time.perf_counter()
                sampled = cluster_videos(cat, sampled_config, model)
                took = time.perf_counter() - t0
                assert sampled.video_ids == full.video_ids
                a, b = np.asarray(full.labels), np.asarray(sampled.labels)
                print(f"sample {share:.0%} ({size:,}): {took:.1f} s ({took / full_s:.2f}x the full run); "
                      f"ARI {adjusted_rand_score(a, b):.3f}, NMI {normalized_mutual_info_score(a, b):.3f}; "
                      f"noise {float((b < 0).mean()):.1%}")


if __name__ == "__main__":
    main()
