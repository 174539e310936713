"""The executor's choices that do not need Ray running (Ray runs are in tests/corpus and tests/media)."""

import pyarrow as pa
import pytest

from curation.core.config import ExecutorConfig, load_config
from curation.core.errors import ConfigError
from curation.core.executor import Resources, map_tables, worker_resources


def test_a_gpu_is_asked_for_only_by_a_stage_that_can_use_one():
    declared = Resources(cpus=1.0, memory_mb=1024)
    granted = ExecutorConfig(kind="ray", gpus_per_worker=0.5)
    assert worker_resources(declared, granted, gpu_capable=True) == Resources(cpus=1.0, gpus=0.5, memory_mb=1024)
    assert worker_resources(declared, granted, gpu_capable=False) == declared
    assert worker_resources(declared, ExecutorConfig(kind="ray"), gpu_capable=True).gpus == 0
    assert "0.5 GPU" in worker_resources(declared, granted, gpu_capable=True).describe()


def test_the_local_executor_maps_in_order_and_writes_no_shards(tmp_path):
    tables = [pa.table({"x": [i, i + 1]}) for i in range(0, 6, 2)]
    config = ExecutorConfig(kind="local", shard_dir=str(tmp_path / "shards"))
    out = list(map_tables(lambda t: t.append_column("y", pa.array([v * 2 for v in t["x"].to_pylist()])),
                          tables, config, Resources()))
    assert [t["y"].to_pylist() for t in out] == [[0, 2], [4, 6], [8, 10]]
    assert not (tmp_path / "shards").exists()


def test_executor_settings_are_checked(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[executor]\nkind = "spark"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="kind"):
        load_config(bad)


def test_a_killed_jobs_shard_folder_is_swept_and_no_other(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    from curation.core.executor import sweep_stale_shards

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that no longer exists, like a killed job's driver
    host = socket.gethostname()
    folders = {
        "stale": tmp_path / f"encode_batch-{host}-{gone.pid}-a1b2c3",
        "running": tmp_path / f"encode_batch-{host}-{os.getpid()}-d4e5f6",
        "other host": tmp_path / f"encode_batch-another-node-{gone.pid}-g7h8i9",
        "not a shard folder": tmp_path / "notes",
    }
    for folder in folders.values():
        folder.mkdir()
        (folder / "part-00000.parquet").write_bytes(b"shard")
    assert sweep_stale_shards(tmp_path) == [folders["stale"]]
    assert [name for name, folder in folders.items() if folder.exists()] == ["running", "other host",
                                                                          "not a shard folder"]
    assert sweep_stale_shards(tmp_path / "absent") == []
