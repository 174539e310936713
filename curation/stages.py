"""What each stage reads and writes, for `curate describe` (and for people)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str
    command: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    summary: str


STAGES = (
    Stage("ingest", "curate ingest <adapter> <path>", ("corpus file",),
          ("videos", "comments", "rejects"), "public corpora into the catalog, bad records rejected"),
    Stage("keywords", "curate keywords", ("videos",), ("keyword_sets",),
          "a keyword set per video with each keyword's origin"),
    Stage("embed", "curate embed", ("keyword_sets",), ("embeddings",),
          "keyword-set vectors, cached by (model, text hash)"),
    Stage("cluster", "curate cluster", ("keyword_sets", "embeddings", "videos"),
          ("clusters", "cluster_members"), "HDBSCAN clusters with top keywords and medoids"),
    Stage("feeds", "curate feeds build", ("clusters", "cluster_members", "keyword_sets", "embeddings"),
          ("feeds",), "anchor cluster + unrelated distractors, shuffled, versioned"),
    Stage("feeds-edit", "curate feeds edit <feed_id>", ("feeds", "videos"), ("feeds",),
          "reorder / delete / swap, as a new feed version"),
)
