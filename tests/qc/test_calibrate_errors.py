"""Calibration's questions file: a feed that is not in the catalog is named as such, and only
that; a bug while looking a feed up is a failed run, not a "not in the catalog" message."""

from __future__ import annotations

from curation.core.catalog import Catalog
from tests.cli.planted import assert_bug_kept, curate_with_bug, last_run
from tests.cli.test_cli import curate
from tests.qc.helpers import planted_catalog


def questions_on(tmp_path, feed_id: str):
    path = tmp_path / "pilot.yaml"
    path.write_text(f"- feed: {feed_id}\n  question: 视频里是什么动物？\n  options: [A: 猫, B: 狗]\n", encoding="utf-8")
    return path


def feeds_catalog(cat: Catalog) -> tuple[str, list[str]]:
    ids = planted_catalog(cat, 3, seed=83)
    path = str(cat.path)
    cat.close()
    return path, ids


def test_a_bug_looking_up_a_feed_is_a_failed_run_not_a_missing_feed(clustered_catalog, tmp_path):
    db, ids = feeds_catalog(clustered_catalog)
    out = curate_with_bug("curation.qc.calibrate:load_feed", "KeyError:feed_id", "--catalog", db,
                          "qc", "calibrate", "export", "--add", "ivo,uma", "--questions",
                          str(questions_on(tmp_path, ids[0])))
    assert_bug_kept(out, db, "qc-calibrate-export", "KeyError: 'feed_id'", where="read_questions",
                    hidden="not in the catalog")
    with Catalog(db) as cat:
        assert cat.scalar("SELECT count(*) FROM qc_items") == cat.scalar("SELECT count(*) FROM qc_projects") == 0


def test_a_feed_id_with_a_typo_is_still_named_as_not_in_the_catalog(clustered_catalog, tmp_path):
    db, ids = feeds_catalog(clustered_catalog)
    typo = ids[0].replace("-00", "-0O", 1)  # a letter O for a zero, as people type it
    out = curate("--catalog", db, "qc", "calibrate", "export", "--add", "ivo,uma",
                 "--questions", str(questions_on(tmp_path, typo)))
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'pilot.yaml'}: question 1: feed '{typo}' is not in the catalog"]
    with Catalog(db) as cat:
        run = last_run(cat, "qc-calibrate-export")
        assert run["status"] == "failed" and f"feed '{typo}' is not in the catalog" in run["error"]
