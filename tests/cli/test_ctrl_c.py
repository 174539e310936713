"""Ctrl-C as a person presses it at a terminal: SIGINT to the command's whole process group, while a
real command works. One line on stderr names the run it stopped, the exit code is 130, the run is
recorded `interrupted`, and running the command again finishes the work."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import duckdb

from tests.cli.test_cli import curate
from tests.conftest import ROOT
from tests.release.test_livingscreen import RELEASE, write_release

NO_RUN = "error: stopped by the user (no run was under way, so none is recorded as interrupted)"


def _start(*args: str) -> subprocess.Popen:
    # a session of its own, so that the signal reaches the command's process group as a terminal's would
    return subprocess.Popen([sys.executable, "-m", "curation.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _ctrl_c(proc: subprocess.Popen) -> tuple[int, list[str]]:
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, [line for line in err.splitlines() if line.strip()]


def _latest_run(db: Path, stage: str) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        run_id, status, error, counts = con.execute(
            "SELECT run_id, status, error, counts FROM runs WHERE stage = ? ORDER BY started_at DESC LIMIT 1",
            [stage]).fetchone()
    return {"run_id": run_id, "status": status, "error": error, "counts": counts}


def test_ctrl_c_during_embed_names_the_run_and_a_rerun_finishes(embedded_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, db)
    with duckdb.connect(str(db)) as con:  # 24 batches of work left, a progress line every 2
        texts = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
        con.execute("DELETE FROM embeddings WHERE text_sha256 IN (SELECT text_sha256 FROM embeddings "
                    "ORDER BY text_sha256 LIMIT 48)")
    config = tmp_path / "small-batches.toml"
    config.write_text("[embedding]\nbatch_size = 2\n", encoding="utf-8")
    proc = _start("--catalog", str(db), "--config", str(config), "embed")
    assert proc.stderr is not None
    seen = []
    # the first progress line comes from inside the run: its row says `running`, some batches are committed
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("embed ") and "/" in line:
            break
    assert proc.poll() is None, "the embed ended before it could be stopped: " + "".join(seen)
    code, lines = _ctrl_c(proc)
    run = _latest_run(db, "embed")
    assert code == 130 and (run["status"], run["error"]) == ("interrupted", "stopped by the user"), lines
    assert lines[-1] == f"error: stopped by the user (run {run['run_id']} interrupted; re-run to finish)", lines
    assert not [line for line in lines if "Traceback" in line or "KeyboardInterrupt" in line], lines
    with duckdb.connect(str(db), read_only=True) as con:
        kept = con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    assert texts - 48 < kept < texts  # the batches committed before Ctrl-C stay

    again = curate("--catalog", str(db), "--config", str(config), "embed")
    assert again.returncode == 0, again.stderr
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == texts
    rerun = _latest_run(db, "embed")
    assert rerun["status"] == "ok" and rerun["run_id"] != run["run_id"]
    assert f'"texts_encoded": {texts - kept}' in rerun["counts"]  # only what the stopped run had not done


class SlowFile:
    """A named pipe in place of a file on a slow disk: a command reading it waits until the pipe closes.
    `opened` is set once the command has opened it to read, i.e. once it is at that point of its work."""

    def __init__(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        self.path, self.opened, self.done = path, threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)
        self.thread.start()

    def _hold(self) -> None:
        with self.path.open("w", encoding="utf-8"):  # returns once a reader has opened the pipe
            self.opened.set()
            self.done.wait(300)

    def close(self) -> None:
        self.done.set()
        self.thread.join(10)
        self.path.unlink()


def test_ctrl_c_while_a_run_reads_its_input_then_the_rerun_imports(tmp_path):
    db, folder = tmp_path / "c.duckdb", write_release(tmp_path / "v1")
    gui = folder / "gui_action.json"
    content = gui.read_text(encoding="utf-8")
    slow = SlowFile(gui)
    proc = _start("--catalog", str(db), "release", "import-livingscreen", str(folder), "--version", "1.0.0")
    assert slow.opened.wait(120), "the import never opened its input"
    code, lines = _ctrl_c(proc)
    slow.close()
    run = _latest_run(db, "release-import-livingscreen")
    assert code == 130 and (run["status"], run["error"]) == ("interrupted", "stopped by the user")
    assert lines == [f"error: stopped by the user (run {run['run_id']} interrupted; re-run to finish)"]

    gui.write_text(content, encoding="utf-8")
    again = curate("--catalog", str(db), "release", "import-livingscreen", str(folder), "--version", "1.0.0")
    assert again.returncode == 0, again.stderr
    assert _latest_run(db, "release-import-livingscreen")["status"] == "ok"
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM tasks").fetchone()[0] == sum(len(v) for v in RELEASE.values())


def test_ctrl_c_before_any_run_says_none_was_interrupted(tmp_path):
    """`qc validate --livingscreen DIR` checks files without a catalog: no run to name."""
    folder = write_release(tmp_path / "v1")
    slow = SlowFile(folder / "gui_action.json")
    proc = _start("qc", "validate", "--livingscreen", str(folder))
    assert slow.opened.wait(120), "validate never opened its input"
    code, lines = _ctrl_c(proc)
    slow.close()
    assert (code, lines) == (130, [NO_RUN])
