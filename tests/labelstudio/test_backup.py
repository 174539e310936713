"""A team backs up Label Studio's data folder while it runs, loses the server's later work, restores the backup
and carries on (issue 30): the restore refuses a running server, keeps the folder it replaces, the accounts log
in again, the export names the tasks the backup lacks and sends them again, and every annotation imported
before stays in the catalog. On a Label Studio server of the test's own (the restore replaces its data)."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.services import free_port
from curation.corpus.feeds import build_feed_set
from curation.labelstudio.backup import DATABASE
from curation.labelstudio.server import start_server, wait_ready
from tests.annotate.test_labelstudio import result
from tests.labelstudio import ADMIN, PASSWORD, login
from tests.qc.helpers import ROOT, curate_in

pytestmark = pytest.mark.servers


def backup_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curation.labelstudio.backup", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_a_backup_restored_after_the_server_lost_work(clustered_catalog_file, tmp_path):
    data, media, log = tmp_path / "ls" / "data", tmp_path / "served" / "media", tmp_path / "ls.log"
    media.mkdir(parents=True)
    token, port, password = secrets.token_hex(20), free_port(), "Zora-" + secrets.token_hex(6)
    url = f"http://127.0.0.1:{port}"
    env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token, "LABEL_STUDIO_DATA_DIR": str(data),
           "LABEL_STUDIO_ANNOTATOR_PASSWORD": password}

    def start() -> subprocess.Popen:
        proc = start_server(data, port, ADMIN, PASSWORD, token, media_root=media, log=log)
        wait_ready(url, timeout_s=240, proc=proc)
        return proc

    def stop(proc: subprocess.Popen) -> None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)

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

        made = backup_tool("backup", "--data-dir", str(data), "--to", f"{tmp_path / 'backups'}/")
        assert made.returncode == 0, made.stderr
        archive = next((tmp_path / "backups").glob("label-studio-*.tar.gz"))
        with tarfile.open(archive) as opened:
            assert DATABASE in opened.getnames() and ".env" in opened.getnames()

        # work after the backup: two more feeds sent, one of them written and imported
        with Catalog(catalog) as cat:
            build_feed_set(cat, load_config().feeds, 2, seed=62)
        assert "2 exported" in curate("annotate", "export", "--annotators", "zora").stdout
        annotate_feed("feed-62-0000")
        assert "1 new tasks" in curate("annotate", "import").stdout

        refused = backup_tool("restore", str(archive), "--data-dir", str(data))
        assert refused.returncode == 1 and "Label Studio is running on" in refused.stderr, refused.stderr
        stop(server)
        restored = backup_tool("restore", str(archive), "--data-dir", str(data))
        assert restored.returncode == 0, restored.stderr
        kept = list(data.parent.glob("data.before-restore-*"))
        assert len(kept) == 1 and (kept[0] / DATABASE).is_file()  # the replaced folder is kept
        server = start()

        login(url, "zora@annotators.local", password)  # her account came back with the backup
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
