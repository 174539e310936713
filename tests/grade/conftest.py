"""A release whose videos have known durations, for grading."""

from __future__ import annotations

import json

import pytest

from curation.release.build import build_release
from tests.release.helpers import reviewed_catalog, settings


@pytest.fixture
def released(clustered_catalog, tmp_path):
    cat = clustered_catalog
    reviewed_catalog(cat)
    build_release(cat, "1.0.0", settings(tmp_path / "releases"))
    tasks = {r["task_id"]: json.loads(r["runner"]) for r in cat.rows("SELECT * FROM release_tasks")}
    # every video of the feeds lasts 10 s, except the first of feature_analysis_1's, which lasts 20 s
    cat.con.execute("UPDATE videos SET duration_s = 10.0 WHERE list_contains(?, video_id)",
                    [sorted({v for t in tasks.values() for v in t["video_feed"]})])
    cat.con.execute("UPDATE videos SET duration_s = 20.0 WHERE video_id = ?",
                    [tasks["feature_analysis_1"]["video_feed"][0]])
    return cat, tasks
