"""Every file a release holds is described where its readers look: each data file in croissant.json's distribution
(with the manifest's hash), and every file in the dataset card. A file added to `build_release` without them fails
here (docs/development.md, "How to add…", a release artefact); a release with a Lite config holds the most."""

from __future__ import annotations

import json
from pathlib import Path

from curation.grade.lite_plan import lite_planner
from curation.release.build import build_release
from curation.release.croissant import CROISSANT
from curation.release.lite_config import LITE_FILE
from curation.release.manifest import MANIFEST
from tests.qc.helpers import finish_qc, plant_task
from tests.release.helpers import reviewed_catalog, settings
from tests.release.test_lite_release import graded_ladder

CARD = "README.md"
# the files about the release rather than its data: the card names them, Croissant does not describe them
ABOUT = {CARD, "CHANGELOG.md", MANIFEST, CROISSANT, "health.json", "health.svg"}


def undescribed(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """(files Croissant does not describe, files whose Croissant hash is not the manifest's, files the card does
    not name)."""
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    croissant = json.loads((folder / CROISSANT).read_text(encoding="utf-8"))
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    described = {f["contentUrl"]: f["sha256"] for f in croissant["distribution"] if "contentUrl" in f}
    card = (folder / CARD).read_text(encoding="utf-8")
    return ([f for f in files if f not in ABOUT and f not in described],
            [f for f, sha in described.items() if manifest["files"][f]["sha256"] != sha],
            [f for f in files if f != CARD and f not in card and f"`{f.split('/')[0]}/`" not in card])


def test_every_file_of_a_release_is_in_croissant_and_the_card(clustered_catalog, tmp_path):
    cat = clustered_catalog
    feeds = reviewed_catalog(cat)
    folder = build_release(cat, "1.0.0", settings(tmp_path), repo="org/tasks").folder
    assert undescribed(folder) == ([], [], [])
    graded_ladder(cat, "1.0.0")  # three models graded on it, a task added: v1.1.0 with a Lite config
    plant_task(cat, "gui_collect_1", feeds[0], tier="L1", subcategory="gui_collect", eval_type="platform",
               instruction="收藏第一个视频", options=None,
               eval_config=[{"func": "eval_collect", "args": {"video_ids": 0}}])
    finish_qc(cat, "gui_collect_1")
    lite = build_release(cat, "1.1.0", settings(tmp_path), repo="org/tasks", lite=lite_planner(3)).folder
    assert (lite / LITE_FILE).is_file() and undescribed(lite) == ([], [], [])
