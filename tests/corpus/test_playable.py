"""Feeds the app can play: playable sources only, same-source distractors, media when scanned."""

from __future__ import annotations

from dataclasses import replace

import pytest

from curation.core.config import Config, SourceConfig, load_config
from curation.core.errors import FeedError
from curation.corpus.feeds import build_feed_set, load_feed
from curation.corpus.playable import playable_video_ids
from curation.qc.validate import validate_catalog
from tests.qc.helpers import plant_task

FEEDS = load_config().feeds
BOTH = {**Config().sources, "KuaiRec": SourceConfig(playable=True)}


def _sources(cat, ids: list[str]) -> set[str]:
    return {v.split("/")[0] for v in ids}


def test_default_feeds_hold_only_playable_videos(clustered_catalog):
    cat = clustered_catalog
    build_feed_set(cat, FEEDS, 30, seed=4)
    for i in range(30):
        feed = load_feed(cat, f"feed-4-{i:04d}")
        assert _sources(cat, feed.video_feed) == {"FakeSV"}  # KuaiRec publishes no video files


def test_distractors_follow_the_anchors_source_unless_any(clustered_catalog):
    cat = clustered_catalog
    build_feed_set(cat, FEEDS, 40, seed=5, sources=BOTH)
    feeds = [load_feed(cat, f"feed-5-{i:04d}") for i in range(40)]
    assert {s for f in feeds for s in _sources(cat, f.keyword_videos)} == {"FakeSV", "KuaiRec"}
    for feed in feeds:
        assert _sources(cat, feed.other_videos) <= _sources(cat, feed.keyword_videos)
    build_feed_set(cat, replace(FEEDS, distractor_sources="any"), 40, seed=6, sources=BOTH)
    mixed = [f for f in (load_feed(cat, f"feed-6-{i:04d}") for i in range(40)) if len(_sources(cat, f.video_feed)) > 1]
    assert mixed  # 'any' restores cross-source feeds


def test_once_media_is_scanned_only_normalised_videos_are_playable(clustered_catalog):
    cat = clustered_catalog
    fakesv = [r[0] for r in cat.con.execute(
        "SELECT video_id FROM videos WHERE source = 'FakeSV' ORDER BY 1").fetchall()]
    assert set(fakesv) <= playable_video_ids(cat, Config().sources)
    cat.con.execute("INSERT INTO media_files (video_id, path, root, matched_by, run_id) "
                    "SELECT video_id, video_id || '.mp4', '/media', 'scan', 'test' FROM videos WHERE source = 'FakeSV'")
    for video in fakesv[:4]:
        cat.insert("media_outputs", {"video_id": video, "output_path": f"/out/{video}.mp4", "run_id": "test"})
    assert playable_video_ids(cat, Config().sources) & set(fakesv) == set(fakesv[:4])
    with pytest.raises(FeedError, match="playable"):  # refused, saying why
        build_feed_set(cat, FEEDS, 10, seed=7)
    assert cat.scalar("SELECT count(*) FROM feeds WHERE seed = 7") == 0


def test_a_short_pool_names_how_many_feeds_it_could_build(clustered_catalog):
    cat = clustered_catalog
    with pytest.raises(FeedError, match=r"only \d+ of the 400 feeds asked for can be built from playable videos"):
        build_feed_set(cat, replace(FEEDS, distractor_similarity_quantile=0.001, anchor_max=2), 400, seed=8)


@pytest.fixture
def runner_serving_kuairec(tmp_path):
    """A team's runner that serves KuaiRec videos too (the public one refuses them: feed-source-not-served)."""
    from curation.core.resources import resource_text
    from curation.env.profile import use_profile

    served = '\n[sources.KuaiRec]\nprefix = "KuaiRec/"\nurl = "static/data/KuaiRec/{native}.mp4"\nshown = "none"\n' \
             'comments = "none"\n'
    (tmp_path / "runner.toml").write_text(resource_text("runners", "livingscreen-f02d1bc.toml") + served,
                                          encoding="utf-8")
    use_profile(str(tmp_path / "runner.toml"))
    yield
    use_profile("")


def task_on_a_kuairec_feed(cat):
    """A label task on a feed built with KuaiRec playable (a team that has its files); returns the feed."""
    build_feed_set(cat, FEEDS, 20, seed=9, sources=BOTH)
    feed = next(f for f in (load_feed(cat, f"feed-9-{i:04d}") for i in range(20))
                if "KuaiRec" in _sources(cat, f.video_feed))
    plant_task(cat, "feature_analysis_1", feed.feed_id, tier="L2", subcategory="feature_analysis",
               eval_type="label", instruction="q?\nA:1 B:2 C:以上都不对", options={"A": "1", "B": "2"},
               eval_config=[{"answer": "A"}])
    return feed


def test_a_kuairec_video_is_one_the_public_runner_does_not_serve(clustered_catalog):
    cat = clustered_catalog
    task_on_a_kuairec_feed(cat)
    refused = [d for d in validate_catalog(cat, FEEDS, BOTH).defects if d.code == "feed-source-not-served"]
    assert [d.severity for d in refused] == ["error"] and "KuaiRec/" in refused[0].message


def test_validate_flags_unplayable_videos_warning_then_error(clustered_catalog, runner_serving_kuairec):
    cat = clustered_catalog
    kuairec_feed = task_on_a_kuairec_feed(cat)
    defects = validate_catalog(cat, FEEDS).defects  # default sources: KuaiRec is not playable
    flagged = [d for d in defects if d.code == "feed-video-no-media-yet"]
    assert flagged and all(d.severity == "warning" for d in flagged)
    assert not [d for d in defects if d.code == "feed-video-not-playable"]
    first = kuairec_feed.video_feed[0]
    cat.con.execute("INSERT INTO media_files (video_id, path, root, matched_by, run_id) "
                    "SELECT video_id, video_id || '.mp4', '/media', 'scan', 'test' FROM videos WHERE source = ?",
                    [first.split("/")[0]])
    defects = validate_catalog(cat, FEEDS, BOTH).defects
    errors = [d for d in defects if d.code == "feed-video-not-playable" and d.severity == "error"]
    assert errors and "no normalised file" in errors[0].message
