"""Media normalise throughput: our stage vs the same ffmpeg command lines run bare.

Generates N 10-second clips with ffmpeg's lavfi sources, links and probes them,
then times `curate media normalise` and, in the same run, the identical ffmpeg
command lines run directly with the same number of parallel workers. Prints both
times and the ratio bare/ours (goal >= 0.9: our orchestration costs <= ~10%).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.core.catalog import Catalog  # noqa: E402
from curation.core.config import load_config  # noqa: E402
from curation.ingest import ingest_path  # noqa: E402
from curation.media.normalise import build_command, normalise_media, output_paths, plan_jobs  # noqa: E402
from curation.media.probe import probe_media  # noqa: E402
from curation.media.scan import scan_media  # noqa: E402


def make_clip(path: Path, seconds: int, index: int) -> None:
    size = ("640x360", "360x640", "480x480")[index % 3]
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i",
                    f"testsrc2=size={size}:rate=30", "-f", "lavfi", "-i",
                    f"sine=frequency={200 + index * 10}:sample_rate=44100", "-t", str(seconds),
                    "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", str(path)],
                   check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clips", type=int, default=40)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        clips = work / "clips"
        clips.mkdir()
        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(lambda i: make_clip(clips / f"clip{i:03d}.mp4", args.seconds, i),
                          range(args.clips)))
        print(f"{args.clips} clips of {args.seconds} s generated in {time.perf_counter() - t0:.1f} s")
        config = replace(load_config().media, output_dir=str(work / "ours"), match={"Bench": "stem"})
        corpus, mapping = work / "clips.jsonl", work / "mapping.toml"
        corpus.write_text("".join(f'{{"id": "clip{i:03d}"}}\n' for i in range(args.clips)), encoding="utf-8")
        mapping.write_text('source = "Bench"\nformat = "jsonl"\n[fields]\nnative_id = "id"\n', encoding="utf-8")
        with Catalog(work / "catalog.duckdb") as cat:
            ingest_path(cat, "generic", corpus, mapping=mapping)
            scan_media(cat, clips, "Bench", config)
            probe_media(cat, config, args.workers)
            jobs, _ = plan_jobs(cat, config)
            bare_dir = work / "bare"
            commands = []
            for job in jobs:
                out, poster, frames = output_paths(job.video_id, bare_dir)
                out.parent.mkdir(parents=True, exist_ok=True)
                frames.mkdir(parents=True, exist_ok=True)
                commands.append(build_command(job, config, out, poster, frames))

            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.workers) as pool:
                codes = list(pool.map(lambda c: subprocess.run(c, capture_output=True).returncode,
                                      commands))
            bare = time.perf_counter() - t0
            assert codes == [0] * len(commands), codes

            t0 = time.perf_counter()
            counts = normalise_media(cat, config, args.workers)
            ours = time.perf_counter() - t0
            assert counts["normalised"] == args.clips, counts
        shutil.rmtree(work / "bare", ignore_errors=True)
    print(f"bare ffmpeg, {args.workers} workers:      {bare:7.2f} s")
    print(f"curate media normalise, {args.workers} workers: {ours:7.2f} s")
    print(f"ratio bare/ours: {bare / ours:.3f}x  (goal >= 0.9x)")


if __name__ == "__main__":
    main()
