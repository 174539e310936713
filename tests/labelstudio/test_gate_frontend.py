"""Label Studio's own frontend through the access gate behind the documented TLS proxy (nginx, https),
recorded: an annotator and a reviewer each work a whole session in chromium with their own login (Label
All Tasks to the end, submit, skip, update, the instructions, the account page and its token, the data
manager's filters and columns). Every request the
page makes is recorded; none that the gate answered itself (`X-Access-Gate: refused`) may be on the
person's own objects, and the work done in the page is really in Label Studio and in the catalog after."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.labelstudio.gate import CONTROLS, HIDDEN_CONTROLS, REFUSED_HEADER, start_gate
from curation.qc.adjudicate import export_adjudication, import_adjudication
from curation.qc.review import export_reviews, import_reviews
from curation.qc.shortcut.filter import filter_shortcuts
from tests.annotate.test_browser_annotator import CHROMIUM, SETTLE_MS, choose, launch_chromium, log_in, write
from tests.labelstudio import login
from tests.labelstudio.proxy import https_proxy
from tests.qc.helpers import planted_catalog
from tests.qc.test_qc_labelstudio import LABEL, answer, authoring_result

pytestmark = pytest.mark.servers  # a real Label Studio / chromium

AUTHOR, OTHER = "tove", "ulla"  # people of their own on the session-wide server


@dataclass
class Recorded:
    """Every response the page got from the gate's origin: (status, method, path?query, refused by the gate)."""

    origin: str
    seen: list[tuple[int, str, str, bool]] = field(default_factory=list)

    def __call__(self, response) -> None:
        if response.url.startswith(self.origin):
            self.seen.append((response.status, response.request.method, response.url[len(self.origin):],
                              response.headers.get(REFUSED_HEADER.lower()) == "refused"))

    def refused_by_gate(self) -> list[tuple[int, str, str]]:
        return [(s, m, u) for s, m, u, gate in self.seen if gate]

    def failed(self) -> list[tuple[int, str, str]]:
        return [(s, m, u) for s, m, u, _ in self.seen if s >= 400]


# what Label Studio itself answers 4xx in a normal session: its tips file (absent offline) and, at the end of
# the queue, the next-task action (nothing left)
LABEL_STUDIOS_OWN = (re.compile(r"^GET /heidi-tips$"), re.compile(r"^POST /api/dm/actions\?id=next_task&"))


def unexpected(recorded: Recorded) -> list[tuple[int, str, str]]:
    return [(s, m, u) for s, m, u in recorded.failed()
            if not (s == 404 and any(p.search(f"{m} {u}") for p in LABEL_STUDIOS_OWN))]


@pytest.fixture(scope="module")
def team(clustered_catalog_file, label_studio, tmp_path_factory):
    path = tmp_path_factory.mktemp("frontend") / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, path)
    server, _ = start_gate(label_studio["url"], label_studio["token"])
    try:
        with Catalog(path) as cat:
            feeds = planted_catalog(cat, 4, seed=93)
            export_to_label_studio(cat, [], label_studio["media"], feed_ids=feeds[:3], add=[AUTHOR])
            export_to_label_studio(cat, [], label_studio["media"], feed_ids=feeds[3:], add=[OTHER])
            rows = cat.rows("SELECT annotator, project_id, ls_task_id FROM ls_tasks ORDER BY ls_task_id")
        # as a team deploys it: people open the TLS proxy of docs/deployment.md (its nginx block, run in
        # Debian's nginx), which forwards to the gate; Label Studio was started for that public URL
        with https_proxy(label_studio["public_url"], server.url, tmp_path_factory.mktemp("nginx")) as public:
            yield {"gate": public, "catalog": path, "media": label_studio["media"], "rows": rows,
                   "password": label_studio["annotator_password"]}
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def recorded_session(gate: str, person: str, password: str) -> Iterator[tuple[Any, Recorded]]:
    """A chromium page logged in as the person through the gate, recording every response it gets."""
    from playwright.sync_api import sync_playwright

    recorded = Recorded(gate)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        # the proxy's certificate is self-signed: accepted here as a team's own CA would make it trusted
        page = browser.new_page(viewport={"width": 1400, "height": 1800}, ignore_https_errors=True)
        page.on("response", recorded)
        log_in(page, gate, f"{person}@annotators.local", password)
        try:
            yield page, recorded
        finally:
            browser.close()


def close_instructions(page) -> None:
    """The guide opens by itself over the first task of a session (show_instruction): read, then closed."""
    from playwright.sync_api import expect

    modal = page.locator(".lsf-modal-ls_visible")
    expect(modal).to_contain_text("标注指南 / Annotator guide", timeout=SETTLE_MS)
    page.keyboard.press("Escape")
    expect(modal).to_have_count(0)


def submitted(page, button: str) -> None:
    """Press the bottom bar's button and wait for Label Studio to take the annotation."""
    saved = re.compile(r"/api/tasks/\d+/annotations/?(\?|$)" if button in ("submit", "skip")
                       else r"/api/annotations/\d+/?(\?|$)")
    method = "PATCH" if button == "update" else "POST"
    with page.expect_response(lambda r: r.request.method == method and saved.search(r.url),
                              timeout=SETTLE_MS) as response:
        page.get_by_test_id(f"bottombar-{button}-button").click()
    assert response.value.ok, response.value.text()


def label_all_tasks(page, gate: str, project: int, count: int, choice: str, note: str | None = None) -> None:
    """From the project's task table, Label All Tasks: each of `count` tasks answered with `choice` (and a
    note) and submitted, then the end of the queue."""
    from playwright.sync_api import expect

    page.goto(f"{gate}/projects/{project}/data")
    page.get_by_text("Label All Tasks").click()
    close_instructions(page)
    for _ in range(count):
        expect(page.locator(f'input.ant-checkbox-input[name="{choice}"]')).to_be_visible(timeout=SETTLE_MS)
        choose(page, choice)
        if note:
            write(page, "note", note)
        submitted(page, "submit")
    expect(page.get_by_text("No More Tasks Left in Queue")).to_be_visible(timeout=SETTLE_MS)


def account_and_data_manager(page, gate: str, project: int) -> None:
    """The account page with the person's own token, then the task table's filters and columns."""
    from playwright.sync_api import expect

    page.goto(f"{gate}/user/account")
    page.get_by_text("Legacy Token", exact=True).first.click()
    token = page.locator("input[readonly]").first
    expect(token).to_have_value(re.compile(r"^[0-9a-f]{40}$"), timeout=SETTLE_MS)
    page.get_by_text("Personal Access Token", exact=True).first.click()
    expect(page.get_by_text("Create New Token")).to_be_visible(timeout=SETTLE_MS)
    page.get_by_text("Membership Info", exact=True).first.click()
    expect(page.get_by_text("Organization ID")).to_be_visible(timeout=SETTLE_MS)

    page.goto(f"{gate}/projects/{project}/data")
    page.get_by_text("Filters", exact=False).first.click()
    page.get_by_text("Add Filter").click()
    page.keyboard.press("Escape")
    page.get_by_text("Columns", exact=True).first.click()
    expect(page.get_by_text("feed_html").first).to_be_visible(timeout=SETTLE_MS)
    page.keyboard.press("Escape")
    for control in HIDDEN_CONTROLS:  # what only the admin may do is not offered
        expect(page.locator(control)).to_have_count(0) if control.endswith('project"]') else expect(
            page.locator(control)).to_be_hidden()


def test_an_annotator_labels_all_tasks_through_the_gate(team):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    from playwright.sync_api import expect

    gate = team["gate"]
    mine = [r for r in team["rows"] if r["annotator"] == AUTHOR]
    project = mine[0]["project_id"]
    with recorded_session(gate, AUTHOR, team["password"]) as (page, recorded):
        page.goto(f"{gate}/projects/")
        expect(page.locator(".lsf-project-card__title-text")).to_have_text(
            [f"LivingScreen authoring · {AUTHOR}"], timeout=SETTLE_MS)
        expect(page.locator('button[aria-label="Create new project"]')).to_be_hidden()

        page.goto(f"{gate}/projects/{project}/data")
        page.get_by_text("Label All Tasks").click()
        close_instructions(page)
        # the queue hands out her three tasks one after another: a label task, a skip, a platform task
        expect(page.locator('input[type=checkbox][name="L1"]')).to_be_visible(timeout=SETTLE_MS)
        choose(page, "L2")
        choose(page, "L2 特征分析 Feature analysis")
        write(page, "instruction", LABEL["instruction"])
        write(page, "options", LABEL["options"])
        choose(page, "C")
        submitted(page, "submit")
        expect(page.locator('input[type=checkbox][name="L1"]')).to_be_visible(timeout=SETTLE_MS)
        submitted(page, "skip")
        expect(page.locator('input[type=checkbox][name="L1"]')).to_be_visible(timeout=SETTLE_MS)
        choose(page, "L1")
        choose(page, "L1 点赞 Like")
        write(page, "instruction", "给第一个视频点赞")
        write(page, "platform_state", "like 1")
        submitted(page, "submit")
        expect(page.get_by_text("No More Tasks Left in Queue")).to_be_visible(timeout=SETTLE_MS)

        # she changes her mind on the first task's answer and presses Update
        annotated = page.request.get(f"{gate}/api/tasks?project={project}&page_size=30").json()["tasks"]
        first = next(t["id"] for t in annotated if t["total_annotations"] and not t["cancelled_annotations"]
                     and t["id"] == min(x["id"] for x in annotated))
        page.goto(f"{gate}/projects/{project}/data?task={first}")
        expect(page.locator('input.ant-checkbox-input[name="C"]')).to_be_checked(timeout=SETTLE_MS)
        choose(page, "B")
        submitted(page, "update")
        # the guide from the Instructions button, any time
        page.get_by_text("Instructions", exact=True).first.click()
        expect(page.locator(".lsf-modal-ls_visible")).to_contain_text("Annotator guide", timeout=SETTLE_MS)
        page.keyboard.press("Escape")

        account_and_data_manager(page, gate, project)

    assert recorded.refused_by_gate() == [], "the gate refused her own work"
    assert unexpected(recorded) == []
    assert any(m == "POST" and u.startswith("/api/dm/actions?id=next_task") for s, m, u, _ in recorded.seen)
    with Catalog(team["catalog"]) as cat:
        counts = import_from_label_studio(cat, load_config().feeds)
        assert counts["new"] == 2  # two tasks written, the skipped one is no task
        rows = cat.rows("SELECT t.ls_task_id, t.eval_config, s.state FROM latest_tasks t "
                        "JOIN task_states s USING (task_id, version) ORDER BY ls_task_id")
    assert [(r["ls_task_id"], r["state"]) for r in rows] == [(first, "valid"), (mine[2]["ls_task_id"], "valid")]
    assert '"B"' in rows[0]["eval_config"]  # her update, not her first answer


def test_a_reviewer_reviews_all_tasks_through_the_gate(team):
    """ulla reviews tove's two tasks from the review queue: Label All Tasks, an answer each, then the end."""
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")

    gate, config = team["gate"], load_config()
    theirs = next(r for r in team["rows"] if r["annotator"] == OTHER)
    with Catalog(team["catalog"]) as cat:
        if not cat.scalar("SELECT count(*) FROM tasks WHERE author = ?", [AUTHOR]):
            pytest.fail("the annotator's test must run first: it writes the tasks reviewed here")
        session = login(gate, f"{OTHER}@annotators.local", team["password"])
        answer(session, gate, theirs["ls_task_id"], authoring_result(LABEL))  # her own task, for tove
        import_from_label_studio(cat, config.feeds)
        filter_shortcuts(cat, config.qc.shortcut)
        export_reviews(cat, [AUTHOR, OTHER], seed=2, media_root=team["media"])
        queue = cat.rows("SELECT project_id, ls_task_id FROM qc_items WHERE purpose = 'review' AND person = ?",
                         [OTHER])
    assert len(queue) == 2
    with recorded_session(gate, OTHER, team["password"]) as (page, recorded):
        label_all_tasks(page, gate, queue[0]["project_id"], len(queue), "A")
        account_and_data_manager(page, gate, queue[0]["project_id"])
    assert recorded.refused_by_gate() == [], "the gate refused her own work"
    assert unexpected(recorded) == []
    with Catalog(team["catalog"]) as cat:
        assert import_reviews(cat)["reviews"] == 2


def test_a_group_member_who_is_also_an_annotator_decides_through_the_gate(team):
    """tove writes tasks in her own organization and is named to the deciding group, which works in the
    admin's. Through the gate she opens the adjudication project, decides every escalated case from the
    queue, goes back to her own authoring project, and still reads nothing of ulla's."""
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    from playwright.sync_api import expect

    gate = team["gate"]
    with Catalog(team["catalog"]) as cat:
        if not cat.scalar("SELECT count(*) FROM reviews"):
            pytest.fail("the reviewer's test must run first: its disagreements are the cases decided here")
        export_adjudication(cat, team["media"], members=[AUTHOR])
        cases = cat.rows("SELECT project_id, ls_task_id FROM qc_items WHERE purpose = 'adjudication'")
        own = cat.scalar("SELECT project_id FROM ls_projects WHERE annotator = ?", [AUTHOR])
        others = cat.scalar("SELECT project_id FROM ls_projects WHERE annotator = ?", [OTHER])
    assert cases, "ulla's answers differ from tove's: something must be escalated"
    adjudication = cases[0]["project_id"]
    with recorded_session(gate, AUTHOR, team["password"]) as (page, recorded):
        # her project list holds the group's project beside her own, whichever organization she works in
        lists_projects(page, gate, [own, adjudication], others)
        label_all_tasks(page, gate, adjudication, len(cases), "保留 Keep",
                        note="作者的答案成立 / the author's answer stands")
        lists_projects(page, gate, [own, adjudication], others)
        # back to her own work: the authoring project opens as before
        page.goto(f"{gate}/projects/{own}/data")
        expect(page.get_by_text("Label All Tasks")).to_be_visible(timeout=SETTLE_MS)
        tasks = page.request.get(f"{gate}/api/tasks?project={own}&page_size=30")
        assert tasks.ok and tasks.json()["tasks"], "her own project's tasks, after deciding in the group's"
        lists_projects(page, gate, [own, adjudication], others)
        # and nothing beyond her projects and the group's
        for path in (f"/api/projects/{others}", f"/api/tasks?project={others}", f"/projects/{others}/data"):
            refused = page.request.get(f"{gate}{path}")
            assert refused.status == 403 and refused.headers.get(REFUSED_HEADER.lower()) == "refused", path
    assert recorded.refused_by_gate() == [], "the gate refused her own work"
    assert unexpected(recorded) == []
    with Catalog(team["catalog"]) as cat:
        counts = import_adjudication(cat)
        deciders = {r[0] for r in cat.con.execute("SELECT decided_by FROM decisions").fetchall()}
    assert counts["kept"] == len(cases)
    assert deciders == {AUTHOR}  # her own account decided, in the group's project (named as the catalog knows her)


def lists_projects(page, gate: str, mine: list[int], not_mine: int) -> None:
    """The project list page shows a card for each of `mine` and none for `not_mine`."""
    from playwright.sync_api import expect

    page.goto(f"{gate}/projects/")
    for project in mine:
        expect(page.locator(f'a[href="/projects/{project}/data"]')).to_be_visible(timeout=SETTLE_MS)
    expect(page.locator(f'a[href="/projects/{not_mine}/data"]')).to_have_count(0)


def hidden_here(page, selector: str) -> None:
    """A control the page holds (so the selector is still Label Studio's) and the gate's style hides."""
    from playwright.sync_api import expect

    expect(page.locator(selector).first).to_be_attached(timeout=SETTLE_MS)
    expect(page.locator(selector).first).to_be_hidden()


def settings_offer_nothing_refused(page, gate: str, project: int) -> None:
    """The project's settings as a member sees them: each page its menu links to opens and works; the pages
    that hold only what the gate refuses (storage, webhooks, the Danger Zone with Delete Project) are not in
    it; and the Danger Zone opened by its address is the gate's refusal, not a page that says a project was
    deleted when it was not."""
    from playwright.sync_api import expect

    page.goto(f"{gate}/projects/{project}/settings")
    expect(page.locator(".lsf-sidebar-menu__navigation")).to_be_visible(timeout=SETTLE_MS)
    links = [c.selector for c in CONTROLS if c.selector.startswith('a[href$="/settings/')]
    for selector in links:
        if selector in HIDDEN_CONTROLS:
            hidden_here(page, selector)
    for selector in links:
        if selector not in HIDDEN_CONTROLS:
            page.locator(selector).click()
            expect(page.locator(selector)).to_have_class(re.compile(r"__item_active"), timeout=SETTLE_MS)
            page.wait_for_load_state("networkidle")
            if selector.endswith('/ml"]'):  # no model yet: its Connect button would only be refused
                hidden_here(page, 'button[aria-label="Add machine learning model"]')
    danger = page.goto(f"{gate}/projects/{project}/settings/danger-zone")
    assert danger is not None and danger.status == 403 and danger.headers.get(REFUSED_HEADER.lower()) == "refused"
    expect(page.get_by_text("Refused by the access gate")).to_be_visible()
    expect(page.get_by_text("Delete Project")).to_have_count(0)
    expect(page.get_by_text("deleted successfully")).to_have_count(0)


def account_offers_nothing_refused(page, gate: str) -> None:
    """The account page and the main menu: what changes Label Studio's user record (name, avatar, e-mail
    settings) and the organization's people page are not offered; the tokens and membership are."""
    from playwright.sync_api import expect

    page.goto(f"{gate}/user/account")
    expect(page.get_by_text("Membership Info", exact=True).first).to_be_visible(timeout=SETTLE_MS)
    hidden_here(page, "#personal-info form")
    hidden_here(page, 'a[href="/user/account/email-preferences"]')
    page.locator(".main-menu-trigger").click()
    expect(page.locator('a[href="/projects"]').first).to_be_visible(timeout=SETTLE_MS)
    hidden_here(page, 'a[href="/organization"]')
    page.keyboard.press("Escape")


def test_an_annotator_is_offered_nothing_the_gate_refuses(team, label_studio):
    """tove, as she works: every control Label Studio shows her sends what the gate passes, or is not there."""
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    gate = team["gate"]
    project = next(r["project_id"] for r in team["rows"] if r["annotator"] == AUTHOR)
    with recorded_session(gate, AUTHOR, team["password"]) as (page, recorded):
        settings_offer_nothing_refused(page, gate, project)
        account_offers_nothing_refused(page, gate)
    assert recorded.refused_by_gate() == [(403, "GET", f"/projects/{project}/settings/danger-zone")]
    assert unexpected(recorded) == [(403, "GET", f"/projects/{project}/settings/danger-zone")]
    kept = requests.get(f"{label_studio['url']}/api/dm/project/?project={project}", timeout=30,
                        headers={"Authorization": f"Token {label_studio['token']}"})
    assert kept.status_code == 200 and kept.json()["title"] == f"LivingScreen authoring · {AUTHOR}"
