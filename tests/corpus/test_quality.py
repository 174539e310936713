"""Cluster quality against human labels: chance-corrected figures, their shuffled baselines, and the label
columns a source states or a generic mapping names."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog
from curation.core.sources import SOURCES
from curation.corpus.quality import agreement, human_label_agreement, label_columns, noise_as_singletons
from curation.ingest import ingest_path
from curation.ingest.generic import Mapping, MappingError

# labels and cluster ids of the same videos; -1 is noise
labelled = st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from("abcdef"), min_size=n, max_size=n),
    st.lists(st.integers(-1, 7), min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(labelled, st.permutations(range(8)))
def test_renaming_clusters_changes_no_figure(data, renamed):
    truth, found = data
    renumbered = np.array([renamed[c] if c >= 0 else -1 for c in found])
    assert agreement("S", "l", truth, np.array(found)) == agreement("S", "l", truth, renumbered)


@settings(max_examples=150, deadline=None)
@given(labelled)
def test_noise_is_one_cluster_or_each_video_alone(data):
    truth, found = data
    found = np.array(found)
    alone = noise_as_singletons(found)
    noise = found < 0
    assert (alone >= 0).all() and np.array_equal(alone[~noise], found[~noise])
    assert len(set(alone[noise].tolist())) == noise.sum()  # one cluster each
    assert not set(alone[noise].tolist()) & set(found[~noise].tolist())  # none shared with a real cluster
    fact = agreement("S", "l", truth, found)
    assert fact.noise == pytest.approx(noise.mean(), abs=1e-4)
    if not noise.any():  # without noise the two ways agree
        assert (fact.ami, fact.ari) == (fact.ami_singletons, fact.ari_singletons)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("abcdefgh"), min_size=4, max_size=80).filter(lambda t: len(set(t)) > 1))
def test_a_clustering_equal_to_the_labels_scores_one(truth):
    ids = {t: i for i, t in enumerate(sorted(set(truth)))}
    fact = agreement("S", "l", truth, np.array([ids[t] for t in truth]))
    assert fact.ami == fact.ari == fact.nmi == 1.0 and fact.classes == len(ids)


def test_chance_scores_near_zero_and_nmi_does_not():
    """Many small clusters unrelated to the labels: AMI and ARI stay near 0, NMI does not, and the
    shuffled baseline shows it (the reason AMI leads the report)."""
    rng = np.random.default_rng(1)
    truth = rng.choice(list("abcdefghij"), 4000).tolist()
    found = rng.integers(0, 800, 4000)
    fact = agreement("S", "l", truth, found)
    assert abs(fact.ami) < 0.02 and abs(fact.ari) < 0.01 and abs(fact.ami_shuffled) < 0.02
    assert fact.nmi > 0.15 and fact.nmi_shuffled > 0.15


def test_every_stated_label_column_and_a_mappings_labels_are_scored(tmp_path):
    assert SOURCES["KuaiRec"].labels == (
        "first_level_category_name", "second_level_category_name", "third_level_category_name")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": f"v{i}", "title": f"title {i}", "topic": "cats" if i < 6 else "dogs",
                                            "mood": "calm"}) for i in range(12)) + "\n", encoding="utf-8")
    mapping = tmp_path / "mapping.toml"
    mapping.write_text('source = "Pets"\nformat = "jsonl"\nlabels = ["topic"]\n[fields]\nnative_id = "id"\n'
                       'title = "title"\n', encoding="utf-8")
    with Catalog(tmp_path / "c.duckdb") as cat:
        ingest_path(cat, "generic", corpus, mapping=mapping)
        assert label_columns(cat)["Pets"] == ["topic"]  # "mood" is kept in extra, but no one called it a label
        perfect = {f"Pets/v{i}": int(i >= 6) for i in range(12)}
        [fact] = [a for a in human_label_agreement(cat, perfect) if a.source == "Pets"]
        assert (fact.label, fact.videos, fact.classes, fact.ami) == ("topic", 12, 2, 1.0)
        one_blob = dict.fromkeys(perfect, 0)
        assert [a.ami for a in human_label_agreement(cat, one_blob) if a.source == "Pets"] == [0.0]


@pytest.mark.parametrize("labels, reason", [
    ('"topic"', "must be a list"), ('["title"]', "also mapped"), ('[""]', "must be a list"),
    ('["meta.topic"]', "top-level field"), ('["to\\"pic"]', "top-level field")])
def test_a_mapping_with_a_wrong_label_says_what_is_wrong(labels, reason):
    with pytest.raises(MappingError, match=reason):
        Mapping.from_dict({"source": "Pets", "format": "jsonl", "labels": json.loads(labels),
                           "fields": {"native_id": "id", "title": "title"}})
