"""Every stage, run once on real data, touches only the tables it declares (`curate describe`
prints the same declarations). The Label Studio stages are checked in tests/annotate."""

from __future__ import annotations

import subprocess
from dataclasses import replace

from curation.core.config import load_config
from curation.corpus.cluster import cluster_videos
from curation.corpus.embed import embed_keyword_sets
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feed_export import export_feeds
from curation.corpus.feeds import build_feed_set, load_feed
from curation.corpus.keywords import build_keyword_sets
from curation.grade.grade import grade_logs
from curation.grade.rewards import build_rewards
from curation.ingest import ingest_path
from curation.media.normalise import normalise_media
from curation.media.probe import probe_media
from curation.media.scan import scan_media
from curation.media.synthetic import register_synthetic
from curation.pipeline import all_stages
from curation.qc.accept import accept_imported
from curation.qc.funnel import qc_report
from curation.qc.shortcut.filter import filter_shortcuts
from curation.qc.validate import validate_catalog
from curation.release.build import build_release
from curation.release.envfeeds import export_env_feeds
from curation.release.livingscreen import export_livingscreen, import_livingscreen
from tests.conftest import FIXTURES
from tests.core.contract import run_traced
from tests.grade.logs import write_episode
from tests.qc.helpers import finish_qc, plant_task

# each traced where its server runs: tests/annotate, tests/qc, tests/grade (task audits: test_task_audit.py),
# tests/release/test_publish.py
SERVER_STAGES = {"annotate-export", "annotate-import", "qc-calibrate-export", "qc-calibrate-import",
                 "qc-review-export", "qc-review-import", "qc-adjudicate-export", "qc-adjudicate-import",
                 "release-publish", "grade-audit-export", "grade-audit-import", "qc-audit-tasks-export",
                 "qc-audit-tasks-import"}


def _clip(path, seconds: float = 1.0) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i", "testsrc=size=160x90:rate=10",
                    "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast", str(path)], check=True)


def test_every_stage_keeps_to_its_declared_tables(clustered_catalog, tmp_path):
    cat, config, seen = clustered_catalog, load_config(), set()
    run_traced(cat, "ingest", lambda: ingest_path(cat, "livebot", FIXTURES / "livebot"), seen)
    run_traced(cat, "keywords", lambda: build_keyword_sets(cat, config.keywords), seen)
    run_traced(cat, "embed", lambda: embed_keyword_sets(cat, config.embedding), seen)
    run_traced(cat, "cluster", lambda: cluster_videos(cat, replace(config.cluster, min_cluster_size=6),
                                                      config.embedding.model), seen)
    run_traced(cat, "feeds", lambda: build_feed_set(cat, config.feeds, 4, seed=99), seen)
    run_traced(cat, "feeds-edit", lambda: edit_feed(cat, "feed-99-0000", [{"op": "delete", "positions": [0]},
                                                                         {"op": "swap", "position": 0}],
                                                    config.feeds, author="carol"), seen)
    run_traced(cat, "feeds-export", lambda: export_feeds(cat, tmp_path / "feeds"), seen)

    clips = tmp_path / "clips"
    clips.mkdir()
    _clip(clips / "c1.mp4")
    (clips / "c2.mp4").write_text("not a video", encoding="utf-8")
    corpus, mapping = tmp_path / "clips.jsonl", tmp_path / "clips.toml"
    corpus.write_text('{"id": "c1"}\n{"id": "c2"}\n', encoding="utf-8")
    mapping.write_text('source = "Clip"\nformat = "jsonl"\n[fields]\nnative_id = "id"\n', encoding="utf-8")
    ingest_path(cat, "generic", corpus, mapping=mapping)
    media = replace(config.media, match={"Clip": "stem"}, output_dir=str(tmp_path / "out"), width=90, height=160)
    run_traced(cat, "media-scan", lambda: scan_media(cat, clips, "Clip", media), seen)
    run_traced(cat, "media-probe", lambda: probe_media(cat, media, 1), seen)
    run_traced(cat, "media-normalise", lambda: normalise_media(cat, media, 1), seen)
    generated = tmp_path / "generated"
    generated.mkdir()
    _clip(generated / "storm.mp4")
    run_traced(cat, "media-register-synthetic", lambda: register_synthetic(cat, generated, "gen1", media), seen)

    feed = load_feed(cat, "feed-99-0001")
    plant_task(cat, "feature_analysis_1", feed.feed_id, tier="L2", subcategory="feature_analysis",
               eval_type="label", instruction="Which video shows snow?", options={"A": "1", "B": "2"},
               eval_config=[{"answer": "A"}])
    run_traced(cat, "qc-validate", lambda: validate_catalog(cat, config.feeds), seen)
    run_traced(cat, "qc-shortcut", lambda: filter_shortcuts(cat, config.qc.shortcut), seen)
    run_traced(cat, "qc-report", lambda: qc_report(cat, tmp_path / "qc.html"), seen)
    finish_qc(cat, "feature_analysis_1", end="kept")
    release = replace(config.release, dir=str(tmp_path / "releases"))
    run_traced(cat, "release-build", lambda: build_release(cat, "1.0.0", release), seen)
    run_traced(cat, "release-export-livingscreen", lambda: export_livingscreen(cat, "1.0.0", tmp_path / "runner"), seen)
    run_traced(cat, "release-import-livingscreen", lambda: import_livingscreen(cat, tmp_path / "runner", "0.1.0"), seen)
    run_traced(cat, "qc-accept-imported", lambda: accept_imported(cat, "0.1.0", "the same tasks, carried over"), seen)
    run_traced(cat, "release-env-feeds", lambda: export_env_feeds(cat, "1.0.0", tmp_path / "env"), seen)
    write_episode(tmp_path / "logs", "feature_analysis_1", "Which video shows snow?", [("answer", {"text": "A"})], 1.0)
    run_traced(cat, "grade", lambda: grade_logs(cat, [("m", tmp_path / "logs")], "1.0.0", tmp_path / "grades"), seen)
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i", "color=c=red:s=376x812",
                    "-frames:v", "1", str(tmp_path / "logs" / "feature_analysis_1" / "step_0.png")], check=True)
    run_traced(cat, "rewards-build", lambda: build_rewards(cat, [("m", tmp_path / "logs")], "1.0.0",
                                                            tmp_path / "rewards", config.media), seen)

    declared = {s.name for s in all_stages()}
    assert declared - SERVER_STAGES == seen  # no stage left unchecked
    assert cat.scalar("SELECT count(*) FROM runs WHERE status <> 'ok'") == 0
