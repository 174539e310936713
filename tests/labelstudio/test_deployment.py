"""The gate for annotators on other machines: started the way `make labelstudio` starts it, on an address
other than 127.0.0.1 (127.0.0.2 here) while Label Studio listens on 127.0.0.1 only. An annotator logs in
through the gate's address; Label Studio's own port does not answer there; the export tells people the
gate's URL, which the gate announced, and says so plainly when no gate runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set
from tests.cli.test_cli import curate
from tests.conftest import ROOT
from tests.labelstudio import login

pytestmark = pytest.mark.servers  # a real Label Studio

ELSEWHERE = "127.0.0.2"


def port_on(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=5):
            return True
    except OSError:
        return False


def test_the_gate_on_another_address_with_label_studio_on_loopback_only(clustered_catalog, label_studio):
    build_feed_set(clustered_catalog, load_config().feeds, 2, seed=95)
    db = str(clustered_catalog.path)
    clustered_catalog.close()
    no_gate = curate("--catalog", db, "annotate", "export", "--add", "wren", unset=("LABEL_STUDIO_GATE_URL",))
    assert no_gate.returncode == 0, no_gate.stderr
    assert "annotators log in through the access gate, which is not running here: start it with" in no_gate.stdout

    port = port_on(ELSEWHERE)
    gate = subprocess.Popen(
        [sys.executable, "-m", "curation.labelstudio.gate", "--upstream", label_studio["url"], "--host", ELSEWHERE,
         "--port", str(port), "--data-dir", os.environ["LABEL_STUDIO_DATA_DIR"]],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    url = f"http://{ELSEWHERE}:{port}"
    try:
        assert gate.stdout is not None
        assert gate.stdout.readline().startswith(f"Label Studio gate ready at {url}/ (give annotators this URL)")
        out = curate("--catalog", db, "annotate", "export", "--annotators", "wren", unset=("LABEL_STUDIO_GATE_URL",))
        assert out.returncode == 0, out.stderr
        assert f"annotators log in at {url}/user/login/ (the access gate" in out.stdout
        wren = login(url, "wren@annotators.local", label_studio["annotator_password"])
        titles = [p["title"] for p in wren.get(f"{url}/api/projects/").json()["results"]]
        assert titles == ["LivingScreen authoring · wren"]
        ls_port = urlsplit(label_studio["url"]).port
        assert answers("127.0.0.1", ls_port) and not answers(ELSEWHERE, ls_port)  # Label Studio: loopback only
    finally:
        os.killpg(gate.pid, signal.SIGINT)  # as Ctrl-C in `make labelstudio`: the gate takes back its announcement
        gate.wait(timeout=30)
    assert not os.path.exists(os.path.join(os.environ["LABEL_STUDIO_DATA_DIR"], "gate.json"))
