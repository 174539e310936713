"""What an annotator reads in Label Studio, through the access gate with her own login (never the
admin's): the guide in both languages as her projects' instructions, a fix reason in Chinese and in
English naming what she got wrong, plain-text columns in her task list, and, after her own feed edit
is imported, the edited feed version on the card."""

from __future__ import annotations

import re
import shutil

import pytest

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set, load_feed
from curation.labelstudio.gate import start_gate
from curation.labelstudio.guide import guide_html, same_html
from curation.qc.adjudicate import export_adjudication
from curation.qc.calibrate import export_pilot
from tests.annotate.test_labelstudio import result
from tests.conftest import ROOT
from tests.labelstudio import login

pytestmark = pytest.mark.servers  # a real Label Studio / chromium

FEEDS = load_config().feeds
# people of their own: the session-wide server holds the other tests' annotators too
AUTHOR, PILOTS, DECIDER = "pia", ["quinn", "rosa"], "sven"
GUIDE_LINES = ("标注指南 / Annotator guide", "期望的最终状态：每行一条", "举报类别只能是", "修改视频流（可选）",
               "Expected end state: one check per line", "Report categories", "Editing the feed (optional)")
WRONG_ANSWER_ZH = '答案 "C" 不在选项 A, B 之中'
WRONG_ANSWER_EN = 'answer "C" is not among the options A, B (answer-not-an-option)'


def read_guide(session, gate: str, project_id: int) -> dict:
    """A project as its member reads it through the gate; its instructions hold the whole guide."""
    response = session.get(f"{gate}/api/projects/{project_id}/")
    assert response.status_code == 200, response.text
    project = response.json()
    assert project["show_instruction"] is True
    missing = [line for line in GUIDE_LINES if line not in project["expert_instruction"]]
    assert not missing, f"project {project['title']!r}: the guide lacks {missing}"
    assert "annotation/GUIDE.md" not in project["description"]
    assert "Instructions" in project["description"] and "指南" in project["description"]
    return project


@pytest.fixture(scope="module")
def scene(clustered_catalog_file, label_studio, tmp_path_factory):
    """Four feeds exported to pia; she answers one wrongly, edits another's feed (and a third's, to undo
    it later) and leaves the fourth; the toolkit imports. Everything she does goes through the gate."""
    path = tmp_path_factory.mktemp("guide") / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    server, _ = start_gate(label_studio["url"], label_studio["token"])
    gate = server.url
    try:
        with Catalog(path) as cat:
            build_feed_set(cat, FEEDS, 4, seed=64)
            export_to_label_studio(cat, [], label_studio["media"], add=[AUTHOR])
            rows = cat.rows("SELECT feed_id, project_id, ls_task_id FROM ls_tasks WHERE annotator = ? ORDER BY feed_id",
                            [AUTHOR])
            feeds = {name: load_feed(cat, row["feed_id"], 1) for name, row in zip(
                ("wrong", "edited", "undone", "untouched"), rows, strict=True)}
            tasks = {name: row["ls_task_id"] for name, row in zip(feeds, rows, strict=True)}
            pia = login(gate, f"{AUTHOR}@annotators.local", label_studio["annotator_password"])
            before = pia.get(f"{gate}/api/tasks/?project={rows[0]['project_id']}").json()["tasks"]

            def post(name: str, fields: list) -> int:
                response = pia.post(f"{gate}/api/tasks/{tasks[name]}/annotations/", json={"result": fields})
                assert response.status_code == 201, response.text
                return response.json()["id"]

            like_first = {"tier": "L1", "subcategory": "gui_like", "instruction": "给第一个视频点赞",
                          "platform_state": "like 1"}
            annotations = {
                "wrong": post("wrong", result(tier="L2", subcategory="feature_analysis", instruction="有几只猫？",
                                              options="A: 一只\nB: 两只", answer="C")),
                "edited": post("edited", result(**like_first, feed_edits="delete 2")),
                "undone": post("undone", result(**like_first, feed_edits="delete 3")),
            }
            counts = import_from_label_studio(cat, FEEDS, media_root=label_studio["media"])
            assert (counts["new"], counts["needs_fix"]) == (3, 1)
        yield {"gate": gate, "catalog": path, "pia": pia, "project": rows[0]["project_id"], "feeds": feeds,
               "tasks": tasks, "annotations": annotations, "before": before, "like_first": like_first,
               "media": label_studio["media"], "password": label_studio["annotator_password"]}
    finally:
        server.shutdown()
        server.server_close()


def task_data(scene, name: str) -> dict:
    response = scene["pia"].get(f"{scene['gate']}/api/tasks/{scene['tasks'][name]}/")
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_the_annotator_reads_the_guide_in_both_languages_and_an_export_puts_it_back(scene):
    gate, pia, project_id = scene["gate"], scene["pia"], scene["project"]
    project = read_guide(pia, gate, project_id)
    assert same_html(project["expert_instruction"], guide_html())
    # any member may change a project's settings in Label Studio; the next export puts the guide back
    changed = pia.patch(f"{gate}/api/projects/{project_id}/",
                        json={"expert_instruction": "<p>自己写的说明</p>", "show_instruction": False,
                              "description": "Guide: annotation/GUIDE.md"})
    assert changed.status_code == 200 and changed.json()["show_instruction"] is False
    with Catalog(scene["catalog"]) as cat:
        again = export_to_label_studio(cat, [AUTHOR], scene["media"])
    assert again["exported"] == 0
    assert read_guide(pia, gate, project_id)["expert_instruction"] == project["expert_instruction"]


def test_pilot_and_adjudication_projects_carry_the_guide(clustered_catalog, label_studio):
    cat = clustered_catalog
    build_feed_set(cat, FEEDS, 2, seed=65)
    export_pilot(cat, [], pilot=1, seed=3, media_root=label_studio["media"], add=PILOTS)
    export_adjudication(cat, label_studio["media"], add=[DECIDER])  # nothing escalated yet: the project alone
    server, _ = start_gate(label_studio["url"], label_studio["token"])
    try:
        for person in (*PILOTS, DECIDER):
            session = login(server.url, f"{person}@annotators.local", label_studio["annotator_password"])
            listed = session.get(f"{server.url}/api/projects/").json()["results"]
            wanted = "LivingScreen adjudication" if person == DECIDER else f"LivingScreen pilot · {person}"
            (project,) = [p for p in listed if p["title"] == wanted]
            read_guide(session, server.url, project["id"])
    finally:
        server.shutdown()
        server.server_close()


def test_a_wrong_answer_gets_its_reason_in_chinese_and_english(scene):
    lines = task_data(scene, "wrong")["feedback"].splitlines()
    assert lines[0] == "需要修改：请在这里改好后点击 Update。 / Needs a fix: fix it here and press Update."
    at = lines.index(f"(1) {WRONG_ANSWER_ZH}")
    assert lines[at + 1].strip() == WRONG_ANSWER_EN  # the English line right under the Chinese one
    assert task_data(scene, "untouched")["feedback"] == task_data(scene, "edited")["feedback"] == ""


def test_the_task_list_has_plain_text_columns(scene):
    gate, pia, feeds = scene["gate"], scene["pia"], scene["feeds"]
    by_id = {t: name for name, t in scene["tasks"].items()}
    for listed in (scene["before"], pia.get(f"{gate}/api/tasks/?project={scene['project']}").json()["tasks"]):
        assert sorted(by_id[t["id"]] for t in listed) == sorted(feeds)
    # as exported: what each feed is, how long, and that it waits for her
    for task in scene["before"]:
        feed = feeds[by_id[task["id"]]]
        assert {k: task["data"][k] for k in ("feed", "videos", "state")} == {
            "feed": f"{feed.feed_id} v1", "videos": len(feed.video_feed), "state": "to_write · 待编写"}
    # after the import: her own edits' versions and each task's state
    now = {by_id[t["id"]]: t["data"] for t in pia.get(f"{gate}/api/tasks/?project={scene['project']}").json()["tasks"]}
    assert [(now[n]["feed"], now[n]["videos"], now[n]["state"]) for n in ("wrong", "edited", "untouched")] == [
        (f"{feeds['wrong'].feed_id} v1", len(feeds["wrong"].video_feed), "needs_fix · 需要修改"),
        (f"{feeds['edited'].feed_id} v2", len(feeds["edited"].video_feed) - 1, "valid · 通过检查"),
        (f"{feeds['untouched'].feed_id} v1", len(feeds["untouched"].video_feed), "to_write · 待编写")]
    assert not any("<" in str(data[k]) for data in now.values() for k in ("feed", "videos", "state"))
    # and the data manager offers them as columns
    columns = pia.get(f"{gate}/api/dm/columns?project={scene['project']}")
    assert columns.status_code == 200, columns.text
    ids = {c["id"] for c in columns.json()["columns"]}
    assert {"feed", "videos", "state"} <= ids, ids


def test_the_card_shows_the_feed_version_her_edit_made(scene):
    base = scene["feeds"]["edited"]
    data = task_data(scene, "edited")
    with Catalog(scene["catalog"]) as cat:
        edited = load_feed(cat, base.feed_id)
    assert edited.version == 2 and edited.video_feed == base.video_feed[:1] + base.video_feed[2:]
    assert data["feed_ref"].startswith(f"{base.feed_id} · v2 · {len(edited.video_feed)} videos")
    assert "v1" in data["feed_ref"]  # and says her edit lines still count in the version she was sent
    shown = re.findall(r'data-video-id="([^"]+)"', data["feed_html"])
    assert shown == edited.video_feed and base.video_feed[1] not in data["feed_html"]
    assert data["feed_version"] == 1  # the version she was sent: what her edit lines apply to

    with Catalog(scene["catalog"]) as cat:  # a second import changes nothing: no third version, same card
        assert import_from_label_studio(cat, FEEDS, media_root=scene["media"])["unchanged"] == 3
        assert load_feed(cat, base.feed_id).version == 2
    assert task_data(scene, "edited") == data


def test_undoing_her_edit_brings_the_card_back(scene):
    gate, pia, feeds = scene["gate"], scene["pia"], scene["feeds"]
    base = feeds["undone"]
    assert task_data(scene, "undone")["feed"] == f"{base.feed_id} v2"
    changed = pia.patch(f"{gate}/api/annotations/{scene['annotations']['undone']}/",
                        json={"result": result(**scene["like_first"])})  # the edit line removed
    assert changed.status_code == 200, changed.text
    with Catalog(scene["catalog"]) as cat:
        assert import_from_label_studio(cat, FEEDS, media_root=scene["media"])["new_versions"] == 1
    data = task_data(scene, "undone")
    assert (data["feed"], data["videos"]) == (f"{base.feed_id} v1", len(base.video_feed))
    assert data["feed_ref"] == f"{base.feed_id} · v1 · {len(base.video_feed)} videos"
    assert re.findall(r'data-video-id="([^"]+)"', data["feed_html"]) == base.video_feed


def test_in_her_browser_the_guide_the_reasons_and_the_edited_feed(scene):
    from playwright.sync_api import expect, sync_playwright

    from tests.annotate.test_browser_annotator import CHROMIUM, SETTLE_MS, launch_chromium, log_in, open_task

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    gate, project, tasks, feeds = scene["gate"], scene["project"], scene["tasks"], scene["feeds"]
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        refused: list[str] = []
        page.on("response", lambda r: refused.append(f"{r.request.method} {r.url}") if r.status == 403 else None)
        log_in(page, gate, f"{AUTHOR}@annotators.local", scene["password"])

        # the reason at the top of the task: the Chinese line, then the English one under it
        open_task(page, gate, project, tasks["wrong"], len(feeds["wrong"].video_feed))
        feedback = page.get_by_text(WRONG_ANSWER_ZH)
        expect(feedback).to_be_visible(timeout=SETTLE_MS)
        shown = [line.strip() for line in feedback.inner_text().splitlines()]
        assert shown[shown.index(f"(1) {WRONG_ANSWER_ZH}") + 1] == WRONG_ANSWER_EN

        # the guide, from the Instructions button above the task
        guide_lines = ("期望的最终状态：每行一条", "Expected end state: one check per line")
        expect(page.get_by_text(guide_lines[1], exact=True)).to_have_count(0)
        page.get_by_role("button", name="Instructions").click()
        for line in guide_lines:
            expect(page.get_by_text(line, exact=True)).to_be_visible(timeout=SETTLE_MS)
        (ROOT / "build" / "reports").mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(500)  # the window fades in
        page.screenshot(path=str(ROOT / "build" / "reports" / "annotator_guide.png"))

        # the task whose feed she edited shows the edited version, one video fewer
        edited = feeds["edited"]
        open_task(page, gate, project, tasks["edited"], len(edited.video_feed) - 1)
        expect(page.get_by_text(f"{edited.feed_id} · v2 · {len(edited.video_feed) - 1} videos")).to_be_visible()
        expect(page.locator(f'.ls-video[data-video-id="{edited.video_feed[1]}"]')).to_have_count(0)
        browser.close()
    # what the frontend asked for on the way and the gate refused: only Label Studio's ML-backend list
    assert all(re.search(r"/api/ml\b", r) for r in refused), refused
