"""The catalog's memory while a batched stage writes vectors, with and without `[catalog] memory_limit`.

`curate embed` commits each batch of vectors as it comes back and lets go of the catalog between
batches; DuckDB checkpoints its write-ahead log into the file now and then, and a checkpoint takes
memory in proportion to the table it writes. This writes N random 384-float vectors into a real
catalog's `embeddings` table exactly that way (256 a batch, `Catalog.released()` between batches),
in a process of its own per setting, and prints the process's peak resident memory as the table
grows: DuckDB's default (80% of RAM) beside each limit given, measured in the same run.

    .venv/bin/python bench/checkpoint_memory.py --rows 1000000 --limits "",256MB,1GB
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

BATCH = 256
DIMENSIONS = 384


def peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        return int(status.read().split("VmHWM:")[1].split()[0]) / 1024


def write(path: Path, rows: int, limit: str, every: int) -> None:
    """One setting, in this process: the peak after every `every` rows, one line each."""
    from curation.core.catalog import Catalog

    rng = np.random.default_rng(0)
    with Catalog(path, memory_limit=limit) as catalog:
        for start in range(0, rows, BATCH):
            vectors = rng.random((BATCH, DIMENSIONS), dtype=np.float32)
            table = pa.table({"model_id": ["bench"] * BATCH,
                              "text_sha256": [f"{n:064x}" for n in range(start, start + BATCH)],
                              "vector": pa.array(list(vectors), pa.list_(pa.float32())),
                              "run_id": ["bench"] * BATCH})
            with catalog.staged(incoming=table), catalog.transaction():
                catalog.insert_staged("embeddings", "incoming", ["model_id", "text_sha256", "vector", "run_id"])
            with catalog.released():  # as embed does while the next batch is encoded
                pass
            if (start + BATCH) % every < BATCH:
                print(f"{start + BATCH} {peak_mb():.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--limits", default=",256MB", help="comma list of memory_limit values ('' = DuckDB's)")
    parser.add_argument("--every", type=int, default=100_000)
    parser.add_argument("--child", nargs=2, metavar=("PATH", "LIMIT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        write(Path(args.child[0]), args.rows, args.child[1], args.every)
        return
    table: dict[str, dict[int, str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for limit in args.limits.split(","):
            path = Path(folder) / f"catalog-{limit or 'default'}.duckdb"
            out = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--every", str(args.every),
                                  "--child", str(path), limit], capture_output=True, text=True, check=True).stdout
            table[limit or "DuckDB's default"] = {int(n): mb for n, mb in (line.split() for line in out.splitlines())}
            print(f"{limit or 'default':>16}: " + ", ".join(f"{n:,} rows {mb} MB" for n, mb in table[
                limit or "DuckDB's default"].items()), flush=True)
    sizes = sorted({n for by in table.values() for n in by})
    print("\npeak MB after      " + "".join(f"{n:>12,}" for n in sizes))
    for name, by in table.items():
        print(f"{name:18s} " + "".join(f"{by.get(n, '-'):>12}" for n in sizes))


if __name__ == "__main__":
    main()
