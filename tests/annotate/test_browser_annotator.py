"""An annotator's own path through Label Studio, in a real browser (Debian's chromium): log in, see only
one's own project, play a feed's video, author a label task and a platform task, read the import's
feedback at the top of the task, fix it and see the feedback go."""

import json
import re
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from curation.annotate.export import export_to_label_studio
from curation.annotate.importer import import_from_label_studio
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set, load_feed
from curation.media.normalise import normalise_media
from curation.media.probe import probe_media
from curation.media.scan import scan_media
from tests.conftest import ROOT
from tests.media.conftest import ffmpeg

pytestmark = pytest.mark.servers  # a real Label Studio / LLM server / chromium

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = ROOT / "build" / "reports" / "annotator_task.png"
FEEDS = load_config().feeds
SETTLE_MS = 90_000  # Label Studio's first render of a task can be slow on a busy machine
NEEDS_FIX = 'answer "C" is not among the options A, B'


def launch_chromium(pw):
    """Debian's chromium, headless, with the flags this closed network needs (no background calls out)."""
    return pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=[
        "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"])


def log_in(page, url: str, email: str, password: str) -> None:
    page.goto(f"{url}/user/login/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("networkidle")
    assert "/user/login" not in page.url, f"{email} could not log in"


def open_task(page, url: str, project_id: int, task_id: int, videos: int) -> None:
    """The task's labeling view, once Label Studio has settled (it re-renders and adds a tab to the URL)."""
    from playwright.sync_api import expect

    page.goto(f"{url}/projects/{project_id}/data?task={task_id}")
    expect(page).to_have_url(re.compile(r"[?&]tab="), timeout=SETTLE_MS)
    expect(page.locator(".ls-video")).to_have_count(videos, timeout=SETTLE_MS)
    expect(page.locator('input[type=checkbox][name="L1"]')).to_be_visible(timeout=SETTLE_MS)


def choose(page, label: str) -> None:
    """Tick a choice by the label the annotator reads (single-choice groups drop the previous one)."""
    page.locator(f'input.ant-checkbox-input[name="{label}"]').check()


def write(page, name: str, text: str) -> None:
    """Type into a text box and press its Add button, as the box's hint asks."""
    from playwright.sync_api import expect

    box = page.locator(f'textarea[name="{name}"]')
    box.fill(text)
    page.locator(".lsf-text-area", has=box).get_by_test_id("textarea-add-button").click()
    added = page.locator(f'[data-testid="htx-textbox-content"][name^="{name}:"]')
    for line in text.splitlines():
        expect(added).to_contain_text(line)


def submit(page, url: str, task_id: int, button: str) -> None:
    """Press Submit (a new annotation) or Update (an edited one) and wait until the server has it."""
    from playwright.sync_api import expect

    saved = (re.compile(rf"/api/tasks/{task_id}/annotations/?(\?|$)") if button == "submit"
             else re.compile(r"/api/annotations/\d+/?(\?|$)"))
    method = "POST" if button == "submit" else "PATCH"
    with page.expect_response(lambda r: r.request.method == method and saved.search(r.url),
                              timeout=SETTLE_MS) as response:
        page.get_by_test_id(f"bottombar-{button}-button").click()
    assert response.value.ok, response.value.text()
    if button == "submit":  # a submitted annotation is edited from now on
        expect(page.get_by_test_id("bottombar-update-button")).to_be_visible(timeout=SETTLE_MS)
    assert len(page.request.get(f"{url}/api/tasks/{task_id}/annotations/").json()) == 1


def test_annotator_authors_gets_feedback_and_fixes_in_the_browser(clustered_catalog, label_studio, tmp_path):
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is not installed: `make test` installs it")
    from playwright.sync_api import expect, sync_playwright

    cat, url = clustered_catalog, label_studio["url"]
    build_feed_set(cat, FEEDS, 3, seed=51)
    feeds = [load_feed(cat, f"feed-51-{n:04d}") for n in range(3)]
    mine, theirs = feeds[:2], feeds[2]
    label_feed = next(f for f in mine if f.video_feed[0].startswith("FakeSV/"))
    platform_feed = next(f for f in mine if f is not label_feed)

    # a real clip for every video of dora's feeds (the app plays nothing else once FakeSV media is scanned),
    # normalised into the folder the server serves
    videos = sorted({v for f in mine for v in f.video_feed})
    clips = tmp_path / "clips"
    clips.mkdir()
    native = label_feed.video_feed[0].split("/", 1)[1]
    first = clips / f"{native}.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=360x640:rate=30", "-f", "lavfi", "-i",
           "sine=frequency=440:sample_rate=44100", "-t", "3", "-c:v", "libx264", "-c:a", "aac", "-shortest",
           str(first))
    for video in videos:
        if video != label_feed.video_feed[0]:
            shutil.copyfile(first, clips / f"{video.split('/', 1)[1]}.mp4")
    media = replace(load_config().media, output_dir=str(label_studio["media"]), width=180, height=320)
    assert sorted(v for v, _ in scan_media(cat, clips, "FakeSV", media).matched) == videos
    assert probe_media(cat, media, 1)["probed"] == len(videos)
    assert normalise_media(cat, media, 1)["normalised"] == len(videos)

    export_to_label_studio(cat, [], label_studio["media"], feed_ids=[f.feed_id for f in mine], add=["dora"])
    export_to_label_studio(cat, [], label_studio["media"], feed_ids=[theirs.feed_id], add=["erin"])
    where = {r["feed_id"]: (r["project_id"], r["ls_task_id"], r["annotator"])
             for r in cat.rows("SELECT feed_id, project_id, ls_task_id, annotator FROM ls_tasks")}
    project, label_task, _ = where[label_feed.feed_id]
    _, platform_task, _ = where[platform_feed.feed_id]
    erin_project, erin_task, erin = where[theirs.feed_id]
    assert erin == "erin" and where[label_feed.feed_id][2] == where[platform_feed.feed_id][2] == "dora"

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        log_in(page, url, "dora@annotators.local", label_studio["annotator_password"])

        # her projects page lists her project and nothing else; erin's is not reachable
        page.goto(f"{url}/projects/")
        expect(page.locator(".lsf-project-card__title-text")).to_have_text(
            ["LivingScreen authoring · dora"], timeout=SETTLE_MS)
        expect(page.get_by_text("LivingScreen authoring · erin")).to_have_count(0)
        assert page.request.get(f"{url}/api/projects/{erin_project}/").status == 404
        assert page.request.get(f"{url}/api/tasks/{erin_task}").status == 404
        page.goto(f"{url}/projects/{erin_project}/data?task={erin_task}")
        refused = page.get_by_text("Runtime error: No Project matches the given query.", exact=True)
        expect(refused).to_be_visible(timeout=SETTLE_MS)
        expect(page.locator(".ls-video")).to_have_count(0)

        # the feed's first video plays from Label Studio's local-files path, for her and not for strangers
        open_task(page, url, project, label_task, len(label_feed.video_feed))
        video = page.locator('.ls-video[data-position="1"] video')
        expect(video).to_have_count(1)
        src = video.get_attribute("src")
        assert src.startswith("/data/local-files/?d=") and src.endswith(f"FakeSV/{native}.mp4")
        served = page.request.get(url + src)
        assert served.ok and served.headers["content-type"] == "video/mp4"
        stranger = pw.request.new_context()
        assert stranger.get(url + src, max_redirects=0).status in (302, 401, 403)
        stranger.dispose()
        played, deadline = 0.0, time.monotonic() + 15
        while played <= 0.5 and time.monotonic() < deadline:  # (re-)start it if a re-render replaced it
            played = video.evaluate("v => { v.muted = true; if (v.paused) v.play().catch(() => {}); "
                                    "if (v.error) throw new Error(v.error.message || 'media error ' + v.error.code); "
                                    "return v.currentTime; }")
            page.wait_for_timeout(250)
        assert played > 0.5, f"the video did not play (currentTime {played})"

        # a label task, with an answer that is not among its options (on purpose)
        choose(page, "L2")
        choose(page, "L2 特征分析 Feature analysis")
        write(page, "instruction", "视频中出现了几只猫？")
        write(page, "options", "A: 一只\nB: 两只")
        choose(page, "C")
        submit(page, url, label_task, "submit")

        # a platform task on her second feed
        open_task(page, url, project, platform_task, len(platform_feed.video_feed))
        choose(page, "L1")
        choose(page, "L1 点赞 Like")
        write(page, "instruction", "给第一个视频点赞")
        write(page, "platform_state", "like 1")
        submit(page, url, platform_task, "submit")

        # the toolkit imports: the label task needs a fix, the platform task is fine
        counts = import_from_label_studio(cat, FEEDS)
        assert (counts["new"], counts["needs_fix"], counts["written_by_someone_else"]) == (2, 1, 0)
        rows = {r["ls_task_id"]: r for r in cat.rows(
            "SELECT t.*, s.state FROM tasks t JOIN task_states s USING (task_id, version) ORDER BY version")}
        label, platform = rows[label_task], rows[platform_task]
        assert (label["state"], label["tier"], label["subcategory"], label["eval_type"], label["author"]) == (
            "needs_fix", "L2", "feature_analysis", "label", "dora")
        assert json.loads(label["options"]) == {"A": "一只", "B": "两只"}
        assert label["instruction"] == "视频中出现了几只猫？"
        assert (platform["state"], platform["tier"], platform["subcategory"], platform["author"]) == (
            "valid", "L1", "gui_like", "dora")
        assert json.loads(platform["eval_config"]) == [{"func": "eval_like", "args": {"video_ids": 0}}]

        # she reads why at the top of the task, fixes the answer and presses Update
        open_task(page, url, project, label_task, len(label_feed.video_feed))
        expect(page.get_by_text(NEEDS_FIX)).to_be_visible(timeout=SETTLE_MS)
        expect(page.locator('input.ant-checkbox-input[name="C"]')).to_be_checked()
        choose(page, "B")
        expect(page.locator('input.ant-checkbox-input[name="C"]')).not_to_be_checked()
        submit(page, url, label_task, "update")

        counts = import_from_label_studio(cat, FEEDS)
        assert (counts["new"], counts["new_versions"], counts["unchanged"], counts["needs_fix"]) == (0, 1, 1, 0)
        versions = cat.rows("SELECT t.version, s.state, t.eval_config FROM tasks t JOIN task_states s "
                            "USING (task_id, version) WHERE ls_task_id = ? ORDER BY version", [label_task])
        assert [(v["version"], v["state"]) for v in versions] == [(1, "needs_fix"), (2, "valid")]
        assert json.loads(versions[1]["eval_config"]) == [{"answer": "B"}]

        open_task(page, url, project, label_task, len(label_feed.video_feed))
        expect(page.get_by_text("Needs a fix")).to_have_count(0)
        expect(page.get_by_text(NEEDS_FIX)).to_have_count(0)
        expect(page.locator('input.ant-checkbox-input[name="B"]')).to_be_checked()
        assert page.request.get(f"{url}/api/tasks/{label_task}").json()["data"]["feedback"] == ""

        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=False)
        browser.close()
    assert SCREENSHOT.stat().st_size > 10_000
