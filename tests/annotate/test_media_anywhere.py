"""The feed videos play in Label Studio whichever folder `curate` runs from (issue 30: once a `build/media`
existed in the working folder, `annotate export` failed with "must be a subdirectory of
LOCAL_FILES_DOCUMENT_ROOT"; without one, every card said "No video files").

The team's project folder holds the served media (`media/`, the server's document root is the folder
itself) and a curation.toml naming it relatively; a person normalises there, then exports from their own
folder, which has a `build/media` of its own and no curation.toml."""

from __future__ import annotations

import re
import shutil
from html import unescape

import pytest
import requests

from curation.core.catalog import Catalog
from curation.corpus.feeds import load_feed
from tests.labelstudio import login
from tests.media.conftest import ffmpeg
from tests.qc.helpers import curate_in, planted_catalog

pytestmark = pytest.mark.servers


def test_an_export_from_another_folder_serves_the_normalised_media(clustered_catalog_file, label_studio, tmp_path):
    project = label_studio["media"].parent  # what the server serves: <project>/media/...
    catalog = tmp_path / "catalog.duckdb"
    shutil.copy(clustered_catalog_file, catalog)
    with Catalog(catalog) as cat:
        feed = load_feed(cat, planted_catalog(cat, 1, seed=71)[0])
    fakesv = [v.split("/", 1)[1] for v in feed.video_feed if v.startswith("FakeSV/")]
    assert fakesv, "the planted feed has FakeSV videos"
    clips = tmp_path / "clips"
    clips.mkdir()
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=180x320:rate=25", "-t", "1", "-c:v", "libx264", str(clips / "a.mp4"))
    for native in fakesv:
        shutil.copyfile(clips / "a.mp4", clips / f"{native}.mp4")
    (clips / "a.mp4").unlink()
    (project / "curation.toml").write_text('[media]\noutput_dir = "media"\nwidth = 180\nheight = 320\n')
    for step in (("media", "scan", str(clips), "--source", "FakeSV"), ("media", "probe", "--workers", "1"),
                 ("media", "normalise", "--workers", "1")):
        done = curate_in(project, "--catalog", str(catalog), *step)
        assert done.returncode == 0, done.stderr

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "build" / "media").mkdir(parents=True)  # a folder of the same name, not the served one
    done = curate_in(elsewhere, "--catalog", str(catalog), "annotate", "export", "--feed", feed.feed_id,
                     "--add", "wanda")
    assert done.returncode == 0, done.stderr

    with Catalog(catalog, read_only=True) as cat:
        task_id = cat.scalar("SELECT ls_task_id FROM ls_tasks WHERE feed_id = ?", [feed.feed_id])
    wanda = login(label_studio["url"], "wanda@annotators.local", label_studio["annotator_password"])
    html = wanda.get(f"{label_studio['url']}/api/tasks/{task_id}/").json()["data"]["feed_html"]
    sources = [unescape(s) for s in re.findall(r'<video[^>]* src="([^"]+)"', html)]
    assert len(sources) == len(fakesv), "a video for every FakeSV card"
    for src in sources:
        played = wanda.get(f"{label_studio['url']}{src}")
        assert played.status_code == 200 and played.content[4:8] == b"ftyp", src
    stranger = requests.get(f"{label_studio['url']}{sources[0]}", timeout=30, allow_redirects=False)
    assert stranger.status_code != 200  # served to the logged-in, not to anyone
