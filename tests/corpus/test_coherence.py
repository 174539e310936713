"""Anchor coherence: what `feeds build` records per feed, its chance baseline, and the refusal threshold."""

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.core.config import Config, SourceConfig, load_config
from curation.core.errors import FeedError
from curation.corpus.cluster import cluster_videos
from curation.corpus.coherence import anchor_coherence, coherence_of
from curation.corpus.feeds import FeedContext, build_feed_set, build_feeds, latest_feeds
from curation.corpus.feeds_report import feeds_report

CONFIG = load_config()
KUAIREC_PLAYABLE = {**Config().sources, "KuaiRec": SourceConfig(playable=True)}  # so anchors carry categories


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 8),
       st.lists(st.sampled_from(["x", "y", "z", None]), min_size=6, max_size=6))
def test_figures_are_the_plain_means_they_say(seed, k, m, values):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(30, 5))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picked = rng.permutation(30)
    anchors, others = picked[:k].tolist(), picked[k:k + m].tolist()
    labels = [{"level": v} if v else {} for v in values[:k]]
    found = anchor_coherence(vectors, anchors, others, labels)
    pairs = [float(vectors[a] @ vectors[b]) for a in anchors for b in anchors if a != b]
    assert found.anchor_similarity == (pytest.approx(np.mean(pairs), abs=1e-6) if pairs else None)
    across = [float(vectors[a] @ vectors[b]) for a in anchors for b in others]
    assert found.distractor_similarity == (pytest.approx(np.mean(across), abs=1e-6) if across else None)
    carried = [v for v in values[:k] if v]
    if len(carried) >= 2:  # one labelled video would share its own label
        assert found.label == "level"
        assert found.label_share == pytest.approx(max(carried.count(v) for v in carried) / len(carried), abs=1e-6)
    else:
        assert found.label is None and found.label_share is None


def test_built_feeds_record_anchors_more_coherent_than_chance(clustered_catalog, tmp_path):
    cat = clustered_catalog
    # finer clusters than the defaults make for 1,300 videos (9 clusters), as the shipped corpus gets
    cluster_videos(cat, replace(CONFIG.cluster, min_cluster_size=5, min_samples=3), CONFIG.embedding.model)
    # the small corpus's FakeSV videos fill few clusters: distractors may come from any source here
    counts = build_feed_set(cat, replace(CONFIG.feeds, distractor_sources="any"), 60, 3, sources=KUAIREC_PLAYABLE,
                            report=tmp_path / "f.html")
    recorded = coherence_of(cat)
    feeds = latest_feeds(cat)
    assert {(f.feed_id, f.version) for f in feeds} == set(recorded)  # one row per built feed
    found = counts["coherence"]
    assert found["labelled_anchors"] > 10
    # anchors drawn from a cluster are nearer each other, further from their distractors, and more often of one
    # KuaiRec category than as many videos drawn at random (measured in the same run)
    assert found["anchor_similarity"] > found["anchor_similarity_chance"] + 0.05
    assert found["distractor_similarity"] < found["anchor_similarity"]
    assert found["label_share"] > found["label_share_chance"] + 0.03
    again = json.loads(cat.scalar("SELECT counts FROM runs WHERE stage = 'feeds'"))["coherence"]
    assert again == found
    page = (tmp_path / "f.html").read_text(encoding="utf-8")
    assert "Anchor coherence" in page and "random videos" in page and page.count("<svg") == 5


def test_an_anchor_below_the_stated_similarity_is_drawn_again_or_refused(clustered_catalog):
    cat = clustered_catalog
    run_id = cat.scalar("SELECT run_id FROM runs WHERE stage = 'cluster'")
    plain = FeedContext(cat, run_id, CONFIG.feeds)
    feeds = build_feeds(plain, 40, 5)
    similarities = sorted(plain.coherence[f.feed_id].anchor_similarity for f in feeds)
    threshold = similarities[len(similarities) // 4]  # a quarter of the plain anchors fall below it
    strict = FeedContext(cat, run_id, replace(CONFIG.feeds, min_anchor_similarity=threshold))
    try:
        built = build_feeds(strict, 40, 5)
    except FeedError as exc:  # a cluster with no such anchor is named, with what to change
        assert "min_anchor_similarity" in str(exc) and "lower it" in str(exc)
        built = []
    found = [strict.coherence[f].anchor_similarity for f in strict.coherence]
    assert found and min(found) >= threshold > similarities[0]
    assert np.mean(found) > np.mean(similarities)
    assert all(strict.coherence[f.feed_id].anchor_similarity >= threshold for f in built)
    impossible = FeedContext(cat, run_id, replace(CONFIG.feeds, min_anchor_similarity=1.01))
    with pytest.raises(FeedError, match=r"min_anchor_similarity 1.01 in 20 draws"):
        build_feeds(impossible, 5, 5)


def test_edited_feed_versions_are_shown_as_not_measured(clustered_catalog, tmp_path):
    from curation.corpus.feed_edit import edit_feed

    cat = clustered_catalog
    build_feed_set(cat, CONFIG.feeds, 5, 4)
    first = latest_feeds(cat)[0]
    edit_feed(cat, first.feed_id, [{"op": "delete", "positions": [0]}], CONFIG.feeds)
    page = feeds_report(cat, tmp_path / "f.html", latest_feeds(cat), 0.5, 2.0).read_text(encoding="utf-8")
    assert page.count("not measured (an edited or imported version)") == 1


def test_feeds_built_before_coherence_was_recorded_get_their_rows_on_the_next_build(clustered_catalog):
    cat = clustered_catalog
    build_feed_set(cat, CONFIG.feeds, 6, 21)
    measured = coherence_of(cat)
    cat.con.execute("DELETE FROM feed_coherence")  # as a catalog migrated from before the table
    counts = build_feed_set(cat, CONFIG.feeds, 6, 21)
    assert counts["written"] == 0 and coherence_of(cat) == measured
