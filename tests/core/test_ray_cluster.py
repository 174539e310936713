"""Issue 42: Ray as the distributed engine it is, on a real two-node cluster (two `ray start` nodes of one
CPU each on this machine). Both nodes run tasks at the same time; results reach the driver while the job
still runs (streamed, not held until the end); work no node can hold is refused at once; Ctrl-C on a real
`curate embed --executor ray` stops the job, records the run as interrupted and leaves the catalog as
it was."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT

RAY = Path(sys.executable).with_name("ray")
# token authentication on every node and driver, as Ray recommends for a cluster (the head makes the token)
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "PYTHONPATH": str(ROOT)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RAY), *args], env=ENV, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A head node and a worker node, one CPU each, as an operator starts them."""
    address = f"127.0.0.1:{_free_port()}"
    head = _ray("start", "--head", f"--port={address.split(':')[1]}", "--num-cpus=1", "--include-dashboard=false",
                "--disable-usage-stats")
    assert head.returncode == 0, head.stderr
    try:
        worker = _ray("start", f"--address={address}", "--num-cpus=1")
        assert worker.returncode == 0, worker.stderr
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            nodes = _script(address, "import ray; ray.init(address=ADDRESS); "
                                     "print(len([n for n in ray.nodes() if n['Alive']]))")
            if nodes.strip().endswith("2"):
                break
            time.sleep(1)
        yield address
    finally:
        _ray("stop", "--force")


def _script(address: str, code: str, *args: str, timeout: float = 300) -> str:
    out = subprocess.run([sys.executable, "-c", f"ADDRESS = {address!r}\n" + code, *args], env=ENV, cwd=ROOT,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


MAP = textwrap.dedent("""
    import json, os, sys, time
    import pyarrow as pa
    from curation.core.config import ExecutorConfig
    from curation.core.executor import Resources, map_tables

    def work(table):
        import ray, time
        start = time.time()
        time.sleep(1.0)
        return pa.table({"node": [ray.get_runtime_context().get_node_id()], "start": [start], "end": [time.time()]})

    config = ExecutorConfig(kind="ray", address=ADDRESS, shard_dir=sys.argv[1])
    out = []
    for table in map_tables(work, [pa.table({"x": [i]}) for i in range(8)], config, Resources(cpus=1)):
        out += [{**row, "received": time.time()} for row in table.to_pylist()]
    print(json.dumps(out))
    """)


def test_both_nodes_work_at_once_and_results_stream_back(cluster, tmp_path):
    rows = json.loads(_script(cluster, MAP, str(tmp_path / "shards")).strip().splitlines()[-1])
    assert len(rows) == 8
    assert len({r["node"] for r in rows}) == 2  # each node ran tasks
    overlapping = [(a, b) for a in rows for b in rows if a["node"] != b["node"]
                   and a["start"] < b["end"] and b["start"] < a["end"]]
    assert overlapping, rows  # at the same time, not one node idle while the other works
    # streamed: the first result reached the driver before the last task had even finished
    assert min(r["received"] for r in rows) < max(r["end"] for r in rows)
    assert not any((tmp_path / "shards").iterdir())  # the job's shards are gone


def test_work_no_node_can_hold_is_refused_at_once(cluster, tmp_path):
    code = textwrap.dedent("""
        import sys, time
        import pyarrow as pa
        from curation.core.config import ExecutorConfig
        from curation.core.errors import PrerequisiteError
        from curation.core.executor import Resources, map_tables
        start = time.monotonic()
        try:
            list(map_tables(lambda t: t, [pa.table({"x": [1]})], ExecutorConfig(kind="ray", address=ADDRESS,
                 shard_dir=sys.argv[1]), Resources(cpus=1, gpus=1)))
        except PrerequisiteError as exc:
            print(f"{time.monotonic() - start:.1f}", exc)
        """)
    out = _script(cluster, code, str(tmp_path / "shards"))
    seconds, message = out.strip().split(" ", 1)
    assert float(seconds) < 30 and "no node of the Ray cluster can run a worker that needs 1 CPU, 1 GPU" in message


def test_ctrl_c_stops_a_ray_embed_and_leaves_the_catalog_as_it_was(cluster, embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM embeddings")
    config = tmp_path / "ray.toml"
    config.write_text(f'[embedding]\nbatch_size = 8\n[executor]\nkind = "ray"\nshard_dir = "{tmp_path / "shards"}"\n',
                      encoding="utf-8")
    embed = subprocess.Popen([sys.executable, "-m", "curation.cli", "--catalog", str(db), "--config", str(config),
                              "embed"], cwd=ROOT, env={**ENV, "RAY_ADDRESS": cluster}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not any((tmp_path / "shards").glob("*/part-*.parquet")) and time.monotonic() < deadline:
            assert embed.poll() is None, embed.communicate()
            time.sleep(0.2)
        time.sleep(8)  # the job runs on both nodes
        assert embed.poll() is None, "embed finished before Ctrl-C: the test proved nothing"
        pressed = time.monotonic()
        embed.send_signal(signal.SIGINT)
        out, err = embed.communicate(timeout=60)
        stopped = time.monotonic() - pressed
    finally:
        if embed.poll() is None:
            embed.kill()
    assert embed.returncode == 130, err[-2000:]
    assert stopped < 30, stopped
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT status FROM runs WHERE stage = 'embed' ORDER BY started_at DESC LIMIT 1"
                           ).fetchone()[0] == "interrupted"
        assert con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0  # one transaction, rolled back
    # nothing of the job runs on after it: the cluster's tasks all ended
    code = textwrap.dedent("""
        import time, ray
        ray.init(address=ADDRESS)
        time.sleep(5)
        print(ray.available_resources().get("CPU", 0))
        """)
    assert float(_script(cluster, code).strip().splitlines()[-1]) == 2.0  # both CPUs free again
