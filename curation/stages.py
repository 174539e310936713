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
    Stage("media-scan", "curate media scan <dir> --source S", ("videos", "media folder"), ("media_files",),
          "which file is which catalog video"),
    Stage("media-probe", "curate media probe", ("media_files", "videos"), ("media_probes", "videos"),
          "ffprobe facts; fills videos.duration_s"),
    Stage("media-normalise", "curate media normalise", ("media_probes",), ("media_outputs",),
          "H.264/AAC CFR MP4 on the app canvas, poster, 1-fps keyframes"),
    Stage("annotate-export", "curate annotate export --annotators a,b", ("feeds", "videos", "comments",
          "media_outputs"), ("ls_projects", "ls_tasks"), "one Label Studio authoring project per annotator"),
    Stage("annotate-import", "curate annotate import", ("ls_projects", "ls_tasks", "feeds"), ("tasks", "feeds"),
          "annotations back as versioned tasks; feed edits as feed versions"),
    Stage("qc-validate", "curate qc validate", ("tasks", "feeds", "videos"), (),
          "structural checks with stable defect codes"),
    Stage("qc-shortcut", "curate qc shortcut", ("tasks", "feeds", "videos", "llm_calls"),
          ("llm_calls", "shortcut_verdicts"), "discard tasks that titles, hashtags and bios give away"),
)
