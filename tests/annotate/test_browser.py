"""An annotator's view of an authoring task, in a real browser (Debian's chromium), logged in as her."""

from pathlib import Path

import pytest

from curation.annotate.export import export_to_label_studio
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set, load_feed
from tests.conftest import ROOT

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server / chromium

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = ROOT / "build" / "reports" / "annotation_task.png"


def test_authoring_task_shows_the_feed_as_text(clustered_catalog, label_studio, ls_client):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    from playwright.sync_api import expect, sync_playwright

    cat = clustered_catalog
    build_feed_set(cat, load_config().feeds, 2, seed=33)
    feed = load_feed(cat, "feed-33-0000")
    cat.con.execute("UPDATE videos SET title = '<script>window.__pwned = 1</script>脚本标题' WHERE video_id = ?",
                    [feed.video_feed[0]])
    export_to_label_studio(cat, [], label_studio["media"], feed_ids=["feed-33-0000"], add=["carol"])
    project_id, task_id = cat.con.execute("SELECT project_id, ls_task_id FROM ls_tasks WHERE feed_id = ?",
                                          ["feed-33-0000"]).fetchone()
    titles = dict(cat.con.execute("SELECT video_id, title FROM videos WHERE list_contains(?, video_id)",
                                  [feed.video_feed]).fetchall())
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-quic"])
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{label_studio['url']}/user/login/")  # as the annotator the feed went to
        page.fill("input[name=email]", "carol@annotators.local")
        page.fill("input[name=password]", label_studio["annotator_password"])
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(f"{label_studio['url']}/projects/{project_id}/data?task={task_id}")
        # Label Studio re-renders the task once it settles (the URL gains a tab): wait for
        # the whole feed rather than the first card.
        expect(page.locator(".ls-video")).to_have_count(len(feed.video_feed), timeout=90_000)
        for position, video_id in enumerate(feed.video_feed, start=1):
            card = page.locator(f'.ls-video[data-position="{position}"]')
            shown = card.locator(".ls-title").inner_text()
            expected = titles.get(video_id) or ""
            if expected:  # Chinese titles come through as text (HTML folds runs of spaces)
                assert " ".join(shown.split()) == " ".join(expected.split())
        assert "<script>window.__pwned = 1</script>脚本标题" in page.locator(
            '.ls-video[data-position="1"] .ls-title').inner_text()
        assert page.evaluate("window.__pwned") is None
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=False)
        browser.close()
    assert SCREENSHOT.stat().st_size > 10_000
