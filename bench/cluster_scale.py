"""`curate cluster` and `curate feeds build` past what this machine can embed: N videos whose
vectors come from a catalog that was embedded for real.

Embedding a million texts takes most of an hour here (docs/scale.md), so this bench grows
a kept catalog instead (`bench/scale.py --keep DIR` writes one): each of the N videos copies
a randomly chosen real video's keyword set, made distinct by its id, and that video's vector
plus a little Gaussian noise, re-normalised. The vectors keep the real ones' cluster
structure; the bench measures the stages' time and memory, not clustering quality.

Two baselines are measured in the same run: the same stages on the kept catalog itself (the
growth exponent between the sizes), and `cluster` with the previous defaults (PCA to 32
dimensions, HDBSCAN at min_cluster_size 2; `--previous`) at both sizes: the goal is the defaults
within 1.2x of the previous defaults' time at 1M. Prints time and peak memory of each.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cluster import PREVIOUS  # noqa: E402
from scale import exponent, run_stage  # noqa: E402

from curation.core.catalog import Catalog  # noqa: E402

CHUNK = 200_000


def grow_catalog(kept: Path, out: Path, videos: int, noise: float, seed: int) -> str:
    """A copy of `kept` holding `videos` videos as described above; returns the model id."""
    shutil.copy(kept, out)
    con = duckdb.connect(str(out))
    try:
        model_id = con.execute("SELECT any_value(model_id) FROM embeddings").fetchall()[0][0]
        base = con.sql("""SELECT k.video_id, k.keywords, k.origins, k.text, e.vector FROM keyword_sets k
                JOIN embeddings e ON e.text_sha256 = k.text_sha256 AND e.model_id = ?
                ORDER BY k.video_id""", params=[model_id]).to_arrow_table()
        vectors = base.column("vector").combine_chunks().flatten().to_numpy().reshape(base.num_rows, -1)
        con.register("base", base.drop_columns(["vector"]).append_column("b", pa.array(np.arange(base.num_rows))))
        con.execute("CREATE TEMP TABLE template AS SELECT * FROM videos")
        for table in ("cluster_members", "clusters", "embeddings", "keyword_sets", "videos"):
            con.execute(f"DELETE FROM {table}")
        rng = np.random.default_rng(seed)
        for at in range(0, videos, CHUNK):
            n = min(CHUNK, videos - at)
            pick = rng.integers(0, base.num_rows, n)
            noisy = vectors[pick] + rng.normal(0, noise, (n, vectors.shape[1])).astype(np.float32)
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            chunk = pa.table({
                "video_id": [f"Grown/{i}" for i in range(at, at + n)], "b": pa.array(pick),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(noisy.ravel()), vectors.shape[1])
                .cast(pa.list_(pa.float32()))})
            con.register("chunk", chunk)
            con.execute("""CREATE OR REPLACE TEMP TABLE grown AS
                    SELECT c.video_id, c.vector, b.video_id AS base_id, b.keywords, b.origins,
                           b.text || ' ' || c.video_id AS text FROM chunk c JOIN base b USING (b)""")
            con.execute("""INSERT INTO videos BY NAME SELECT t.* REPLACE (g.video_id AS video_id, 'Grown' AS source,
                    g.video_id[7:] AS native_id) FROM grown g JOIN template t ON t.video_id = g.base_id""")
            con.execute("""INSERT INTO keyword_sets (video_id, keywords, origins, text, text_sha256, run_id)
                    SELECT video_id, keywords, origins, text, sha256(text), 'grown' FROM grown""")
            con.execute("""INSERT INTO embeddings (model_id, text_sha256, vector, run_id)
                    SELECT ?, sha256(text), vector, 'grown' FROM grown""", [model_id])
            con.unregister("chunk")
            print(f"  grown: {at + n:,} of {videos:,} videos", flush=True)
        con.execute("CHECKPOINT")
        return model_id
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", type=Path, required=True, help="a kept catalog with keyword sets and embeddings")
    parser.add_argument("--model", required=True, help="the [embedding] model that catalog was embedded with")
    parser.add_argument("--videos", type=int, default=1_000_000)
    parser.add_argument("--noise", type=float, default=0.02, help="standard deviation added to each vector value")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--feeds", type=int, default=50, help="feeds to build after clustering (0: none)")
    args = parser.parse_args()
    if not args.catalog.exists():
        sys.exit(f"{args.catalog} does not exist: keep one with `bench/scale.py --keep DIR`")
    stages = [["cluster"]] + ([["feeds", "build", "--n", str(args.feeds), "--seed", "7"]] if args.feeds else [])
    previous = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in PREVIOUS.items())
    with tempfile.TemporaryDirectory(dir=ROOT / "build" if (ROOT / "build").exists() else None) as tmp:
        work = Path(tmp)
        config = work / "bench.toml"
        config.write_text(f'[embedding]\nmodel = "{args.model}"\n', encoding="utf-8")
        previous_config = work / "previous.toml"
        previous_config.write_text(f'[embedding]\nmodel = "{args.model}"\n[cluster]\n{previous}\n', encoding="utf-8")
        kept = work / "kept.duckdb"
        shutil.copy(args.catalog, kept)
        with Catalog(kept) as cat:  # migrated now, not inside the first timed stage
            base_n = cat.scalar("SELECT count(*) FROM keyword_sets")
            # no earlier clustering to reuse, no earlier feeds
            cat.con.execute("DELETE FROM feeds; DELETE FROM cluster_members; DELETE FROM clusters; "
                            "DELETE FROM runs WHERE stage IN ('cluster', 'feeds')")
        grown = work / "grown.duckdb"
        print(f"growing {args.catalog.name} ({base_n:,} keyword sets) to {args.videos:,} videos")
        grow_catalog(kept, grown, args.videos, args.noise, args.seed)
        results = {}
        for label, catalog in (("kept", kept), ("grown", grown)):
            results[label, "previous"] = run_stage(["cluster"], catalog, previous_config)
            print(f"  {label} cluster, previous defaults: {results[label, 'previous'][0]:.1f} s, "
                  f"{results[label, 'previous'][1]:,.0f} MB", flush=True)
            for stage in stages:
                results[label, stage[0]] = run_stage(stage, catalog, config)
                seconds, mb = results[label, stage[0]]
                print(f"  {label} {stage[0]}: {seconds:.1f} s, {mb:,.0f} MB", flush=True)
    print(f"\n| stage | {base_n:,} (kept) | {args.videos:,} (grown) | growth exponent |\n|---|---|---|---|")
    for name, stage in [("cluster, previous defaults", ["previous"]), *((" ".join(s[:2]), s) for s in stages)]:
        (t1, m1), (t2, m2) = results["kept", stage[0]], results["grown", stage[0]]
        print(f"| {name} | {t1:.1f} s, {m1:,.0f} MB | {t2:.1f} s, {m2:,.0f} MB | "
              f"{exponent(t1, t2, base_n, args.videos):.2f} |")
    ratio = results["grown", "cluster"][0] / results["grown", "previous"][0]
    print(f"\ncluster at {args.videos:,}: {ratio:.2f}x the previous defaults' time (goal <= 1.2x)")


if __name__ == "__main__":
    main()
