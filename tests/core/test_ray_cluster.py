"""Issue 42: Ray as the distributed engine it is, on a real two-node cluster (two `ray start` nodes of one
CPU each on this machine). Both nodes run tasks at the same time; results reach the driver while the job
still runs (streamed, not held until the end); work no node can hold is refused at once; Ctrl-C on a real
`curate embed --executor ray` stops the job, records the run as interrupted and keeps the batches it
committed. The cluster is started by the commands docs/deployment.md gives a team."""

from __future__ import annotations

import json
import os
import re
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


def documented_commands() -> dict[str, str]:
    """The shell lines of docs/deployment.md's Ray section, by where they run: head, worker, driver."""
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    section = text.split("## Running the heavy stages on a Ray cluster", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block, "docs/deployment.md's Ray section lost its commands"
    parts: dict[str, list[str]] = {}
    where = ""
    for line in block[1].splitlines():
        if line.startswith("# on "):
            where = "head" if "head" in line else "driver" if "driver" in line else "worker"
        elif line.strip():
            parts.setdefault(where, []).append(line)
    assert set(parts) == {"head", "worker", "driver"}, parts
    return {k: "\n".join(v) for k, v in parts.items()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[str]:
    """A head node and a worker node, one CPU each, started by the commands docs/deployment.md gives (this
    machine's address and one CPU each put in; a home of its own, so the head's token is the test's)."""
    home = tmp_path_factory.mktemp("ray-home")
    address = f"127.0.0.1:{_free_port()}"
    commands = documented_commands()

    def run(where: str) -> None:
        script = (commands[where].replace("head.example.org:6379", address)
                  .replace("--port=6379", f"--port={address.split(':')[1]}")
                  .replace("--num-cpus=4", "--num-cpus=1").replace(".venv/bin/", f"{ROOT}/.venv/bin/"))
        done = subprocess.run(["bash", "-euc", script], cwd=home, env={**ENV, "HOME": str(home)},
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"{where}: {done.stderr[-3000:]}"

    try:
        run("head")
        ENV["RAY_AUTH_TOKEN"] = (home / "ray-token").read_text(encoding="utf-8").strip()
        assert ENV["RAY_AUTH_TOKEN"], "the head made no token"
        run("worker")
        driver = commands["driver"]
        assert "RAY_ADDRESS=head.example.org:6379" in driver and "--executor ray" in driver  # what the tests run
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
        ENV.pop("RAY_AUTH_TOKEN", None)


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


def test_ctrl_c_stops_a_ray_embed_which_keeps_the_batches_it_merged(cluster, embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM embeddings")
        pending = con.execute("SELECT count(DISTINCT text_sha256) FROM keyword_sets").fetchone()[0]
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
        run_id, status = con.execute("SELECT run_id, status FROM runs WHERE stage = 'embed' "
                                     "ORDER BY started_at DESC LIMIT 1").fetchone()
        assert status == "interrupted"
        kept, theirs = con.execute("SELECT count(*), count(*) FILTER (run_id = ?) FROM embeddings",
                                   [run_id]).fetchone()
        assert kept == theirs < pending  # stopped part-way; what it merged is its own, each batch committed
    # nothing of the job runs on after it: the cluster's tasks all ended
    code = textwrap.dedent("""
        import time, ray
        ray.init(address=ADDRESS)
        time.sleep(5)
        print(ray.available_resources().get("CPU", 0))
        """)
    assert float(_script(cluster, code).strip().splitlines()[-1]) == 2.0  # both CPUs free again
