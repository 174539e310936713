"""`curate annotate status` reads the life cycle: a discarded, a deleted and a sent-back task show as
what they are, never as "ok"."""

from __future__ import annotations

from tests.cli.test_cli import curate
from tests.qc.helpers import finish_qc, plant_task, planted_catalog


def test_annotate_status_shows_each_task_in_its_life_cycle_state(clustered_catalog):
    cat = clustered_catalog
    feeds = planted_catalog(cat, n_feeds=4)
    for n, feed in enumerate(feeds, start=1):
        plant_task(cat, f"feature_analysis_{n}", feed, tier="L2", subcategory="feature_analysis", eval_type="label",
                   instruction="几只猫？", options={"A": "一只", "B": "两只"}, eval_config=[{"answer": "A"}],
                   status="needs_fix" if n == 4 else "ok")
    cat.con.execute("UPDATE task_transitions SET reason = 'answer-missing: no answer given' "
                    "WHERE task_id = 'feature_analysis_4' AND to_state = 'needs_fix'")
    finish_qc(cat, "feature_analysis_1", end="shortcut_discarded")
    finish_qc(cat, "feature_analysis_2", end="deleted")
    path = str(cat.path)
    cat.close()
    out = curate("--catalog", path, "annotate", "status")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "4 tasks: 1 deleted, 1 needs_fix, 1 shortcut_discarded, 1 valid"
    assert lines[1].startswith("feature_analysis_4 v1 (alice, ") and lines[2] == "  - answer-missing: no answer given"
