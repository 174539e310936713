"""`release build` of a public release carried forward, twice: the first embeds every instruction for the
near-duplicate check, the second finds them all in the catalog's vector cache (goal: the second <= 10 s).

    .venv/bin/python bench/release_rebuild.py ../shared/livingscreen-v1

Imports the runner files as 1.0.0, accepts them as inherited, then builds 2.0.0 (--parent 1.0.0,
--exclude-invalid) into one folder and again into another, in a fresh catalog.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.config import load_config  # noqa: E402
from curation.qc.accept import accept_imported  # noqa: E402
from curation.release.build import build_release  # noqa: E402
from curation.release.livingscreen import import_livingscreen  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a release's runner files")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Catalog(Path(tmp) / "c.duckdb") as cat:
        import_livingscreen(cat, args.folder, "1.0.0")
        accept_imported(cat, "1.0.0", "carried forward for the bench")
        times, embedded = [], []
        for where in ("a", "b"):
            settings = replace(load_config().release, dir=str(Path(tmp) / where))
            t0 = time.perf_counter()
            built = build_release(cat, "2.0.0", settings, parent="1.0.0", exclude_invalid=True)
            times.append(time.perf_counter() - t0)
            run = cat.scalar("SELECT run_id FROM runs WHERE stage = 'release-build' ORDER BY started_at DESC LIMIT 1")
            embedded.append(cat.scalar("SELECT count(*) FROM embeddings WHERE run_id = ?", [run]))
        print(f"v2.0.0 carried forward: {built.counts['tasks']} tasks")
        print(f"first build:  {times[0]:6.2f} s, {embedded[0]} instructions embedded")
        print(f"second build: {times[1]:6.2f} s, {embedded[1]} instructions embedded  (goal <= 10 s)")


if __name__ == "__main__":
    main()
