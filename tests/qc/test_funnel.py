"""The QC funnel adds up: a scripted history, walked through the real commands where a test can run them
(import, accept-imported, the shortcut filter, the report) and through the life cycle where a person would
answer in Label Studio (review outcomes, the group's decisions), then every cell checked against numbers
counted by hand from the script below."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from curation.core.catalog import Catalog
from curation.core.stage import StageRun
from curation.qc.funnel import END_STATES, PATH, STAGES, funnel_rows
from curation.tasks.lifecycle import STATES, move
from tests.cli.test_cli import curate
from tests.conftest import grading_runner_profile
from tests.qc.helpers import plant_task
from tests.release.test_livingscreen import write_release

# the five tasks of the imported release (tests/release/test_livingscreen.py RELEASE), accepted as inherited:
# gui_like_7 and gui_temporal_pause_2 (L1), feature_analysis_12 and robust_evaluation_3 (L2), moderation_4 (L3)
GIVEAWAY = "橘色的猫第一次见到雪"
CATS = {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}
BIRDS = {"A": "三只", "B": "四只", "C": "五只"}


def _ok(out) -> str:
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _label(cat: Catalog, task_id: str, feed: str, options: dict[str, str], answer: str, *, version: int = 1,
           subcategory: str = "feature_analysis", status: str = "ok") -> None:
    plant_task(cat, task_id, feed, tier="L2", subcategory=subcategory, eval_type="label",
               instruction="视频里的是什么？", options=options, eval_config=[{"answer": answer}], version=version,
               status=status)


def _walk(run: StageRun, task_id: str, version: int, *states: str) -> None:
    for state in states:
        assert move(run, task_id, version, state, who="the script")


@pytest.fixture(scope="module")
def scripted(tmp_path_factory) -> Iterator[tuple[Path, Path]]:
    """The history every expected number below is counted from, by a team whose runner grades playback (the
    imported gui_temporal_pause_2 is inherited: the public runner could not grade it, tests/tasks/test_idle.py)."""
    folder = tmp_path_factory.mktemp("funnel")
    before = os.environ.get("CURATE__RUNNER__PROFILE")
    os.environ["CURATE__RUNNER__PROFILE"] = str(grading_runner_profile(folder))
    try:
        yield _script(folder)
    finally:
        if before is None:
            os.environ.pop("CURATE__RUNNER__PROFILE")
        else:
            os.environ["CURATE__RUNNER__PROFILE"] = before


def _script(folder: Path) -> tuple[Path, Path]:
    db = str(folder / "c.duckdb")
    _ok(curate("--catalog", db, "release", "import-livingscreen", str(write_release(folder / "v1")),
               "--version", "1.0.0"))
    _ok(curate("--catalog", db, "qc", "accept-imported", "1.0.0", "--reason", "the public v1", "--by", "lena"))
    with Catalog(db) as cat:
        feeds = {r[0]: r[1] for r in cat.con.execute("SELECT task_id, feed_id FROM tasks").fetchall()}
        cat_feed, other_feed = feeds["feature_analysis_12"], feeds["moderation_4"]
        cat.con.execute("UPDATE videos SET title = ? WHERE video_id = (SELECT video_feed[1] FROM feeds WHERE "
                        "feed_id = ? ORDER BY version DESC LIMIT 1)", [GIVEAWAY, cat_feed])
        for task_id in ("feature_analysis_901", "feature_analysis_902", "feature_analysis_904",
                        "feature_analysis_905", "feature_analysis_906"):
            _label(cat, task_id, other_feed, BIRDS, "B")
        _label(cat, "feature_analysis_903", cat_feed, CATS, "C")  # its feed's title gives the answer away
        _label(cat, "event_association_901", other_feed, BIRDS, "A", subcategory="event_association")
        plant_task(cat, "moderation_901", other_feed, tier="L3", subcategory="moderation", eval_type="platform",
                   instruction="举报不实视频", options=None,
                   eval_config=[{"func": "eval_report", "args": {"video_ids": 1, "expected_cat": "不实信息"}}])
        plant_task(cat, "gui_like_901", other_feed, tier="L1", subcategory="gui_like", eval_type="platform",
                   instruction="给第二个视频点赞", options=None,
                   eval_config=[{"func": "eval_like", "args": {"video_ids": 1}}])
        # a rename: the annotator changed the sub-category, the old id is retired, the task goes on as v2
        _label(cat, "event_association_902", other_feed, BIRDS, "C", subcategory="event_association")
        run = StageRun("script", "script-1", cat)
        _walk(run, "event_association_902", 1, "retired")
        _label(cat, "feature_analysis_907", other_feed, BIRDS, "C", version=2)
    _ok(curate("--catalog", db, "qc", "shortcut", "--no-report"))
    with Catalog(db) as cat:
        run = StageRun("script", "script-2", cat)
        for task_id in ("feature_analysis_901", "feature_analysis_902", "feature_analysis_907"):
            _walk(run, task_id, 2 if task_id.endswith("907") else 1, "reviewed_ok")
        _walk(run, "feature_analysis_904", 1, "escalated", "revised")  # the group rewrote it ...
        _label(cat, "feature_analysis_904", other_feed, BIRDS, "A", version=2)  # ... as v2, round again
        _walk(run, "moderation_901", 1, "escalated", "deleted")
        _walk(run, "event_association_901", 1, "escalated")  # the group has not met yet
        _walk(run, "feature_analysis_905", 1, "escalated", "kept")
    _ok(curate("--catalog", db, "qc", "shortcut", "--no-report"))
    with Catalog(db) as cat:
        run = StageRun("script", "script-3", cat)
        _walk(run, "feature_analysis_904", 2, "reviewed_ok")
        # a later configuration discards a task the first one passed (the case the old funnel counted twice)
        _walk(run, "feature_analysis_906", 1, "shortcut_discarded")
        _label(cat, "feature_analysis_908", other_feed, BIRDS, "A")  # waits for the filter
        _label(cat, "feature_analysis_909", other_feed, BIRDS, "", status="needs_fix")
    return Path(db), folder


# Counted by hand from the script: 5 inherited + 12 authored here (901..909, event_association_901,
# moderation_901, gui_like_901; feature_analysis_907 is the renamed event_association_902) = 17 tasks.
EXPECTED_ALL = {
    # end states: 909 | 908 | the five of v1 | 903, 906 | gui_like_901 | 901, 902, 904 v2, 907 | event_901 |
    # 905 | moderation_901
    "needs_fix": 1, "unvalidated": 0, "valid": 1, "inherited": 5, "shortcut_discarded": 2, "shortcut_passed": 1,
    "reviewed_ok": 4, "escalated": 1, "kept": 1, "deleted": 1, "retired_after_audit": 0,
    # stages: all but 909 valid; through the filter: the 2 discarded and the 8 past it; to the group on any
    # version: 904 (at v1, revised), 905, moderation_901, event_901; decided: all but event_901
    "tasks": 17, "validated": 16, "through_filter": 10, "passed_filter": 8, "reviewed": 7, "sent_to_group": 4,
    "decided": 3, "releasable": 10,
    # on the way: 904 revised; 901, 902, 904, 905, 907, event_901, moderation_901 reviewed; gui_like_901 is an L1
    # platform task the filter passes on unjudged; moderation_901, an L3 platform task, had a verdict that its
    # only inspector (the lexical one, multiple choice only) could not read; event_association_902 retired
    "authored_here": 12, "imported": 5, "revised": 1, "went_through_review": 7, "not_filtered": 1, "unread": 1,
    "retired": 1,
}
EXPECTED_GROUPS = {
    # 901..909 and the inherited feature_analysis_12
    "L2 feature_analysis": {
        "needs_fix": 1, "unvalidated": 0, "valid": 1, "inherited": 1, "shortcut_discarded": 2, "shortcut_passed": 0,
        "reviewed_ok": 4, "escalated": 0, "kept": 1, "deleted": 0, "tasks": 10, "validated": 9, "through_filter": 7,
        "passed_filter": 5, "reviewed": 5, "sent_to_group": 2, "decided": 2, "releasable": 6, "authored_here": 9,
        "imported": 1, "revised": 1, "went_through_review": 5, "not_filtered": 0, "unread": 0, "retired": 0},
    # event_association_901 escalated; event_association_902 renamed away
    "L2 event_association": {
        "needs_fix": 0, "unvalidated": 0, "valid": 0, "inherited": 0, "shortcut_discarded": 0, "shortcut_passed": 0,
        "reviewed_ok": 0, "escalated": 1, "kept": 0, "deleted": 0, "tasks": 1, "validated": 1, "through_filter": 1,
        "passed_filter": 1, "reviewed": 1, "sent_to_group": 1, "decided": 0, "releasable": 0, "authored_here": 1,
        "imported": 0, "revised": 0, "went_through_review": 1, "not_filtered": 0, "unread": 0, "retired": 1},
    # gui_like_901 and the inherited gui_like_7 and gui_temporal_pause_2
    "L1": {
        "needs_fix": 0, "unvalidated": 0, "valid": 0, "inherited": 2, "shortcut_discarded": 0, "shortcut_passed": 1,
        "reviewed_ok": 0, "escalated": 0, "kept": 0, "deleted": 0, "tasks": 3, "validated": 3, "through_filter": 1,
        "passed_filter": 1, "reviewed": 0, "sent_to_group": 0, "decided": 0, "releasable": 2, "authored_here": 1,
        "imported": 2, "revised": 0, "went_through_review": 0, "not_filtered": 1, "unread": 0, "retired": 0},
}


def test_every_cell_of_the_funnel_matches_the_script(scripted):
    db, _ = scripted
    with Catalog(db, read_only=True) as cat:
        rows = {(r["level"], r["group"]): r for r in funnel_rows(cat)}
    total = rows[("all", "all")]
    assert {k: total[k] for k in EXPECTED_ALL} == EXPECTED_ALL
    assert total["adds_up"] and total["end_state_sum"] == 17
    # the paper's rates from the same cells: 6 kept of the 8 the filter judged (moderation_901 passed unread);
    # 1 deleted and 1 revised of 7
    assert (total["kept_by_filter"], total["judged_by_filter"]) == (6, 8)
    assert total["shortcut_retained"] == pytest.approx(6 / 8, abs=1e-4)
    assert total["deleted_after_review"] == pytest.approx(1 / 7, abs=1e-4)
    assert total["revised_after_review"] == pytest.approx(1 / 7, abs=1e-4)
    for name, expected in EXPECTED_GROUPS.items():
        level = "tier" if " " not in name else "subcategory"
        assert {k: rows[(level, name)][k] for k in expected} == expected, name
    feature = rows[("subcategory", "L2 feature_analysis")]
    assert (feature["shortcut_retained"], feature["deleted_after_review"], feature["revised_after_review"]) == (
        pytest.approx(5 / 7, abs=1e-4), 0.0, 0.2)
    # every group adds up, and the tiers share out the whole
    assert all(r["adds_up"] for r in rows.values())
    assert sum(r["tasks"] for (level, _), r in rows.items() if level == "tier") == 17


def test_the_command_line_prints_the_same_cells_and_the_check(scripted):
    db, folder = scripted
    out = _ok(curate("--catalog", str(db), "qc", "report", "--out", str(folder / "qc.html")))
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert lines[0] == "17 tasks, each counted once by its latest version, in its current state:"
    for key, label in (*END_STATES, *PATH):
        assert f"{label} {EXPECTED_ALL[key]}" in lines, (label, out)
    assert "= 17 end states for 17 tasks: adds up" in lines
    assert ("tasks 17 → valid 16 → through the shortcut filter 10 → passed it 8 → reviewed 7 → escalated to the "
            "group 4 → decided by the group 3; may be released 10") in lines
    assert "kept by the shortcut filter 75.0% (6 of 8 judged) paper 74.3%" in lines
    assert "deleted after review 14.3% (1 of 7 went through review) paper 14.2%" in lines
    assert "revised after review 14.3% (1 of 7 went through review) paper 22.0%" in lines
    report = (folder / "qc.html").read_text(encoding="utf-8")
    assert "= 17 end states for 17 tasks: adds up" in report and "<td>6 of 8 judged</td>" in report
    assert "<td>L2 event_association</td>" in report


def test_a_task_in_a_state_no_cell_shows_fails_the_check(scripted, tmp_path):
    """The check is not true by construction: a latest version left in `revised` (a revision whose new version
    was never written) is named, and the command fails."""
    db, _ = scripted
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(db.read_bytes())
    with Catalog(broken) as cat:
        cat.con.execute("DELETE FROM tasks WHERE task_id = 'feature_analysis_904' AND version = 2")
        cat.con.execute("DELETE FROM task_transitions WHERE task_id = 'feature_analysis_904' AND version = 2")
    with Catalog(broken, read_only=True) as cat:
        total = funnel_rows(cat)[0]
    assert (total["tasks"], total["end_state_sum"], total["adds_up"], total["unshown"]) == (17, 16, False,
                                                                                          "revised: 1")
    out = curate("--catalog", str(broken), "qc", "report", "--out", str(tmp_path / "qc.html"))
    assert out.returncode == 1, out.stdout + out.stderr
    assert ("= 16 end states for 17 tasks: does NOT add up (1 in state revised, which no cell shows)"
            in out.stdout), out.stdout


def test_every_life_cycle_state_has_its_place():
    """A state added to the life cycle must be given a cell here, or a task in it would drop out unseen."""
    shown = {key for key, _ in END_STATES} | {"authored", "imported"}  # both count as not validated yet
    never_current = {"revised", "retired"}  # a revision is the next version; a retired id is not a task
    assert set(STATES) - never_current <= shown
    assert [key for key, _ in STAGES][0] == "tasks"


def test_validate_counts_every_error_line_it_prints(clustered_catalog):
    """A version sent back to its author is an error line in `qc validate`: the summary counts it."""
    from tests.qc.helpers import planted_catalog

    cat = clustered_catalog
    (feed,) = planted_catalog(cat, 1, seed=97)
    _label(cat, "feature_analysis_1", feed, BIRDS, "", status="needs_fix")
    cat.con.execute("UPDATE task_transitions SET reason = 'answer-missing: no answer chosen' "
                    "WHERE to_state = 'needs_fix'")
    db = str(cat.path)
    cat.close()
    out = curate("--catalog", db, "qc", "validate")
    errors = [line for line in out.stdout.splitlines() if "\terror\t" in line]
    assert out.returncode == 1 and len(errors) == 1, out.stdout
    assert "1 tasks checked: 1 errors, 0 warnings" in out.stdout


def test_a_task_retired_in_an_audit_is_not_counted_as_the_groups_deletion(clustered_catalog):
    """A released task retired after an audit stands where its release had it (reviewed, not escalated), in a cell
    of its own; the paper's 'deleted after review' counts only what review sent to the group."""
    from tests.qc.helpers import planted_catalog

    cat = clustered_catalog
    feeds = planted_catalog(cat, 2, seed=71)
    run = StageRun("script", "script-audit", cat)
    for n, feed in enumerate(feeds, start=1):
        _label(cat, f"feature_analysis_{n}", feed, BIRDS, "A")
        _walk(run, f"feature_analysis_{n}", 1, "shortcut_passed", "reviewed_ok")
    _walk(run, "feature_analysis_2", 1, "deleted")  # the audit's retire: reviewed_ok -> deleted
    total = funnel_rows(cat)[0]
    assert (total["retired_after_audit"], total["deleted"], total["reviewed_ok"]) == (1, 0, 1)
    assert (total["reviewed"], total["sent_to_group"], total["decided"], total["releasable"]) == (2, 0, 0, 1)
    assert total["adds_up"]
