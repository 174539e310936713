"""Where a heavy stage's per-batch work runs: in this process (`local`), or as a Ray Data job
(`ray`) on a local Ray or the cluster `RAY_ADDRESS` names. Both run the *same* function, a
picklable `fn(pa.Table) -> pa.Table` over the stage's pending work; the stage merges what comes
back into the catalog. Ray is an optional extra (`pip install livingscreen-curation[ray]`).

On Ray the pending work is first written as Parquet shards under `[executor] shard_dir` (one
file per batch; on a cluster that folder must be storage every node reads), and the job reads
them back (one task per shard), so the driver does not ship the work through Ray's object store.
The shards are removed when the job has been read back, and a killed job's by the next one.

Work runs as tasks (no actor pool), one per CPU the cluster offers; only a cluster of one node keeps
one CPU back (on a 2-CPU machine a pool that takes every CPU leaves none for reading blocks and hangs).
Results stream back as the tasks finish (Ray Data's streaming iterator), so the stage merges each one
while the job runs and the driver holds one batch at a time; leaving the loop (Ctrl-C, an error)
shuts the job down. Work no node of the cluster can hold is refused before anything is submitted.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.core.config import ExecutorConfig
from curation.core.errors import PrerequisiteError

if TYPE_CHECKING:  # pyarrow is read where a batch is, not at every start of `curate` (a third of its start-up)
    import pyarrow as pa

BatchFn = Callable[["pa.Table"], "pa.Table"]


@dataclass(frozen=True)
class Resources:
    """What one worker of a stage needs, so that a cluster can place it."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_mb: int = 0

    def describe(self) -> str:
        return f"{self.cpus:g} CPU" + (f", {self.gpus:g} GPU" if self.gpus else "") + (
            f", {self.memory_mb:,} MB" if self.memory_mb else "") + " per worker"


def _ray(config: ExecutorConfig) -> Any:
    try:
        import ray
    except ImportError:
        raise PrerequisiteError("[executor] kind = \"ray\" needs Ray: "
                                "pip install 'livingscreen-curation[ray]'") from None
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no calls out from a closed network
        address = os.environ.get("RAY_ADDRESS") or config.address or None
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address is None:
            options["num_cpus"] = config.local_cpus
        ray.init(address=address, **options)
    return ray


def worker_resources(declared: Resources | None, config: ExecutorConfig, *, gpu_capable: bool = False) -> Resources:
    """A stage's declared needs, with the GPUs the executor grants a stage that can use one."""
    declared = declared or Resources()
    if gpu_capable and config.gpus_per_worker > 0:
        return replace(declared, gpus=config.gpus_per_worker)
    return declared


def _on_shards(fn: BatchFn, shards: pa.Table) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa.concat_tables([fn(pq.read_table(path)) for path in shards.column("shard").to_pylist()])


_SHARD_FOLDER = re.compile(r"^\w+-(?P<host>.+)-(?P<pid>\d+)-\w+$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_stale_shards(root: Path) -> list[Path]:
    """Remove the shard folders a killed job of this host left (its process is gone); those of
    running jobs and of other hosts sharing the folder stay. Returns what was removed."""
    removed: list[Path] = []
    host = socket.gethostname()
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        match = _SHARD_FOLDER.match(folder.name)
        if folder.is_dir() and match and match["host"] == host and not _alive(int(match["pid"])):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def map_tables(fn: BatchFn, tables: Iterable[pa.Table], config: ExecutorConfig, resources: Resources,
               processes: int = 1) -> Iterator[pa.Table]:
    """`fn` over every table: in order here (in `processes` worker processes, if more than one),
    as Ray tasks there (results in any order). `tables` may be lazy: each is read when it is
    worked on here, or written to its shard there. Either way, shard folders that killed jobs of
    this host left are removed first."""
    root = Path(config.shard_dir)
    sweep_stale_shards(root)
    tables = iter(tables)
    first = next(tables, None)
    if first is None:
        return
    tables = itertools.chain([first], tables)
    if config.kind == "local":
        if processes > 1:
            # spawned, not forked: the catalog's DuckDB threads must not be copied mid-flight
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(processes, mp_context=context) as pool:
                yield from pool.map(fn, tables)
            return
        for table in tables:
            yield fn(table)
        return
    ray = _ray(config)
    parallel = _parallel(ray, resources)
    options: dict[str, Any] = {"num_cpus": resources.cpus, "concurrency": parallel}
    if resources.gpus:
        options["num_gpus"] = resources.gpus
    if resources.memory_mb:
        options["memory"] = resources.memory_mb * 1024 * 1024
    root.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"\W", "_", getattr(getattr(fn, "func", fn), "__name__", "batch"))
    # named by host and process, so that a later job can tell a killed job's folder from a live one
    shards = Path(tempfile.mkdtemp(prefix=f"{name}-{socket.gethostname()}-{os.getpid()}-", dir=root)).resolve()
    shards.chmod(0o755)  # mkdtemp's 0700 would shut out workers running as another user
    import pyarrow.parquet as pq

    try:
        paths = []
        for number, table in enumerate(tables):
            paths.append(str(shards / f"part-{number:05d}.parquet"))
            pq.write_table(table, paths[-1])
        # one task per shard, which reads its file and runs `fn` on it (Ray's read_parquet
        # lists files through fsspec's HTTP module, which needs aiohttp)
        dataset = ray.data.from_items([{"shard": path} for path in paths], override_num_blocks=len(paths))
        dataset = dataset.map_batches(partial(_on_shards, fn), batch_format="pyarrow", batch_size=1, **options)
        results = iter(dataset.iter_batches(batch_format="pyarrow", batch_size=None, prefetch_batches=1))
        try:
            yield from results
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # stops the job now, not when the iterator is collected
    finally:
        shutil.rmtree(shards, ignore_errors=True)


def _parallel(ray: Any, resources: Resources) -> int:
    """Tasks at a time: one per CPU the cluster's live nodes offer (one kept back on a cluster of one node).
    Work that no node can hold (more CPUs, GPUs or memory per task than any node has) is refused now: Ray
    would wait for such a node for ever."""
    nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
    needs = {"CPU": resources.cpus, "GPU": resources.gpus, "memory": resources.memory_mb * 1024 * 1024}
    if not any(all(node.get(k, 0.0) >= v for k, v in needs.items() if v) for node in nodes):
        offered = "; ".join(f"{node.get('CPU', 0):g} CPU, {node.get('GPU', 0):g} GPU, "
                            f"{node.get('memory', 0) / 2**20:,.0f} MB" for node in nodes) or "no live node"
        raise PrerequisiteError(f"no node of the Ray cluster can run a worker that needs {resources.describe()} "
                                f"(its nodes: {offered}): lower the stage's needs or add a node that has them")
    slots = sum(int(node.get("CPU", 0.0) // max(resources.cpus, 1e-9)) for node in nodes)
    return max(1, slots - 1 if len(nodes) == 1 else slots)
