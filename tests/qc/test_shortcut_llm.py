"""The shortcut filter against a real local LLM (SmolLM2 behind llama-cpp-python's server)."""

import json
import os
import re
import signal
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from curation.core.catalog import Catalog
from curation.core.config import ShortcutConfig, build
from curation.core.services import free_port
from curation.qc.shortcut.filter import filter_shortcuts
from curation.qc.shortcut.llm_server import MODEL_ALIAS, start_llm, wait_llm
from curation.qc.shortcut.prompts import CANNOT_ANSWER, UNPARSED
from tests.qc.helpers import curate_in, plant_task, planted_catalog

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server / chromium


class CountingProxy:
    """Forwards to the LLM server and counts the requests that reach it (502 when it is down)."""

    def __init__(self, upstream: int) -> None:
        self.upstream, self.count = upstream, 0
        self.met_down = threading.Event()  # set once a request found the upstream stopped
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.count += 1
                request = urllib.request.Request(f"http://127.0.0.1:{proxy.upstream}{self.path}", data=body,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=300) as response:  # a shared, loaded machine
                        status, data = response.status, response.read()
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                except OSError:
                    status, data = 502, b'{"error": "upstream down"}'
                    proxy.met_down.set()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("llm") / "llm.log"
    proc = start_llm(port, log)
    wait_llm(port, proc)
    state = {"port": port, "proc": proc, "log": log}
    yield state
    os.killpg(state["proc"].pid, signal.SIGKILL)


def _config(port: int, api_key_env: str = "", **extra) -> ShortcutConfig:
    inspector = {"name": "smollm2", "kind": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                 "model": MODEL_ALIAS, "temperature": 0.0, "samples": 1, "max_tokens": 24,
                 "backoff_s": 0.3, "max_retries": 6, "api_key_env": api_key_env, "timeout_s": 300.0}
    # these tests are about the plumbing (cache, retries, keys): SmolLM2's unparseable answers are accepted here
    return build(ShortcutConfig, {"language": "en", "inspectors": [inspector], "max_unparsed_share": 1.0, **extra},
                 "qc.shortcut")


def _plant(cat, n_label: int = 2) -> None:
    feeds = planted_catalog(cat, n_feeds=n_label + 1)
    for i in range(n_label):
        plant_task(cat, f"feature_analysis_{i + 1}", feeds[i], tier="L2", subcategory="feature_analysis",
                   eval_type="label", instruction=f"How many birds are in video {i + 1}?",
                   options={"A": "one", "B": "two", "C": "three", "D": "four"}, eval_config=[{"answer": "B"}])
    plant_task(cat, "moderation_1", feeds[n_label], tier="L3", subcategory="moderation", eval_type="platform",
               instruction="Report the video that spreads a false claim.", options=None,
               eval_config=[{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}}])


def test_real_answers_parsed_and_cached(clustered_catalog, llm, monkeypatch):
    cat = clustered_catalog
    _plant(cat)
    proxy = CountingProxy(llm["port"])
    secret = "sk-local-" + os.urandom(8).hex()
    monkeypatch.setenv("SHORTCUT_TEST_KEY", secret)
    config = _config(proxy.port, api_key_env="SHORTCUT_TEST_KEY")
    counts = filter_shortcuts(cat, config)
    assert (counts["tasks"], counts["requests"], counts["failed"], counts["undecided"]) == (3, 3, 0, 0)
    assert proxy.count == 3
    answers = {r[0]: json.loads(r[1])[0] for r in cat.con.execute(
        "SELECT task_id, answers FROM shortcut_verdicts").fetchall()}
    for task_id, answer in answers.items():
        assert isinstance(answer["raw"], str) and answer["raw"].strip()  # the model really answered
        if task_id.startswith("feature_analysis"):
            assert answer["parsed"] in {"A", "B", "C", "D", CANNOT_ANSWER, UNPARSED}
        assert answer["correct"] is (answer["parsed"] == "B") or task_id == "moderation_1"
    cached = cat.con.execute("SELECT count(*), count(DISTINCT prompt_sha256) FROM llm_calls").fetchone()
    assert cached == (3, 3)
    before = cat.con.execute("SELECT task_id, verdict FROM shortcut_verdicts ORDER BY 1").fetchall()
    again = filter_shortcuts(cat, config)
    assert again["requests"] == 0 and proxy.count == 3  # the server received nothing
    assert cat.con.execute("SELECT task_id, verdict FROM shortcut_verdicts ORDER BY 1").fetchall() == before
    stored = json.dumps([cat.rows("SELECT * FROM runs"), cat.rows("SELECT * FROM llm_calls"),
                         cat.rows("SELECT * FROM shortcut_verdicts")], default=str)
    assert secret not in stored and "SHORTCUT_TEST_KEY" in stored  # the variable's name, never its value


def test_retries_when_the_server_stops_and_starts_mid_run(clustered_catalog, llm):
    cat = clustered_catalog
    _plant(cat, n_label=4)
    proxy = CountingProxy(llm["port"])

    def bounce():
        while proxy.count < 2:
            time.sleep(0.02)
        os.killpg(llm["proc"].pid, signal.SIGKILL)
        llm["proc"].wait()
        proxy.met_down.wait(timeout=120)  # restart only once the run has met the stopped server
        llm["proc"] = start_llm(llm["port"], llm["log"])

    thread = threading.Thread(target=bounce)
    thread.start()
    counts = filter_shortcuts(cat, _config(proxy.port, concurrency=1))
    thread.join()
    assert counts["failed"] == 0 and counts["undecided"] == 0 and counts["tasks"] == 5
    assert proxy.met_down.is_set() and proxy.count > 5  # some requests met the stopped server and were retried
    assert cat.con.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == 5


def test_an_inspector_that_answers_unparseable_text_fails_the_run_and_moves_nothing(clustered_catalog, llm, tmp_path):
    """SmolLM2 on the paper's Chinese prompt mostly echoes the options: the run must not pass tasks on that."""
    cat = clustered_catalog
    feeds = planted_catalog(cat, n_feeds=3)
    questions = [("视频里的猫是什么颜色？", {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}),
                 ("视频里一共有几只鸟？", {"A": "三只", "B": "四只", "C": "五只"}),
                 ("作者最常拍的是什么？", {"A": "美食", "B": "旅行", "C": "宠物"})]
    for i, (question, options) in enumerate(questions):
        plant_task(cat, f"feature_analysis_{i + 1}", feeds[i], tier="L2", subcategory="feature_analysis",
                   eval_type="label", instruction=question, options=options, eval_config=[{"answer": "B"}])
    db = str(cat.path)
    cat.close()
    (tmp_path / "curation.toml").write_text(
        f'[qc.shortcut]\nreport = "{tmp_path / "shortcut.html"}"\n\n'
        '[[qc.shortcut.inspectors]]\nname = "lexical"\nkind = "lexical"\n\n'
        f'[[qc.shortcut.inspectors]]\nname = "smollm2"\nkind = "openai"\nbase_url = "http://127.0.0.1:{llm["port"]}/v1"\n'
        f'model = "{MODEL_ALIAS}"\nmax_tokens = 24\n', encoding="utf-8")

    out = curate_in(tmp_path, "--catalog", db, "qc", "shortcut")
    assert out.returncode == 1, out.stdout + out.stderr
    found = re.search(r"inspector smollm2: (\d+) decided, (\d+) abstained, (\d+) unparsed of (\d+) answers", out.stdout)
    assert found, out.stdout
    decided, abstained, unparsed, answers = map(int, found.groups())
    assert answers == 3 and decided + abstained + unparsed == 3 and unparsed / answers > 0.2
    assert re.search(r"inspector lexical: \d+ decided, \d+ abstained, 0 unparsed of 3 answers", out.stdout)
    error = out.stderr.strip().splitlines()[-1]
    assert error.startswith("error: inspector smollm2 is unusable") and "lexical" not in error
    assert f"{unparsed} of 3 answers" in error and "max_unparsed_share 0.2" in error
    with Catalog(db, read_only=True) as cat:
        assert cat.scalar("SELECT count(*) FROM llm_calls") == 3  # the answers are cached for the next try
        assert cat.scalar("SELECT count(*) FROM shortcut_verdicts") == 0
        assert cat.scalar("SELECT count(*) FROM shortcut_config_record") == 0
        assert {r[0] for r in cat.con.execute("SELECT state FROM task_states").fetchall()} == {"valid"}
        run = cat.rows("SELECT status, error FROM runs WHERE stage = 'qc-shortcut'")
        assert len(run) == 1 and run[0]["status"] == "failed" and "smollm2 is unusable" in run[0]["error"]

    # a team that accepts such an inspector says so in its configuration; the cached answers decide
    accepted = curate_in(tmp_path, "--catalog", db, "qc", "shortcut",
                         env={"CURATE__QC__SHORTCUT__MAX_UNPARSED_SHARE": "1.0"})
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "with CURATE__QC__SHORTCUT__MAX_UNPARSED_SHARE" in accepted.stdout
    assert "0 model requests sent" in accepted.stdout
    with Catalog(db, read_only=True) as cat:
        kept = [a for (answers,) in cat.con.execute("SELECT answers FROM shortcut_verdicts").fetchall()
                for a in json.loads(answers) if a["inspector"] == "smollm2"]
        assert len(kept) == 3 and sum(a["parsed"] == UNPARSED for a in kept) == unparsed
        assert {r[0] for r in cat.con.execute("SELECT state FROM task_states").fetchall()} <= {
            "shortcut_passed", "shortcut_discarded"}
