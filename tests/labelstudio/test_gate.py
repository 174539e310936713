"""The access gate in front of a real Label Studio: ines authors a task, jules reviews it blind.
Through the gate jules cannot read, change or add to anything of ines's (Label Studio alone lets
her read ines's answer), while her own work, logging in and the browser flow still go through,
and the admin's token passes everything."""

from __future__ import annotations

import http.client
import re
import shutil
from urllib.parse import urlsplit

import pytest
import requests

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.labelstudio.gate import CONTROLS, HIDDEN_CONTROLS, PAGE_STYLE, start_gate
from curation.labelstudio.gate_rules import refused_to_people
from curation.qc.review import export_reviews, import_reviews
from curation.qc.shortcut.filter import filter_shortcuts
from tests.labelstudio import login
from tests.qc.helpers import planted_catalog
from tests.qc.test_qc_labelstudio import LABEL, answer, authoring_result, choices

pytestmark = pytest.mark.servers  # a real Label Studio / chromium

# people of their own: the session-wide server also holds the other tests' alice, bob and carol
PEOPLE = ["ines", "jules"]


@pytest.fixture(scope="module")
def scene(clustered_catalog_file, label_studio, tmp_path_factory):
    """Accounts and projects made by the toolkit's own exports; each person's label task written
    through the gate, imported, and sent to the other for review. Ids of what each one owns."""
    path = tmp_path_factory.mktemp("gate") / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    server, _ = start_gate(label_studio["url"], label_studio["token"])
    gate, config = server.url, load_config()
    try:
        with Catalog(path) as cat:
            feeds = planted_catalog(cat, 2, seed=83)
            for person, feed in zip(PEOPLE, feeds, strict=True):
                export_to_label_studio(cat, [], label_studio["media"], feed_ids=[feed], add=[person])
            sessions = {p: login(gate, f"{p}@annotators.local", label_studio["annotator_password"]) for p in PEOPLE}
            ids: dict[str, dict[str, int]] = {}
            for row in cat.rows("SELECT p.annotator, p.project_id, p.organization_id, p.annotator_user_id, "
                                "t.ls_task_id FROM ls_projects p JOIN ls_tasks t USING (base_url, project_id)"):
                person = row["annotator"]
                ids[person] = {"project": row["project_id"], "org": row["organization_id"],
                               "user": row["annotator_user_id"], "task": row["ls_task_id"],
                               "annotation": answer(sessions[person], gate, row["ls_task_id"],
                                                    authoring_result(LABEL))}
            assert import_from_label_studio(cat, config.feeds)["new"] == 2
            assert filter_shortcuts(cat, config.qc.shortcut)["passed"] == 2
            assert export_reviews(cat, PEOPLE, seed=1, media_root=label_studio["media"])["sent"] == 2
            for row in cat.rows("SELECT person, project_id, ls_task_id FROM qc_items WHERE purpose = 'review'"):
                ids[row["person"]] |= {"review": row["project_id"], "review_task": row["ls_task_id"]}
        ines = sessions["ines"]
        draft = ines.post(f"{gate}/api/tasks/{ids['ines']['task']}/drafts",
                           json={"result": [choices("answer", "D")], "lead_time": 1.0})
        view = ines.post(f"{gate}/api/dm/views/", json={"project": ids["ines"]["project"], "data": {"title": "mine"}})
        assert draft.status_code == view.status_code == 201, (draft.text, view.text)
        ids["ines"] |= {"draft": draft.json()["id"], "view": view.json()["id"]}
        yield {"gate": gate, "url": label_studio["url"], "token": label_studio["token"], "ids": ids,
               "sessions": sessions, "catalog": path, "password": label_studio["annotator_password"]}
    finally:
        server.shutdown()
        server.server_close()


def admin(token: str) -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    return session


def test_another_persons_objects_are_refused(scene):
    gate, a, c = scene["gate"], scene["ids"]["ines"], scene["ids"]["jules"]
    jules = scene["sessions"]["jules"]
    # Label Studio alone shows jules the answer she is to review blind: the hole the gate closes
    direct = login(scene["url"], "jules@annotators.local", scene["password"])
    leaked = direct.get(f"{scene['url']}/api/annotations/{a['annotation']}/")
    assert leaked.status_code == 200 and leaked.json()["result"] == authoring_result(LABEL)
    assert direct.get(f"{scene['url']}/api/drafts/{a['draft']}/").status_code == 200

    attempts = [
        ("GET", f"/api/annotations/{a['annotation']}/", None),
        ("PATCH", f"/api/annotations/{a['annotation']}/", {"result": []}),
        ("DELETE", f"/api/annotations/{a['annotation']}/", None),
        ("POST", f"/api/annotations/{a['annotation']}/convert-to-draft", None),
        ("GET", f"/api/drafts/{a['draft']}/", None),
        ("PATCH", f"/api/drafts/{a['draft']}/", {"result": []}),
        ("GET", f"/api/tasks/{a['task']}/", None),
        ("PATCH", f"/api/tasks/{a['task']}/", {"data": {}}),
        ("GET", f"/api/tasks/{a['task']}/annotations/", None),
        ("POST", f"/api/tasks/{a['task']}/annotations/", {"result": [choices("answer", "A")]}),
        ("POST", f"/api/tasks/{a['task']}/drafts", {"result": [], "lead_time": 1.0}),
        ("GET", f"/api/tasks/?project={a['project']}", None),
        ("GET", f"/api/tasks/?view={a['view']}&project={c['review']}", None),  # an own project beside
        ("GET", f"/api/projects/{a['project']}/", None),
        ("PATCH", f"/api/projects/{a['project']}/", {"title": "jules's now"}),
        ("GET", f"/api/projects/{a['project']}/export?exportType=JSON", None),
        ("GET", f"/api/projects/{a['project']}/summary/", None),
        ("GET", f"/api/projects/{a['project']}/next/", None),
        ("GET", f"/api/dm/project/?project={a['project']}", None),
        ("GET", f"/api/dm/views/?project={a['project']}", None),
        ("GET", f"/api/dm/views/{a['view']}/", None),
        ("POST", "/api/dm/views/", {"project": a["project"], "data": {"title": "peek"}}),
        ("GET", f"/api/predictions/?task={a['task']}", None),
        ("GET", f"/api/users/{a['user']}/", None),
        ("GET", f"/api/organizations/{a['org']}/memberships", None),
        # her own review task, with ines's draft named in the body (Label Studio would delete it)
        ("POST", f"/api/tasks/{c['review_task']}/annotations/", {"result": [], "draft_id": a["draft"]}),
        ("GET", f"/projects/{a['project']}/data/?task={a['task']}", None),  # the page, not only the API
        # not on the allow-list at all, even for her own project
        ("GET", f"/api/storages/?project={c['review']}", None),
        ("POST", f"/api/dm/actions?id=delete_tasks&project={c['review']}", {"selectedItems": {"all": True}}),
        ("POST", f"/api/dm/actions?id=next_task&project={a['project']}", {}),
        ("POST", f"/api/dm/actions?project={c['review']}", {}),
        ("GET", f"/api/organizations/{a['org']}/memberships/{a['user']}", None),
        ("POST", "/api/projects/", {"title": "new"}),
        ("DELETE", f"/api/projects/{c['review']}/", None),
        ("POST", f"/api/projects/{c['review']}/import", [{"data": {}}]),
        ("GET", "/admin/", None),
    ]
    answered = {(m, p): jules.request(m, gate + p, json=body, allow_redirects=False).status_code
                for m, p, body in attempts}
    passed = {k: v for k, v in answered.items() if v != 403}
    assert not passed, f"the gate let these through: {passed}"

    # and nothing of ines's changed: her answer, her draft and her project are as she left them
    boss = admin(scene["token"])
    mine = boss.get(f"{gate}/api/annotations/{a['annotation']}/").json()
    assert mine["result"] == authoring_result(LABEL) and mine["completed_by"] == a["user"]
    assert boss.get(f"{gate}/api/drafts/{a['draft']}/").status_code == 200
    assert [x["id"] for x in scene["sessions"]["ines"].get(
        f"{gate}/api/tasks/{a['task']}/annotations/").json()] == [a["annotation"]]
    title = boss.get(f"{gate}/api/dm/project/?project={a['project']}").json()["title"]
    assert title == "LivingScreen authoring · ines"


def raw(gate: str, method: str, target: str, cookie: str, body: bytes = b"", content_type: str = "") -> int:
    """A request exactly as written (no client-side clean-up of the path or the method)."""
    parts = urlsplit(gate)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Cookie": cookie, **({"Content-Type": content_type} if content_type else {})}
    try:
        conn.request(method, target, body=body or None, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_paths_written_another_way_are_refused(scene):
    gate, a, c = scene["gate"], scene["ids"]["ines"], scene["ids"]["jules"]
    cookie = "; ".join(f"{k}={v}" for k, v in scene["sessions"]["jules"].cookies.items())
    encoded = "".join(f"%{ord(d):02x}" for d in str(a["annotation"]))
    assert raw(gate, "GET", f"/api/annotations/{encoded}/", cookie) == 403  # Django decodes %xx before routing
    assert raw(gate, "GET", f"/api//annotations/{a['annotation']}/", cookie) == 400
    assert raw(gate, "GET", f"/api/tasks/{c['review_task']}/../../annotations/{a['annotation']}/", cookie) == 400
    assert raw(gate, "get", f"/api/annotations/{a['annotation']}/", cookie) == 405  # Django would upper-case it
    assert raw(gate, "GET", f"/api/tasks/?project={c['review']}&project={a['project']}", cookie) == 403
    # malformed ids are a 400, never a crash of the gate: digits of other scripts, signs, sizes, emptiness
    for odd in ("%C2%B2", "%D9%A3", "-1", "1.0", "0x1", "1e3", "9" * 40, "%00", "%EF%BC%91", "x"):
        assert raw(gate, "GET", f"/api/tasks/?project={c['review']}&view={odd}", cookie) in (400, 403), odd
        assert raw(gate, "GET", f"/api/tasks/?project={odd}", cookie) == 400, odd
        assert raw(gate, "POST", "/api/dm/views/", cookie, f'{{"project": "{odd}"}}'.encode(),
                   "application/json") in (400, 403), odd
    for odd in ("%C2%B2", "%D9%A3", "%EF%BC%91"):
        assert raw(gate, "GET", f"/api/tasks/{odd}/", cookie) == 403, odd  # no route takes it: not on the list
    assert raw(gate, "GET", f"/api/tasks/?project={c['review']}x", cookie) == 400
    # an id hidden in a body the gate does not read is refused, not passed unread
    assert raw(gate, "POST", "/api/dm/views/", cookie, f"project={a['project']}".encode(),
               "application/x-www-form-urlencoded") == 403
    assert raw(gate, "POST", "/api/dm/views/", cookie, b'--x\r\nContent-Disposition: form-data; name="project"'
               b"\r\n\r\n1\r\n--x--\r\n", "multipart/form-data; boundary=x") == 403
    # the same request, her own, goes through
    assert raw(gate, "GET", f"/api/tasks/?project={c['review']}", cookie) == 200


def test_own_work_lists_login_and_the_admin_token(scene):
    gate, url, c, a = scene["gate"], scene["url"], scene["ids"]["jules"], scene["ids"]["ines"]
    jules = scene["sessions"]["jules"]
    # her own projects, tasks and annotations; the review task does not carry ines's answer
    projects = jules.get(f"{gate}/api/projects/").json()["results"]
    assert sorted(p["id"] for p in projects) == sorted([c["project"], c["review"]])
    task = jules.get(f"{gate}/api/tasks/{c['review_task']}/")
    assert task.status_code == 200 and not {"answer", "eval_config", "options"} & set(task.json()["data"])
    listed = jules.get(f"{gate}/api/tasks/?project={c['review']}").json()["tasks"]
    assert [t["id"] for t in listed] == [c["review_task"]]
    assert jules.get(f"{gate}/api/dm/views/?project={c['review']}").status_code == 200
    # the labelling page's ML-backend list for her project answers; another's project or none is refused
    assert jules.get(f"{gate}/api/ml?project={c['review']}").status_code == 200
    assert jules.get(f"{gate}/api/ml?project={a['project']}").status_code == 403
    assert jules.get(f"{gate}/api/ml").status_code == 403
    export = jules.get(f"{gate}/api/projects/{c['project']}/export?exportType=JSON")
    assert export.status_code == 200 and [t["id"] for t in export.json()] == [c["task"]]
    edited = jules.patch(f"{gate}/api/annotations/{c['annotation']}/",
                         json={"result": authoring_result({**LABEL, "answer": "C"})})
    assert edited.status_code == 200 and choices("answer", "C") in edited.json()["result"]
    # people lists hold only her; Label Studio alone shows her the admin and her organization's owner too
    assert [u["id"] for u in jules.get(f"{gate}/api/users/").json()] == [c["user"]]
    assert len(login(url, "jules@annotators.local", scene["password"]).get(f"{url}/api/users/").json()) > 1
    assert [o["id"] for o in jules.get(f"{gate}/api/organizations/").json()] == [c["org"]]
    assert jules.get(f"{gate}/api/organizations/{c['org']}/memberships").status_code == 200

    # nobody logged in: the API says so and pages send to the login form; a wrong password fails
    stranger = requests.Session()
    assert stranger.get(f"{gate}/api/projects/").status_code == 401
    page = stranger.get(f"{gate}/projects/{c['review']}/data/", allow_redirects=False)
    assert page.status_code == 302 and page.headers["Location"].startswith("/user/login/")
    assert stranger.get(f"{gate}/user/login/").status_code == 200
    with pytest.raises(AssertionError, match="could not log in"):
        login(gate, "jules@annotators.local", "not-her-password")
    assert stranger.get(f"{gate}/api/annotations/{a['annotation']}/",
                        headers={"Authorization": "Token " + "0" * 40}).status_code == 401

    # the admin's token passes everything, ines's answer included
    boss = admin(scene["token"])
    assert boss.get(f"{gate}/api/annotations/{a['annotation']}/").json()["result"] == authoring_result(LABEL)
    assert boss.get(f"{gate}/api/storages/?project={c['review']}").status_code == 200
    members = boss.get(f"{gate}/api/organizations/{a['org']}/memberships").json()["results"]
    assert a["user"] in {m["user"]["id"] for m in members}


def test_reviewer_labels_in_the_browser_through_the_gate(scene):
    from playwright.sync_api import expect, sync_playwright

    from tests.annotate.test_browser_annotator import CHROMIUM, SETTLE_MS, choose, launch_chromium, log_in, submit
    from tests.qc.test_browser_reviewer import open_review

    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    gate, c, a = scene["gate"], scene["ids"]["jules"], scene["ids"]["ines"]
    refused: list[str] = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.on("response", lambda r: refused.append(f"{r.request.method} {r.url}") if r.status == 403 else None)
        log_in(page, gate, "jules@annotators.local", scene["password"])
        page.goto(f"{gate}/projects/")
        cards = page.locator(".lsf-project-card__title-text")
        expect(cards).to_have_count(2, timeout=SETTLE_MS)
        assert sorted(cards.all_inner_texts()) == ["LivingScreen authoring · jules", "LivingScreen review · jules"]

        open_review(page, gate, c["review"], c["review_task"])
        expect(page.locator(".ls-task")).to_contain_text(LABEL["instruction"], timeout=SETTLE_MS)
        expect(page.locator("input.ant-checkbox-input:checked")).to_have_count(0)
        choose(page, "C")
        submit(page, gate, c["review_task"], "submit")
        # what the frontend asked for on the way and was refused: only Label Studio's ML-backend list
        assert all(re.search(r"/api/ml\b", r) for r in refused), refused

        # ines's project page and her answer, from the same logged-in browser
        other = page.goto(f"{gate}/projects/{a['project']}/data?task={a['task']}")
        assert other is not None and other.status == 403
        expect(page.get_by_text("Refused by the access gate")).to_be_visible()
        assert page.request.get(f"{gate}/api/annotations/{a['annotation']}/").status == 403
        browser.close()
    with Catalog(scene["catalog"]) as cat:
        counts = import_reviews(cat)
    assert (counts["reviews"], counts["escalated"]) == (1, 1)  # hers differs from ines's B


def test_the_pages_hide_exactly_the_controls_the_rules_refuse():
    """What the gate hides on the pages it serves follows from its rules: the Danger Zone (its Delete Project
    was refused with a 403 while the page said "Project deleted successfully"), storage and webhooks, creating,
    importing, the data manager's actions; the settings pages that work for a member stay."""
    assert refused_to_people("DELETE", "/api/projects/1/") and refused_to_people("POST", "/api/projects/1/import")
    hidden = set(HIDDEN_CONTROLS)
    assert {'a[href$="/settings/danger-zone"]', 'a[href$="/settings/storage"]', 'a[href$="/settings/webhooks"]',
            'button[aria-label="Create new project"]', 'button[data-testid="dm-import-button"]',
            'button[aria-label="Tasks Actions"]', 'a[href="/organization"]'} <= hidden
    shown = {c.selector for c in CONTROLS} - hidden
    assert shown == {'a[href$="/settings/labeling"]', 'a[href$="/settings/annotation"]', 'a[href$="/settings/ml"]',
                     'a[href$="/settings/predictions"]'}
    assert all(selector.encode() in PAGE_STYLE for selector in hidden)
    assert not any(selector.encode() in PAGE_STYLE for selector in shown)
