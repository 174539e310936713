"""Export to and import from a real Label Studio server, as annotators would use it."""

import json
import os
import subprocess
import sys

import pytest

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.config import load_config
from curation.core.errors import InputError
from curation.core.resources import resource_text
from curation.corpus.feeds import build_feed_set, load_feed
from curation.labelstudio.accounts import current_admin, in_organization
from curation.labelstudio.client import AnnotationError, connect
from curation.tasks.lifecycle import latest_states
from tests.conftest import ROOT
from tests.core.contract import run_traced
from tests.labelstudio import login
from tests.qc.helpers import finish_qc

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server / chromium

FEEDS = load_config().feeds


def working_in(client, cat, annotator: str):
    """The admin client working inside an annotator's organization (as the toolkit does)."""
    admin_id, _, home = current_admin(client)
    organization = cat.scalar("SELECT organization_id FROM ls_projects WHERE annotator = ?", [annotator])
    return in_organization(client, admin_id, organization, home)


def result(**fields):
    out = []
    for name, value in fields.items():
        if name in ("tier", "subcategory", "answer"):
            out.append({"from_name": name, "to_name": "feed", "type": "choices", "value": {"choices": [value]}})
        else:
            out.append({"from_name": name, "to_name": "feed", "type": "textarea", "value": {"text": [value]}})
    return out


@pytest.fixture
def exported(clustered_catalog, label_studio, ls_client):
    cat = clustered_catalog
    build_feed_set(cat, FEEDS, 6, seed=21)
    feed = load_feed(cat, "feed-21-0000")
    cat.con.execute("UPDATE videos SET title = '<script>window.__pwned = 1</script>危险标题' WHERE video_id = ?",
                    [feed.video_feed[0]])
    counts = run_traced(cat, "annotate-export",
                        lambda: export_to_label_studio(cat, [], label_studio["media"], add=["alice", "bob"]))
    tasks = {}
    for row in cat.rows("SELECT * FROM ls_tasks"):
        tasks[row["feed_id"]] = row
    return cat, counts, tasks


def test_export_once_per_feed_version(exported, ls_client):
    cat, counts, tasks = exported
    assert counts["exported"] == 6 and counts["accounts_created"] == 2
    assert counts.passwords == {}  # the shared first password was set: nothing generated to show
    assert {t["annotator"] for t in tasks.values()} == {"alice", "bob"}
    again = export_to_label_studio(cat, ["alice", "bob"], cat.path.parent)
    assert again["exported"] == 0 and again["already_exported"] == 6 and again["accounts_created"] == 0
    projects = [r["project_id"] for r in cat.rows("SELECT project_id FROM ls_projects")]
    live = sum(len(list(ls_client.tasks.list(project=p))) for p in projects)
    assert live == 6
    with working_in(ls_client, cat, tasks["feed-21-0000"]["annotator"]):
        html = ls_client.tasks.get(id=tasks["feed-21-0000"]["ls_task_id"]).data["feed_html"]
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;危险标题" in html and "<script>" not in html
    feed = load_feed(cat, "feed-21-0000")
    assert html.count('class="ls-video"') == len(feed.video_feed)


def test_annotators_log_in_and_see_only_their_own_project(exported, label_studio):
    cat, _, tasks = exported
    mine = {r["annotator"]: r["project_id"] for r in cat.rows("SELECT annotator, project_id FROM ls_projects")}
    for annotator, other in (("alice", "bob"), ("bob", "alice")):
        session = login(label_studio["url"], f"{annotator}@annotators.local", label_studio["annotator_password"])
        me = session.get(f"{label_studio['url']}/api/current-user/whoami").json()
        assert me["email"] == f"{annotator}@annotators.local"
        listed = session.get(f"{label_studio['url']}/api/projects/").json()
        projects = listed["results"] if isinstance(listed, dict) else listed
        # (earlier tests on the same server left more projects in this annotator's organization)
        assert mine[annotator] in [p["id"] for p in projects] and mine[other] not in [p["id"] for p in projects]
        assert all(p["title"].endswith(f"· {annotator}") for p in projects)
        assert session.get(f"{label_studio['url']}/api/projects/{mine[other]}/").status_code == 404
        theirs = next(t["ls_task_id"] for t in tasks.values() if t["annotator"] == other)
        assert session.get(f"{label_studio['url']}/api/tasks/{theirs}").status_code == 404
    with pytest.raises(AssertionError, match="could not log in"):
        login(label_studio["url"], "alice@annotators.local", "not-the-password")
    # Community lets an annotator change her project's labeling config; the next export puts it back
    alice = login(label_studio["url"], "alice@annotators.local", label_studio["annotator_password"])
    changed = alice.patch(f"{label_studio['url']}/api/projects/{mine['alice']}/",
                          json={"label_config": '<View><Text name="t" value="$feed_ref"/></View>'})
    assert changed.status_code == 200
    export_to_label_studio(cat, ["alice", "bob"], label_studio["media"])
    restored = alice.get(f"{label_studio['url']}/api/projects/{mine['alice']}/").json()["label_config"]
    assert restored.strip() == resource_text("authoring.xml").strip()


def test_a_password_file_sets_and_resets_passwords_and_a_typo_is_named(exported, label_studio, tmp_path):
    cat, _, _ = exported
    bad = tmp_path / "bad.txt"
    bad.write_text("hana Sunflower-2026\nbob\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.txt:2: write one annotator and one password"):
        export_to_label_studio(cat, [], label_studio["media"], passwords=bad, add=["hana"])
    first = tmp_path / "passwords.txt"
    first.write_text("# name password\nhana Sunflower-2026\n", encoding="utf-8")
    export_to_label_studio(cat, [], label_studio["media"], passwords=first, add=["hana"])
    login(label_studio["url"], "hana@annotators.local", "Sunflower-2026")
    export_to_label_studio(cat, ["hana"], label_studio["media"])  # not in a file: her password stays
    login(label_studio["url"], "hana@annotators.local", "Sunflower-2026")
    reset = tmp_path / "reset.txt"
    reset.write_text("hana Moonflower-2027\n", encoding="utf-8")
    export_to_label_studio(cat, ["hana"], label_studio["media"], passwords=reset)
    login(label_studio["url"], "hana@annotators.local", "Moonflower-2027")
    login(label_studio["url"], "bob@annotators.local", label_studio["annotator_password"])  # untouched
    stored = json.dumps([cat.rows("SELECT * FROM runs"), cat.rows("SELECT * FROM ls_projects")], default=str)
    assert "flower-202" not in stored and label_studio["annotator_password"] not in stored


class Annotators:
    """Each annotator's own logged-in session: annotations are written the way the web UI writes them."""

    def __init__(self, label_studio, tasks):
        self.url, self.tasks = label_studio["url"], tasks
        self.sessions = {name: login(self.url, f"{name}@annotators.local", label_studio["annotator_password"])
                         for name in ("alice", "bob")}

    def post(self, feed_id: str, fields: list, as_who: str | None = None, **extra) -> int:
        row = self.tasks[feed_id]
        session = self.sessions[as_who or row["annotator"]]
        response = session.post(f"{self.url}/api/tasks/{row['ls_task_id']}/annotations/",
                                json={"result": fields, **extra})
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def update(self, feed_id: str, annotation_id: int, fields: list) -> None:
        session = self.sessions[self.tasks[feed_id]["annotator"]]
        response = session.patch(f"{self.url}/api/annotations/{annotation_id}/", json={"result": fields})
        assert response.status_code == 200, response.text

    def task_data(self, feed_id: str) -> dict:
        row = self.tasks[feed_id]
        return self.sessions[row["annotator"]].get(f"{self.url}/api/tasks/{row['ls_task_id']}").json()["data"]


def test_import_tasks_versions_feed_edits_and_needs_fix(exported, label_studio):
    cat, _, tasks = exported
    people = Annotators(label_studio, tasks)
    f = {k: f"feed-21-{i:04d}" for i, k in enumerate("abcdef")}
    t = {k: tasks[v]["ls_task_id"] for k, v in f.items()}
    label = people.post(f["a"], result(tier="L2", subcategory="feature_analysis", instruction="视频中出现了几只猫？",
                                       options="A: 一只\nB: 两只\nC: 三只", answer="B"), lead_time=40.5)
    people.post(f["b"], result(tier="L3", subcategory="moderation", instruction="举报不实视频并点赞辟谣视频",
                               platform_state="report 2 不实信息\nlike 1"))
    base_b = load_feed(cat, "feed-21-0002")
    people.post(f["c"], result(tier="L1", subcategory="gui_like", instruction="给第一个猫咪视频点赞",
                               platform_state="like 1", feed_edits="delete 2"))
    wrong = people.post(f["d"], result(tier="L2", subcategory="event_association", instruction="",
                                       options="A: 是\nB: 否", answer="D", feed_edits="delete two"))
    people.post(f["e"], result(tier="L2", subcategory="robust_evaluation", instruction="他明天会发什么？",
                               options="A: 美食\nB: 旅行", answer="A"))
    people.post(f["f"], result(tier="L1", subcategory="gui_report", instruction="举报",
                               platform_state="report 99 暴力"))
    people.post(f["f"], [], was_cancelled=True)
    counts = run_traced(cat, "annotate-import", lambda: import_from_label_studio(cat, FEEDS))
    assert counts == {"annotations": 7, "new": 6, "new_versions": 0, "renamed": 0, "unchanged": 0, "needs_fix": 2,
                      "skipped_by_annotator": 1, "written_by_someone_else": 0,
                      "gone_from_label_studio": 0, "annotations_lost": 0, "changed": 0, "written_again": 0,
                      "older_on_server": 0, "older_duplicates": 0, "findings": []}
    rows = {r["ls_task_id"]: r for r in cat.rows(
        "SELECT t.*, s.state, (SELECT reason FROM task_transitions x WHERE x.task_id = t.task_id AND x.version = "
        "t.version AND x.to_state = 'needs_fix') AS reason FROM tasks t JOIN task_states s USING (task_id, version)")}
    a = rows[t["a"]]
    assert (a["task_id"], a["state"], a["version"], a["eval_type"]) == ("feature_analysis_1", "valid", 1, "label")
    assert json.loads(a["eval_config"]) == [{"answer": "B"}]
    assert json.loads(a["options"]) == {"A": "一只", "B": "两只", "C": "三只"}
    assert a["lead_time_s"] == 40.5 and a["author"] == tasks["feed-21-0000"]["annotator"]
    b = rows[t["b"]]
    assert b["task_id"] == "moderation_1" and json.loads(b["eval_config"]) == [
        {"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}},
        {"func": "eval_like", "args": {"video_ids": 0}}]
    c = rows[t["c"]]
    assert (c["state"], c["base_feed_version"], c["feed_version"]) == ("valid", 1, 2)
    edited = load_feed(cat, "feed-21-0002", 2)
    assert edited.video_feed == base_b.video_feed[:1] + base_b.video_feed[2:]
    assert edited.edit[0]["author"] == c["author"]
    assert rows[t["d"]]["state"] == "needs_fix"
    assert rows[t["d"]]["reason"].split(" | ") == [  # a typo in an edit line is a reason, not a crash
        "instruction-empty: the instruction is empty",
        "feed-edit-unreadable: edit line 1: 'two' is not a position; write numbers like 2, 5 or a range 2-4",
        'answer-not-an-option: answer "D" is not among the options A, B']
    # the task rules' one severity: a missing "cannot be determined" option is a warning at every door
    assert rows[t["e"]]["state"] == "valid"
    f_reasons = rows[t["f"]]["reason"].split(" | ")
    assert [r.split(":")[0] for r in f_reasons] == ["position-outside-feed", "report-category-unknown"]
    assert "position 98 (video 99 as annotators count)" in f_reasons[0] and '"暴力"' in f_reasons[1]
    # the annotator reads the reasons in the task itself; a task without problems says nothing
    assert "the instruction is empty" in people.task_data(f["d"])["feedback"]
    assert people.task_data(f["a"])["feedback"] == ""

    assert import_from_label_studio(cat, FEEDS)["unchanged"] == 6
    assert cat.con.execute("SELECT count(*) FROM tasks").fetchone()[0] == 6
    assert load_feed(cat, "feed-21-0002").version == 2  # no new feed version on re-import
    # the annotator's own edit is their task's feed, not new work: nothing goes back as an empty task
    again = export_to_label_studio(cat, ["alice", "bob"], cat.path.parent)
    assert again["exported"] == 0 and again["per_annotator"][c["author"]]["new"] == 0

    people.update(f["a"], label, result(tier="L2", subcategory="feature_analysis", instruction="视频中出现了几只猫？",
                                        options="A: 一只\nB: 两只\nC: 三只\nD: 无法确定", answer="C"))
    people.update(f["d"], wrong, result(tier="L2", subcategory="event_association",  # the fix
                                        instruction="两段视频是同一事件吗？", options="A: 是\nB: 否", answer="A"))
    counts = import_from_label_studio(cat, FEEDS)
    assert counts["new_versions"] == 2 and counts["unchanged"] == 4 and counts["needs_fix"] == 0
    versions = cat.rows("SELECT version, eval_config FROM tasks WHERE task_id = 'feature_analysis_1' ORDER BY 1")
    assert [v["version"] for v in versions] == [1, 2]
    assert json.loads(versions[1]["eval_config"]) == [{"answer": "C"}]
    assert people.task_data(f["d"])["feedback"] == ""  # fixed: the message is gone


def test_a_changed_sub_category_is_one_task_however_often_it_is_imported(exported, label_studio):
    """The authoring annotation is the task's identity: Like -> Collect renames the task once."""
    cat, _, tasks = exported
    people = Annotators(label_studio, tasks)
    feed = next(iter(tasks))
    first = result(tier="L1", subcategory="gui_like", instruction="给第一个视频点赞", platform_state="like 1")
    annotation = people.post(feed, first)
    import_from_label_studio(cat, FEEDS)
    (old_id,) = [r[0] for r in cat.con.execute("SELECT task_id FROM tasks").fetchall()]
    assert old_id.startswith("gui_like_")
    finish_qc(cat, old_id, end="reviewed_ok")  # it was even reviewed: a releasable task
    people.update(feed, annotation, result(tier="L1", subcategory="gui_collect", instruction="收藏第一个视频",
                                           platform_state="collect 1"))
    counts = [import_from_label_studio(cat, FEEDS) for _ in range(5)]
    assert [(c["new_versions"], c["renamed"], c["unchanged"]) for c in counts] == [(1, 1, 0)] + [(0, 0, 1)] * 4
    rows = cat.rows("SELECT t.task_id, t.version, s.state FROM tasks t JOIN task_states s USING (task_id, version) "
                    "ORDER BY t.version")
    (new_id,) = [r["task_id"] for r in rows if r["task_id"] != old_id]
    assert new_id.startswith("gui_collect_")
    assert [(r["task_id"], r["version"], r["state"]) for r in rows] == [
        (old_id, 1, "retired"), (new_id, 2, "valid")]  # one task, two versions; the old id cannot ship
    (retired,) = cat.rows("SELECT reason, who FROM task_transitions WHERE to_state = 'retired'")
    assert retired["reason"] == f"renamed to {new_id} v2: the sub-category is now gui_collect"
    assert cat.scalar("SELECT reason FROM task_transitions WHERE task_id = ? AND to_state = 'authored'",
                      [new_id]) == f"renamed from {old_id} v1"
    # and what `curate annotate status` reads counts it once, as it is now
    assert [(r["task_id"], r["state"]) for r in latest_states(cat)] == [(new_id, "valid")]


def test_an_annotation_in_someone_elses_project_is_credited_to_its_writer(exported, label_studio):
    cat, _, tasks = exported
    people = Annotators(label_studio, tasks)
    alices = next(feed for feed, row in tasks.items() if row["annotator"] == "alice")
    # Label Studio Community does not stop a determined annotator from posting through the API
    people.post(alices, result(tier="L1", subcategory="gui_like", instruction="给第一个视频点赞",
                               platform_state="like 1"), as_who="bob")
    counts = import_from_label_studio(cat, FEEDS)
    assert counts["written_by_someone_else"] == 1
    row = cat.rows("SELECT author, ls_task_id FROM tasks")[0]
    assert row["author"] == "bob" and row["ls_task_id"] == tasks[alices]["ls_task_id"]


def test_server_down_or_bad_token_is_one_clear_line(clustered_catalog, label_studio, monkeypatch, tmp_path):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "0" * 40)
    with pytest.raises(AnnotationError, match="refused the API key"):
        connect()
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio["token"])
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    with pytest.raises(AnnotationError, match="not reachable"):
        connect()
    db = clustered_catalog.path
    runs_before = clustered_catalog.con.execute("SELECT count(*) FROM runs").fetchone()[0]
    clustered_catalog.close()
    out = subprocess.run([sys.executable, "-m", "curation.cli", "--catalog", str(db), "annotate", "export",
                          "--add", "alice"], cwd=ROOT, capture_output=True, text=True,
                         env=os.environ.copy())
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == ["error: Label Studio at http://127.0.0.1:9 is not reachable "
                                               "(ConnectError)"]
    from curation.core.catalog import Catalog
    with Catalog(db) as cat:  # the attempt is on record as failed, with the reason; nothing else was written
        assert cat.scalar("SELECT count(*) FROM runs") == runs_before + 1
        failed = cat.rows("SELECT stage, status, error FROM runs ORDER BY started_at DESC LIMIT 1")[0]
        assert failed["stage"] == "annotate-export" and failed["status"] == "failed"
        assert "not reachable" in failed["error"]
        assert cat.scalar("SELECT count(*) FROM ls_projects") == 0
