import json
import shutil
from dataclasses import replace

import jsonschema
import pytest

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.core.errors import FeedError, PrerequisiteError
from curation.corpus.cluster import cluster_videos, latest_cluster_run
from curation.corpus.feed_edit import edit_feed
from curation.corpus.feed_export import export_feeds, ratio_drift
from curation.corpus.feeds import FeedContext, build_feed_set, build_feeds, load_feed
from curation.corpus.keywords import build_keyword_sets
from tests.conftest import load_schema

CONFIG = load_config().feeds


def test_feed_invariants_over_many_seeds(clustered_catalog):
    cat = clustered_catalog
    ctx = FeedContext(cat, latest_cluster_run(cat), CONFIG)
    cluster_of = dict(zip(ctx.video_ids, ctx.labels.tolist(), strict=True))
    keywords = dict(cat.con.execute("SELECT video_id, keywords FROM keyword_sets").fetchall())
    feeds = [f for seed in range(40) for f in build_feeds(ctx, 25, seed)]
    assert len(feeds) == 1000
    for feed in feeds:
        anchors, others = feed.keyword_videos, feed.other_videos
        assert CONFIG.anchor_min <= len(anchors) <= CONFIG.anchor_max
        assert CONFIG.ratio_min <= len(others) / len(anchors) <= CONFIG.ratio_max
        assert feed.ratio == pytest.approx(len(others) / len(anchors), abs=1e-6)
        assert len(feed.video_feed) == len(set(feed.video_feed)) <= 20
        assert sorted(feed.video_feed) == sorted(anchors + others)
        assert {cluster_of[v] for v in anchors} == {feed.anchor_cluster}
        assert all(cluster_of[v] != feed.anchor_cluster for v in others)
        top = set(ctx.clusters[feed.anchor_cluster][1])
        assert all(not (set(keywords[v] or []) & top) for v in others)
        pool = {ctx.video_ids[i] for i in ctx.pool(feed.anchor_cluster)}
        assert set(others) <= pool
    ratios = [f.ratio for f in feeds]
    assert min(ratios) < 0.8 and max(ratios) > 1.6  # the whole design range is used
    shuffled = sum(f.video_feed != f.keyword_videos + f.other_videos for f in feeds)
    assert shuffled > 950


def test_similarity_quantile_keeps_distractors_far_from_the_anchor(clustered_catalog):
    cat = clustered_catalog
    run = latest_cluster_run(cat)
    strict = FeedContext(cat, run, replace(CONFIG, distractor_similarity_quantile=0.3))
    loose = FeedContext(cat, run, replace(CONFIG, distractor_similarity_quantile=1.0))
    cluster = max(strict.clusters, key=lambda c: strict.clusters[c][0])
    centroid = strict.vectors[strict.members_of[cluster]].mean(axis=0)
    strict_sims = strict.vectors[strict.pool(cluster)] @ centroid
    loose_sims = loose.vectors[loose.pool(cluster)] @ centroid
    assert len(strict.pool(cluster)) < 0.35 * len(loose.pool(cluster))
    assert strict_sims.max() <= sorted(loose_sims)[int(0.31 * len(loose_sims))]


def _export(cat: Catalog, folder) -> dict[str, str]:
    export_feeds(cat, folder)
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def test_same_inputs_and_seed_give_byte_identical_feeds(clustered_catalog_file, tmp_path):
    exports = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.duckdb"
        shutil.copy(clustered_catalog_file, path)
        with Catalog(path) as cat:
            assert build_feed_set(cat, CONFIG, 30, seed=11)["written"] == 30
            first = _export(cat, tmp_path / f"{name}1")
            assert build_feed_set(cat, CONFIG, 30, seed=11)["written"] == 0
            assert _export(cat, tmp_path / f"{name}2") == first  # byte-identical, run ids too
            exports.append({k: json.loads(v) for k, v in first.items() if k != "feeds.jsonl"})
            # unedited feeds are rebuilt from new parameters; once edited, they are protected
            assert build_feed_set(cat, replace(CONFIG, anchor_max=3), 30, seed=11)["written"] == 30
            edit_feed(cat, "feed-11-0000", [{"op": "delete", "positions": [0]}], CONFIG)
            with pytest.raises(FeedError, match="were edited or sent to annotators"):
                build_feed_set(cat, CONFIG, 30, seed=11)
            assert load_feed(cat, "feed-11-0000").version == 2
            assert build_feed_set(cat, CONFIG, 30, seed=11, replace=True)["written"] == 30
            assert load_feed(cat, "feed-11-0000").version == 1
            other_seed = {f.feed_id: f.video_feed for f in build_feeds(
                FeedContext(cat, latest_cluster_run(cat), CONFIG), 30, 12)}
    for feed in exports[0].values():
        feed.pop("run_id")
    for feed in exports[1].values():
        feed.pop("run_id")
    assert exports[0] == exports[1]
    seed11 = [f["video_feed"] for f in exports[0].values()]
    assert seed11 != list(other_seed.values())


def test_synthetic_videos_stay_within_budget(clustered_catalog):
    cat = clustered_catalog
    cat.con.execute("UPDATE videos SET synthetic = true WHERE hash(video_id) % 3 = 0")
    ctx = FeedContext(cat, latest_cluster_run(cat), replace(CONFIG, synthetic_fraction=0.01))
    assert ctx.synthetic.mean() > 0.25
    feeds = build_feeds(ctx, 200, seed=3)
    synthetic = {ctx.video_ids[i] for i in range(len(ctx.video_ids)) if ctx.synthetic[i]}
    placed = sum(len(f.video_feed) for f in feeds)
    used = sum(v in synthetic for f in feeds for v in f.video_feed)
    assert 0 < used <= 0.01 * placed


def test_edits_make_versions_and_keep_earlier_ones(clustered_catalog):
    cat = clustered_catalog
    build_feed_set(cat, CONFIG, 5, seed=1)
    v1 = load_feed(cat, "feed-1-0000")
    n = len(v1.video_feed)
    v2 = edit_feed(cat, v1.feed_id, [{"op": "reorder", "order": list(reversed(range(n)))}], CONFIG,
                   author="alice")
    assert (v2.version, v2.video_feed) == (2, list(reversed(v1.video_feed)))
    assert v2.edit == [{"op": "reorder", "order": list(reversed(range(n))), "author": "alice"}]
    outsider = cat.con.execute("SELECT video_id FROM videos WHERE NOT list_contains(?, video_id) "
                               "ORDER BY video_id LIMIT 1", [v1.video_feed]).fetchone()[0]
    v3 = edit_feed(cat, v1.feed_id, [{"op": "swap", "position": 0, "video_id": outsider},
                                     {"op": "swap", "position": 1}], CONFIG)
    assert v3.version == 3 and v3.video_feed[0] == outsider and v3.video_feed[1] not in v2.video_feed
    assert v3.edit[1]["video_id"] == v3.video_feed[1]  # the sampled id is recorded
    assert set(v3.other_videos) >= {outsider, v3.video_feed[1]}
    anchor_positions = [i for i, v in enumerate(v3.video_feed) if v in v3.keyword_videos]
    v4 = edit_feed(cat, v1.feed_id, [{"op": "delete", "positions": anchor_positions[1:]}], CONFIG)
    assert len(v4.keyword_videos) == 1 and len(v4.video_feed) == len(v3.video_feed) - len(anchor_positions) + 1
    assert load_feed(cat, v1.feed_id, 1).video_feed == v1.video_feed  # v1 untouched
    assert load_feed(cat, v1.feed_id, 2).video_feed == v2.video_feed
    drift = ratio_drift(cat, CONFIG.ratio_min, CONFIG.ratio_max)
    assert drift["edited"] == 1
    assert [d["feed_id"] for d in drift["drifted"]] == ([v1.feed_id] if v4.ratio > 2 else [])
    for bad, message in [
        ({"op": "delete", "positions": list(range(len(v4.video_feed)))}, "empty"),
        ({"op": "swap", "position": 99, "video_id": outsider}, "outside the feed"),
        ({"op": "swap", "position": 0, "video_id": "KuaiRec/nope"}, "not in the catalog"),
        ({"op": "swap", "position": 1, "video_id": v4.video_feed[0]}, "already in the feed"),
        ({"op": "reorder", "order": [0, 0]}, "exactly once"),
        ({"op": "rotate"}, "unknown edit"),
    ]:
        with pytest.raises(FeedError, match=message):
            edit_feed(cat, v1.feed_id, [bad], CONFIG)
    assert load_feed(cat, v1.feed_id).version == 4  # failed edits wrote nothing


def test_export_matches_schema(clustered_catalog, tmp_path):
    cat = clustered_catalog
    build_feed_set(cat, CONFIG, 12, seed=5)
    edit_feed(cat, "feed-5-0003", [{"op": "delete", "positions": [0]}], CONFIG, author="bob")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "feed-9-9999.json").write_text("{}")  # from an earlier build
    (tmp_path / "out" / "notes.txt").write_text("mine")  # not ours: left alone
    files = _export(cat, tmp_path / "out")
    assert files.pop("notes.txt") == "mine" and "feed-9-9999.json" not in files
    assert len(files) == 13 and len(files["feeds.jsonl"].splitlines()) == 12
    validator = jsonschema.Draft202012Validator(load_schema("feed.schema.json"))
    for name, text in files.items():
        if name != "feeds.jsonl":
            validator.validate(json.loads(text))
    assert json.loads(files["feed-5-0003.json"])["version"] == 2


def test_removing_every_anchor_video_gives_valid_json(clustered_catalog, tmp_path):
    cat = clustered_catalog
    build_feed_set(cat, CONFIG, 3, seed=8)
    feed = load_feed(cat, "feed-8-0000")
    anchors = [i for i, v in enumerate(feed.video_feed) if v in feed.keyword_videos]
    edited = edit_feed(cat, feed.feed_id, [{"op": "delete", "positions": anchors}], CONFIG)
    assert edited.keyword_videos == [] and edited.ratio is None

    def no_infinity(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    files = _export(cat, tmp_path / "out")
    exported = json.loads(files["feed-8-0000.json"], parse_constant=no_infinity)
    jsonschema.Draft202012Validator(load_schema("feed.schema.json")).validate(exported)
    drift = ratio_drift(cat, CONFIG.ratio_min, CONFIG.ratio_max)
    assert [d["feed_id"] for d in drift["drifted"]] == ["feed-8-0000"]  # reported, not hidden


def test_keyword_sets_changed_since_clustering_is_a_clear_error(clustered_catalog):
    cat = clustered_catalog
    # keywords re-run with other settings, but neither embed nor cluster after it
    build_keyword_sets(cat, replace(load_config().keywords, min_keywords=8))
    with pytest.raises(PrerequisiteError, match="run `curate embed` and `curate cluster`"):
        build_feed_set(cat, CONFIG, 3, seed=2)
    failed = cat.rows("SELECT status, error FROM runs WHERE stage = 'feeds'")
    assert failed and failed[-1]["status"] == "failed" and "have no" in failed[-1]["error"]


def test_a_cluster_run_left_without_members_is_a_clear_error(clustered_catalog):
    cat = clustered_catalog
    # members deleted by hand (a cleanup gone too far): nothing to draw anchors from
    emptied = latest_cluster_run(cat)
    cat.con.execute("DELETE FROM cluster_members WHERE run_id = ?", [emptied])
    with pytest.raises(FeedError, match=f"cluster run {emptied} has no members any more: run `curate cluster`"):
        build_feed_set(cat, CONFIG, 3, seed=2)
    # and what the error says to do works: the same inputs are clustered afresh, not "reused"
    config = load_config()
    again = cluster_videos(cat, config.cluster, config.embedding.model)
    assert not again.reused and again.run_id != emptied and len(again.video_ids) > 0
    assert build_feed_set(cat, CONFIG, 3, seed=2)["feeds"] == 3


def test_feeds_longer_than_the_runner_reads_are_refused_before_any_is_built(clustered_catalog):
    from curation.core.errors import ConfigError

    config = replace(load_config().feeds, max_feed_len=22)
    with pytest.raises(ConfigError, match=r"max_feed_len 22 is longer than public LivingScreen runner reads"):
        build_feed_set(clustered_catalog, config, 3, seed=5)
    assert clustered_catalog.scalar("SELECT count(*) FROM feeds") == 0
    build_feed_set(clustered_catalog, replace(config, max_feed_len=21), 3, seed=5)  # the longest it reads
    assert clustered_catalog.scalar("SELECT count(*) FROM feeds") == 3
