"""A reviewer's own path through Label Studio, in a real browser (Debian's chromium): log in as an
annotator, find one's review project beside one's authoring project, read a task another annotator
wrote without its answer, answer it differently, flag it and say why; the import escalates it."""

import re

import pytest

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.config import load_config
from curation.qc.review import export_reviews, import_reviews
from curation.qc.shortcut.filter import filter_shortcuts
from curation.tasks.lifecycle import state_of
from tests.annotate.test_browser_annotator import CHROMIUM, SETTLE_MS, choose, launch_chromium, log_in, submit, write
from tests.conftest import ROOT
from tests.labelstudio import login
from tests.qc.helpers import planted_catalog
from tests.qc.test_qc_labelstudio import LABEL, answer, authoring_result

pytestmark = pytest.mark.servers  # a real Label Studio / chromium

SCREENSHOT = ROOT / "build" / "reports" / "reviewer_task.png"
COMMENT = "两种和三种都说得通：第二个视频里还有一只鸟"
LETTERS = "ABCDEF"


def open_review(page, url: str, project_id: int, task_id: int) -> None:
    """The review task's labeling view, once Label Studio has settled (it adds a tab to the URL)."""
    from playwright.sync_api import expect

    page.goto(f"{url}/projects/{project_id}/data?task={task_id}")
    expect(page).to_have_url(re.compile(r"[?&]tab="), timeout=SETTLE_MS)
    expect(page.locator('input.ant-checkbox-input[name="A"]')).to_be_visible(timeout=SETTLE_MS)


def test_reviewer_answers_blind_flags_and_comments_in_the_browser(clustered_catalog, label_studio):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    from playwright.sync_api import expect, sync_playwright

    cat, url, config = clustered_catalog, label_studio["url"], load_config()
    feeds = planted_catalog(cat, 2, seed=61)
    export_to_label_studio(cat, [], label_studio["media"], feed_ids=[feeds[0]], add=["gina"])
    export_to_label_studio(cat, [], label_studio["media"], feed_ids=[feeds[1]], add=["hugo"])
    for row in cat.rows("SELECT * FROM ls_tasks WHERE feed_id IN (?, ?)", feeds):  # each writes one label task
        person = row["annotator"]
        session = login(url, f"{person}@annotators.local", label_studio["annotator_password"])
        answer(session, url, row["ls_task_id"], authoring_result(LABEL))
    assert import_from_label_studio(cat, config.feeds)["new"] == 2
    assert filter_shortcuts(cat, config.qc.shortcut)["passed"] == 2
    assert export_reviews(cat, ["gina", "hugo"], seed=1, media_root=label_studio["media"])["sent"] == 2
    authors = {r["task_id"]: r["author"] for r in cat.rows("SELECT task_id, author FROM tasks")}
    mine = cat.rows("SELECT * FROM qc_items WHERE purpose = 'review' AND person = 'hugo'")
    assert len(mine) == 1 and authors[mine[0]["task_id"]] == "gina"  # he reviews gina's task, not his own
    task_id, project, ls_task = mine[0]["task_id"], mine[0]["project_id"], mine[0]["ls_task_id"]

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        log_in(page, url, "hugo@annotators.local", label_studio["annotator_password"])

        # his projects page: his review queue and his own authoring project, nobody else's
        page.goto(f"{url}/projects/")
        cards = page.locator(".lsf-project-card__title-text")
        expect(cards).to_have_count(2, timeout=SETTLE_MS)
        assert sorted(cards.all_inner_texts()) == ["LivingScreen authoring · hugo", "LivingScreen review · hugo"]

        # the task reads as gina wrote it: instruction and options, but not her answer
        open_review(page, url, project, ls_task)
        shown = page.locator(".ls-task")
        expect(shown).to_contain_text(LABEL["instruction"], timeout=SETTLE_MS)
        for line in LABEL["options"].splitlines():
            letter, option = line.split(": ")
            expect(shown.locator("li", has_text=option)).to_contain_text(letter)
        for letter in LETTERS:
            box = page.locator(f'input.ant-checkbox-input[name="{letter}"]')
            expect(box).to_be_visible()
            expect(box).not_to_be_checked()
        expect(page.locator("input.ant-checkbox-input:checked")).to_have_count(0)
        expect(page.locator('textarea[name="platform_state"]')).to_have_value("")
        expect(page.locator('[data-testid="htx-textbox-content"]')).to_have_count(0)  # nothing written yet
        data = page.request.get(f"{url}/api/tasks/{ls_task}").json()["data"]
        assert not {"answer", "eval_config", "options", "platform_state"} & set(data)

        # he answers C, flags it as ambiguous and says why
        choose(page, "C")
        choose(page, "有歧义 Ambiguous")
        write(page, "comment", COMMENT)
        expect(page.locator('input.ant-checkbox-input[name="C"]')).to_be_checked()
        expect(page.locator('input.ant-checkbox-input[name="B"]')).not_to_be_checked()
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=False)
        submit(page, url, ls_task, "submit")
        browser.close()
    assert SCREENSHOT.stat().st_size > 10_000

    counts = import_reviews(cat)
    assert (counts["reviews"], counts["escalated"], counts["reviewed_ok"], counts["unanswered"]) == (1, 1, 0, 1)
    assert state_of(cat, task_id, 1) == "escalated"
    review = cat.rows("SELECT * FROM reviews WHERE task_id = ?", [task_id])
    assert len(review) == 1
    review = review[0]
    assert (review["reviewer"], review["answer"], list(review["flags"]), review["comment"]) == (
        "hugo", "C", ["ambiguous"], COMMENT)
    assert review["reason"] == f"flagged ambiguous; answers differ: author B, reviewer C; comment: {COMMENT}"
    assert import_reviews(cat)["unchanged"] == 1
