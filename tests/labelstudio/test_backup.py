"""A team backs up Label Studio's data folder while it runs, loses the server's later work, restores the backup
and carries on (issue 30): the restore refuses a running server, keeps the folder it replaces, the accounts log
in again, the export names the tasks the backup lacks and sends them again, and every annotation imported
before stays in the catalog. On a Label Studio server of the test's own (the restore replaces its data), run
as the team runs it: `make labelstudio` (Label Studio and the gate) stopped by Ctrl-C as a terminal sends it,
to the whole foreground group, and `make labelstudio-backup` with its default folder (issue 43). Its data folder
starts as a fresh server leaves it: a copy of the session server's, saved right after that server's first start
(the session's start already proves a first start migrates an empty folder, with the admin and token preset)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tarfile

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.services import free_port
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.backup import DATABASE, running_on
from curation.labelstudio.backup import restore as restore_folder
from tests.annotate.test_labelstudio import result
from tests.labelstudio import ADMIN, PASSWORD, login
from tests.qc.helpers import ROOT, curate_in

pytestmark = pytest.mark.servers


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def test_a_backup_restored_after_the_server_lost_work(clustered_catalog_file, label_studio, tmp_path):
    data, media, state = tmp_path / "ls" / "data", tmp_path / "served" / "media", tmp_path / "state"
    media.mkdir(parents=True)
    data.parent.mkdir()
    assert restore_folder(label_studio["fresh_backup"], data) is None  # fresh: its admin, the session's token
    token, port, gate_port, password = label_studio["token"], free_port(), free_port(), "Zora-" + secrets.token_hex(6)
    url = f"http://127.0.0.1:{port}"
    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token, "LABEL_STUDIO_DATA_DIR": str(data),
           "LABEL_STUDIO_ANNOTATOR_PASSWORD": password}
    team = {**os.environ, **env, "LABEL_STUDIO_USERNAME": ADMIN, "LABEL_STUDIO_PASSWORD": PASSWORD,
            "XDG_STATE_HOME": str(state)}
    make = ["make", "--no-print-directory", f"LS_DATA={data}", f"LABEL_STUDIO_PORT={port}", f"LS_GATE_PORT={gate_port}"]

    def start() -> subprocess.Popen:
        """`make labelstudio` in a process group of its own, as a terminal runs a foreground job."""
        proc = subprocess.Popen([*make, "labelstudio"], cwd=ROOT, env=team, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("Label Studio gate ready at"):
                return proc
        raise AssertionError(f"make labelstudio ended before the gate was ready: {''.join(seen)[-3000:]}")

    def stop(proc: subprocess.Popen) -> None:
        """Ctrl-C: SIGINT to the foreground group. `make` returns only once both servers are gone."""
        if proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=90)
        assert "stopped the gate and Label Studio" in out, out[-2000:]
        assert not answers(port) and not answers(gate_port), "a server still answers after Ctrl-C"
        assert running_on(data) == [] and not (data / "gate.json").exists()

    catalog = tmp_path / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, catalog)
    with Catalog(catalog) as cat:
        build_feed_set(cat, load_config().feeds, 3, seed=61)

    def curate(*args: str) -> subprocess.CompletedProcess:
        return curate_in(tmp_path, "--catalog", str(catalog), *args, env=env)

    def annotate_feed(feed_id: str) -> None:
        with Catalog(catalog, read_only=True) as cat:
            task = cat.scalar("SELECT ls_task_id FROM ls_tasks WHERE feed_id = ?", [feed_id])
        written = login(url, "zora@annotators.local", password).post(
            f"{url}/api/tasks/{task}/annotations/", json={"result": result(
                tier="L1", subcategory="gui_like", instruction="给第一个视频点赞", platform_state="like 1")})
        assert written.status_code == 201, written.text

    server = start()
    try:
        assert curate("annotate", "export", "--add", "zora").returncode == 0
        annotate_feed("feed-61-0000")
        assert "1 new tasks" in curate("annotate", "import").stdout

        made = subprocess.run([*make, "labelstudio-backup"], cwd=ROOT, env=team, capture_output=True, text=True,
                              timeout=300)
        assert made.returncode == 0, made.stderr
        folder = state / "livingscreen" / "labelstudio-backups"  # the default: outside the checkout
        archive = next(folder.glob("label-studio-*.tar.gz"))
        # the login key and every password hash: for the owner's eyes only
        assert stat.S_IMODE(archive.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
        with tarfile.open(archive) as opened:
            assert DATABASE in opened.getnames() and ".env" in opened.getnames()

        # work after the backup: two more feeds sent, one of them written and imported
        with Catalog(catalog) as cat:
            build_feed_set(cat, load_config().feeds, 2, seed=62)
        assert "2 exported" in curate("annotate", "export", "--annotators", "zora").stdout
        annotate_feed("feed-62-0000")
        assert "1 new tasks" in curate("annotate", "import").stdout

        def restore() -> subprocess.CompletedProcess:  # as deployment.md says, right after Ctrl-C
            return subprocess.run([*make, "labelstudio-restore", f"BACKUP={archive}"], cwd=ROOT, env=team,
                                  capture_output=True, text=True, timeout=300)

        refused = restore()
        assert refused.returncode != 0 and "Label Studio is running on" in refused.stderr, refused.stderr
        stop(server)
        restored = restore()
        assert restored.returncode == 0, restored.stderr
        kept = list(data.parent.glob("data.before-restore-*"))
        assert len(kept) == 1 and (kept[0] / DATABASE).is_file()  # the replaced folder is kept
        server = start()

        # her account came back with the backup; she logs in through the gate make started again
        login(f"http://127.0.0.1:{gate_port}", "zora@annotators.local", password)
        named = curate("annotate", "export", "--annotators", "zora")
        assert named.returncode == 0, named.stderr
        assert "2 feeds sent to project" in named.stdout and "no longer in Label Studio" in named.stdout, named.stdout
        resent = curate("annotate", "export", "--annotators", "zora", "--resend-missing")
        assert resent.returncode == 0, resent.stderr
        # the feed whose task was imported is done; the other is sent again
        assert "1 exported" in resent.stdout, resent.stdout
        imported = curate("annotate", "import")
        assert "1 tasks imported before are no longer in Label Studio" in imported.stdout, imported.stdout
        with Catalog(catalog, read_only=True) as cat:
            assert sorted(r[0] for r in cat.con.execute("SELECT feed_id FROM latest_tasks").fetchall()) == [
                "feed-61-0000", "feed-62-0000"]  # both annotations, whatever the server lost
            assert cat.scalar("SELECT count(*) FROM ls_tasks WHERE feed_id = 'feed-62-0001'") == 1
    finally:
        stop(server)
