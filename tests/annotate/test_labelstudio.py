"""Export to and import from a real Label Studio server, as annotators would use it."""

import json
import os
import subprocess
import sys

import pytest

from curation.annotate.client import AnnotationError, connect
from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set, load_feed
from tests.conftest import ROOT
from tests.core.contract import run_traced

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server / chromium

FEEDS = load_config().feeds


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
                        lambda: export_to_label_studio(cat, ["alice", "bob"], label_studio["media"]))
    tasks = {}
    for row in cat.rows("SELECT * FROM ls_tasks"):
        tasks[row["feed_id"]] = row
    return cat, counts, tasks


def test_export_once_per_feed_version(exported, ls_client):
    cat, counts, tasks = exported
    assert counts["exported"] == 6 and counts["accounts_created"] in (0, 2)
    assert {t["annotator"] for t in tasks.values()} == {"alice", "bob"}
    again = export_to_label_studio(cat, ["alice", "bob"], cat.path.parent)
    assert again["exported"] == 0 and again["already_exported"] == 6
    projects = [r["project_id"] for r in cat.rows("SELECT project_id FROM ls_projects")]
    live = sum(len(list(ls_client.tasks.list(project=p))) for p in projects)
    assert live == 6
    emails = {u.email for u in ls_client.users.list()}
    assert {"alice@annotators.local", "bob@annotators.local"} <= emails
    html = ls_client.tasks.get(id=tasks["feed-21-0000"]["ls_task_id"]).data["feed_html"]
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;危险标题" in html and "<script>" not in html
    feed = load_feed(cat, "feed-21-0000")
    assert html.count('class="ls-video"') == len(feed.video_feed)


def test_import_tasks_versions_feed_edits_and_needs_fix(exported, ls_client):
    cat, _, tasks = exported
    t = {f: tasks[f"feed-21-{i:04d}"]["ls_task_id"] for i, f in enumerate("abcdef")}
    post = ls_client.annotations.create
    label = post(id=t["a"], result=result(tier="L2", subcategory="feature_analysis",
                                          instruction="视频中出现了几只猫？", options="A: 一只\nB: 两只\nC: 三只",
                                          answer="B"), lead_time=40.5)
    post(id=t["b"], result=result(tier="L3", subcategory="moderation", instruction="举报不实视频并点赞辟谣视频",
                                  platform_state="report 2 不实信息\nlike 1"))
    base_b = load_feed(cat, "feed-21-0002")
    post(id=t["c"], result=result(tier="L1", subcategory="gui_like", instruction="给第一个猫咪视频点赞",
                                  platform_state="like 1", feed_edits="delete 2"))
    post(id=t["d"], result=result(tier="L2", subcategory="event_association", instruction="",
                                  options="A: 是\nB: 否", answer="D", feed_edits="delete two"))
    post(id=t["e"], result=result(tier="L2", subcategory="robust_evaluation", instruction="他明天会发什么？",
                                  options="A: 美食\nB: 旅行", answer="A"))
    post(id=t["f"], result=result(tier="L1", subcategory="gui_report", instruction="举报",
                                  platform_state="report 99 暴力"))
    post(id=t["f"], result=[], was_cancelled=True)
    counts = run_traced(cat, "annotate-import", lambda: import_from_label_studio(cat, FEEDS))
    assert counts == {"annotations": 7, "new": 6, "new_versions": 0, "unchanged": 0, "needs_fix": 3,
                      "skipped_by_annotator": 1}
    rows = {r["ls_task_id"]: r for r in cat.rows("SELECT * FROM tasks")}
    a = rows[t["a"]]
    assert (a["task_id"], a["status"], a["version"], a["eval_type"]) == ("feature_analysis_1", "ok", 1, "label")
    assert json.loads(a["eval_config"]) == [{"answer": "B"}]
    assert json.loads(a["options"]) == {"A": "一只", "B": "两只", "C": "三只"}
    assert a["lead_time_s"] == 40.5 and a["author"] == tasks["feed-21-0000"]["annotator"]
    b = rows[t["b"]]
    assert b["task_id"] == "moderation_1" and json.loads(b["eval_config"]) == [
        {"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}},
        {"func": "eval_like", "args": {"video_ids": 0}}]
    c = rows[t["c"]]
    assert (c["status"], c["base_feed_version"], c["feed_version"]) == ("ok", 1, 2)
    edited = load_feed(cat, "feed-21-0002", 2)
    assert edited.video_feed == base_b.video_feed[:1] + base_b.video_feed[2:]
    assert edited.edit[0]["author"] == c["author"]
    assert json.loads(rows[t["d"]]["reasons"]) == [  # a typo in an edit line is a reason, not a crash
        "edit line 1: 'two' is not a position; write numbers like 2, 5 or a range 2-4", "empty instruction",
        "answer D is not among the options A, B"]
    assert json.loads(rows[t["e"]]["reasons"]) == [
        "robust-evaluation tasks must offer a 'cannot be determined' option"]
    f_reasons = json.loads(rows[t["f"]]["reasons"])
    assert len(f_reasons) == 2 and "outside the feed" in f_reasons[0] and "not one of" in f_reasons[1]

    assert import_from_label_studio(cat, FEEDS)["unchanged"] == 6
    assert cat.con.execute("SELECT count(*) FROM tasks").fetchone()[0] == 6
    assert load_feed(cat, "feed-21-0002").version == 2  # no new feed version on re-import
    # the annotator's own edit is their task's feed, not new work: nothing goes back as an empty task
    again = export_to_label_studio(cat, ["alice", "bob"], cat.path.parent)
    assert again["exported"] == 0 and again["per_annotator"][c["author"]]["new"] == 0

    ls_client.annotations.update(id=label.id, result=result(
        tier="L2", subcategory="feature_analysis", instruction="视频中出现了几只猫？",
        options="A: 一只\nB: 两只\nC: 三只\nD: 无法确定", answer="C"))
    counts = import_from_label_studio(cat, FEEDS)
    assert counts["new_versions"] == 1 and counts["unchanged"] == 5
    versions = cat.rows("SELECT version, eval_config FROM tasks WHERE task_id = 'feature_analysis_1' ORDER BY 1")
    assert [v["version"] for v in versions] == [1, 2]
    assert json.loads(versions[1]["eval_config"]) == [{"answer": "C"}]


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
                          "--annotators", "alice"], cwd=ROOT, capture_output=True, text=True,
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
