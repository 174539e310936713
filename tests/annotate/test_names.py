"""People named on the command line must exist, feeds are shared out evenly and stay put, and
the commands work from any folder: the team lead's path through `curate`, against a real
Label Studio server."""

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections import Counter

import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.services import free_port
from curation.corpus.feeds import build_feed_set
from tests.cli.test_cli import curate
from tests.conftest import ROOT
from tests.labelstudio import login

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server

FEEDS = load_config().feeds
TEAM = ("jonas", "kemal", "lotte")


def only_line(out: subprocess.CompletedProcess) -> str:
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


def owners(db) -> dict[str, str]:
    with Catalog(db, read_only=True) as cat:
        return dict(cat.con.execute("SELECT feed_id, annotator FROM ls_tasks").fetchall())


def can_log_in(label_studio, person: str) -> bool:
    try:
        login(label_studio["url"], f"{person}@annotators.local", label_studio["annotator_password"])
    except AssertionError:
        return False
    return True


@pytest.fixture
def fifty_feeds(clustered_catalog):
    build_feed_set(clustered_catalog, FEEDS, 50, seed=57)
    path = clustered_catalog.path
    clustered_catalog.close()  # the commands below open the file themselves
    return path


def test_unknown_names_are_refused_and_feeds_are_shared_evenly_for_good(fifty_feeds, label_studio):
    base = ("--catalog", str(fifty_feeds))

    # a fresh catalog knows nobody: everyone's first export names them with --add
    out = curate(*base, "annotate", "export", "--annotators", ",".join(TEAM))
    assert out.returncode == 2
    assert only_line(out) == ("error: unknown annotator 'jonas' (nobody is known in this catalog yet); a new "
                              "person's account is made only when named with --add jonas")
    assert not can_log_in(label_studio, "jonas")

    out = curate(*base, "annotate", "export", "--add", "jonas,kemal", "--add", "lotte")
    assert out.returncode == 0, out.stderr
    assert "50 feeds: 50 exported" in out.stdout and "3 annotator accounts created" in out.stdout
    first = owners(fifty_feeds)
    split = Counter(first.values())
    assert len(first) == 50 and set(split) == set(TEAM) and sorted(split.values()) == [16, 17, 17]
    for person in TEAM:  # what the command prints is what Label Studio holds
        assert f"  {person}: {split[person]} feeds ({split[person]} new)" in out.stdout
        assert can_log_in(label_studio, person)

    # a typo of a known name: refused before anything is made, with the name meant
    out = curate(*base, "annotate", "export", "--annotators", "jonas,kemel,lotte")
    assert out.returncode == 2
    assert only_line(out) == ("error: unknown annotator 'kemel' (did you mean kemal?); a new person's account is "
                              "made only when named with --add kemel")
    assert not can_log_in(label_studio, "kemel")
    # a name like nobody's lists who is known
    out = curate(*base, "annotate", "export", "--annotators", "jonas,xavier")
    assert out.returncode == 2 and only_line(out) == (
        "error: unknown annotator 'xavier' (known people: jonas, kemal, lotte); a new person's account is made "
        "only when named with --add xavier")
    # the QC commands check their people the same way
    for args, expected in [
        (("qc", "review", "export", "--reviewers", "jonas,Lotet"), "unknown reviewer 'Lotet' (did you mean lotte?)"),
        (("qc", "calibrate", "export", "--annotators", "jonsa,kemal", "--pilot", "2"),
         "unknown annotator 'jonsa' (did you mean jonas?)"),
        (("qc", "adjudicate", "export", "--members", "lote"), "unknown group member 'lote' (did you mean lotte?)"),
    ]:
        out = curate(*base, *args)
        assert out.returncode == 2 and only_line(out).startswith(f"error: {expected}; "), out.stderr
    with Catalog(fifty_feeds, read_only=True) as cat:
        assert sorted(r[0] for r in cat.con.execute("SELECT annotator FROM ls_projects").fetchall()) == list(TEAM)
        assert cat.scalar("SELECT count(*) FROM qc_projects") == 0

    # a re-run, listing the team in another order, moves nothing and sends nothing
    out = curate(*base, "annotate", "export", "--annotators", "lotte,jonas,kemal")
    assert out.returncode == 0 and "0 exported, 50 already in Label Studio" in out.stdout, out.stderr
    assert owners(fifty_feeds) == first
    # one person, one name: another case or the e-mail is the same person, never a second one
    out = curate(*base, "annotate", "export", "--annotators", "Lotte,jonas@annotators.local,KEMAL")
    assert out.returncode == 0 and "0 exported, 50 already in Label Studio" in out.stdout, out.stderr
    assert owners(fifty_feeds) == first
    out = curate(*base, "annotate", "export", "--add", "Jonas")
    assert out.returncode == 2 and only_line(out) == (
        "error: --add Jonas: jonas is already known (jonas@annotators.local, the same account); name them as "
        "jonas, without --add")
    jonas = login(label_studio["url"], "jonas@annotators.local", label_studio["annotator_password"])
    projects = jonas.get(f"{label_studio['url']}/api/projects/").json()["results"]
    assert [p["title"] for p in projects] == ["LivingScreen authoring · jonas"]  # still in his own organization
    with Catalog(fifty_feeds, read_only=True) as cat:
        assert sorted(r[0] for r in cat.con.execute("SELECT name FROM people").fetchall()) == list(TEAM)

    # new feeds arrive and a fourth annotator joins: earlier feeds stay, the newcomer gets the new ones
    with Catalog(fifty_feeds) as cat:
        build_feed_set(cat, FEEDS, 12, seed=58)
    out = curate(*base, "annotate", "export", "--annotators", ",".join(TEAM), "--add", "nadia")
    assert out.returncode == 0 and "12 exported" in out.stdout, out.stderr
    after = owners(fifty_feeds)
    assert {f: after[f] for f in first} == first
    assert {after[f] for f in after if f not in first} == {"nadia"}  # 12 < 16: she has the fewest throughout

    # eight more: nadia catches up to the one with 16 first, then the three with fewest take turns
    with Catalog(fifty_feeds) as cat:
        build_feed_set(cat, FEEDS, 8, seed=59)
    out = curate(*base, "annotate", "export", "--annotators", ",".join((*TEAM, "nadia")))
    assert out.returncode == 0, out.stderr
    final = owners(fifty_feeds)
    assert {f: final[f] for f in after} == after
    assert sorted(Counter(final.values()).values()) == [17, 17, 18, 18]

    # a member of the deciding group is added once and known from then on
    out = curate(*base, "qc", "adjudicate", "export", "--add", "mara")
    assert out.returncode == 0 and "1 accounts created" in out.stdout, out.stderr
    out = curate(*base, "qc", "adjudicate", "export", "--members", "mara")
    assert out.returncode == 0 and "0 accounts created" in out.stdout, out.stderr
    assert can_log_in(label_studio, "mara")


def test_feeds_list_counts_each_task_once_however_many_versions(clustered_catalog, label_studio):
    """An annotator writes a task and then corrects it: two versions, one task."""
    build_feed_set(clustered_catalog, FEEDS, 2, seed=62)
    db = clustered_catalog.path
    clustered_catalog.close()
    base = ("--catalog", str(db))
    assert curate(*base, "annotate", "export", "--add", "oskar").returncode == 0
    with Catalog(db, read_only=True) as cat:
        feed_id, task_id = cat.con.execute("SELECT feed_id, ls_task_id FROM ls_tasks ORDER BY feed_id").fetchone()
    url = label_studio["url"]
    oskar = login(url, "oskar@annotators.local", label_studio["annotator_password"])

    def fields(answer: str) -> list:
        return [{"from_name": k, "to_name": "feed", "type": "choices", "value": {"choices": [v]}}
                for k, v in (("tier", "L2"), ("subcategory", "feature_analysis"), ("answer", answer))] + [
            {"from_name": k, "to_name": "feed", "type": "textarea", "value": {"text": [v]}}
            for k, v in (("instruction", "视频里有几只猫？"), ("options", "A: 一只\nB: 两只\nC: 无法确定"))]

    posted = oskar.post(f"{url}/api/tasks/{task_id}/annotations/", json={"result": fields("A")})
    assert posted.status_code == 201, posted.text
    assert curate(*base, "annotate", "import").returncode == 0
    changed = oskar.patch(f"{url}/api/annotations/{posted.json()['id']}/", json={"result": fields("B")})
    assert changed.status_code == 200, changed.text
    out = curate(*base, "annotate", "import")
    assert out.returncode == 0 and "1 new versions" in out.stdout, out.stdout
    with Catalog(db, read_only=True) as cat:
        versions = cat.con.execute("SELECT count(*) FROM tasks WHERE feed_id = ?", [feed_id]).fetchone()[0]
    assert versions == 2
    listed = {line.split("\t")[0]: line for line in curate(*base, "feeds", "list").stdout.splitlines()}
    assert listed[feed_id].endswith("\t1 tasks")  # the one task oskar wrote
    assert all(line.endswith("\t0 tasks") for f, line in listed.items() if f.startswith("feed-") and f != feed_id)


def away_from_the_repository(tmp_path) -> dict[str, str]:
    """An environment that runs this checkout's code, with no venv overrides, from a folder that
    holds no `.venv-ls` or `.venv-llm`."""
    assert not (tmp_path / ".venv-ls").exists() and ROOT not in tmp_path.parents
    env = {k: v for k, v in os.environ.items() if k not in ("LABEL_STUDIO_BIN", "CURATE_LLM_VENV")}
    return env | {"PYTHONPATH": str(ROOT)}


def test_the_helper_servers_are_found_from_another_folder(clustered_catalog, label_studio, tmp_path):
    env = away_from_the_repository(tmp_path)
    probe = subprocess.run(
        [sys.executable, "-c", "from curation.labelstudio.server import label_studio_bin\n"
         "from curation.qc.shortcut.llm_server import llm_venv, model_file\n"
         "print(label_studio_bin()); print(llm_venv() / 'bin' / 'python'); print(model_file())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    for found in probe.stdout.split():  # this checkout's venvs (the working folder has none)
        assert found.startswith(f"{ROOT}/") and os.path.isfile(found), found

    # a command that sets up an account through Label Studio's own venv, run from elsewhere
    build_feed_set(clustered_catalog, FEEDS, 1, seed=63)
    db = clustered_catalog.path
    clustered_catalog.close()
    out = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(db), "annotate", "export",
                          "--add", "pilar"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "1 exported" in out.stdout, out.stderr
    assert can_log_in(label_studio, "pilar")

    # and the local LLM server starts from there too
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "curation.qc.shortcut.llm_server", "--port", str(port)],
                              cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    ready = ""
    try:
        ready = server.stdout.readline()
        assert f"SmolLM2 ready at http://127.0.0.1:{port}/v1" in ready, ready + server.stdout.read()
    finally:
        os.killpg(server.pid, signal.SIGINT)  # it stops the model server it started
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        child = re.search(r"pid (\d+)", ready or "")
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(child.group(1)), signal.SIGKILL)
