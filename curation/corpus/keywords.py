"""Keyword sets: what each video is about, with where every keyword came from.

Origins, in the order they are taken: `hashtag` (inline `#tag`, `#tag#`, topic
lists), `source` (the corpus's own keyword field, kept whole: FakeSV's is the
news-event claim), `source_segment` (that field cut into words), and, only while
a set has fewer than `min_keywords`, `extracted` (jieba TF-IDF tags over the
title and description, or plain English words).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from curation.core.config import ExecutorConfig, KeywordsConfig, as_dict
from curation.core.executor import Resources, map_tables, worker_resources
from curation.core.resources import resource_text
from curation.core.stage import STAGES, StageRun, stage

STOP_WORDS = frozenset(
    word for line in resource_text("stopwords.txt").splitlines()
    if not line.startswith("#") for word in line.split())



def stop_patterns(extra: tuple[str, ...] = ()) -> re.Pattern[str]:
    """The packaged stop patterns (`resources/stop_patterns.txt`) and any configured ones, as one regex."""
    lines = [line.strip() for line in resource_text("stop_patterns.txt").splitlines()]
    patterns = [p for p in (*lines, *extra) if p and not p.startswith("#")]
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_BOILERPLATE = stop_patterns()
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
_HAS_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class KeywordSet:
    video_id: str
    keywords: tuple[str, ...]
    origins: tuple[str, ...]

    @property
    def text(self) -> str:
        """What gets embedded: the keywords in order, one string."""
        return "; ".join(self.keywords)

    @property
    def text_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _jieba():
    import jieba
    import jieba.analyse

    jieba.setLogLevel(logging.WARNING)
    return jieba


def usable(word: str, min_chars: int, boilerplate: re.Pattern[str] = _BOILERPLATE) -> bool:
    word = word.strip()
    return (len(word) >= min_chars and word.lower() not in STOP_WORDS and not word.isdigit()
            and not boilerplate.search(word))


def extract_terms(text: str, top_k: int, min_chars: int, boilerplate: re.Pattern[str] = _BOILERPLATE) -> list[str]:
    """jieba TF-IDF tags for Chinese text, plain word order for English."""
    if not text:
        return []
    if _HAS_CJK.search(text):
        tags = _jieba().analyse.extract_tags(text, topK=top_k * 2)
    else:
        tags = [w.lower() for w in _ENGLISH_WORD.findall(text)]
    out: list[str] = []
    for tag in tags:
        if usable(tag, min_chars, boilerplate) and tag not in out:
            out.append(tag)
    return out[:top_k]


def segment(text: str, min_chars: int, boilerplate: re.Pattern[str] = _BOILERPLATE) -> list[str]:
    if not _HAS_CJK.search(text):
        return extract_terms(text, 10, min_chars, boilerplate)
    words: list[str] = []
    for word in _jieba().lcut(text):
        if usable(word, min_chars, boilerplate) and word not in words:
            words.append(word)
    return words


def build_keyword_set(video: dict[str, Any], min_keywords: int = 3, top_k: int = 5,
                      min_chars: int = 2, boilerplate: re.Pattern[str] = _BOILERPLATE) -> KeywordSet:
    keywords: list[str] = []
    origins: list[str] = []

    def add(word: str, origin: str) -> None:
        word = word.strip().lstrip("#").strip()
        if usable(word, min_chars, boilerplate) and word not in keywords:
            keywords.append(word)
            origins.append(origin)

    for tag in video.get("hashtags") or []:
        add(tag, "hashtag")
    for claim in video.get("keywords") or []:
        add(claim, "source")
        for word in segment(claim, min_chars, boilerplate):
            add(word, "source_segment")
    if len(keywords) < min_keywords:
        text = " ".join(t for t in (video.get("title"), video.get("description")) if t)
        text = re.sub(r"#\S+", " ", text)  # hashtags were taken above
        for word in extract_terms(text, top_k, min_chars, boilerplate):
            add(word, "extracted")
    return KeywordSet(video["video_id"], tuple(keywords), tuple(origins))


KEYWORD_BATCH = 20_000  # videos per batch: a Ray task's share, and a progress step


def keyword_batch(min_keywords: int, top_k: int, min_chars: int, extra_stop_patterns: tuple[str, ...],
                  videos: pa.Table) -> pa.Table:
    """The keyword sets of a batch of videos (`video_id`, `title`, `description`, `hashtags`,
    `keywords`): the per-batch function both executors run."""
    boilerplate = stop_patterns(extra_stop_patterns) if extra_stop_patterns else _BOILERPLATE
    sets = [build_keyword_set(v, min_keywords, top_k, min_chars, boilerplate) for v in videos.to_pylist()]
    return pa.table({
        "video_id": pa.array([s.video_id for s in sets], pa.string()),
        "keywords": pa.array([list(s.keywords) or None for s in sets], pa.list_(pa.string())),
        "origins": pa.array([list(s.origins) or None for s in sets], pa.list_(pa.string())),
        "text": pa.array([s.text or None for s in sets], pa.string()),
        "text_sha256": pa.array([s.text_sha256 if s.keywords else None for s in sets], pa.string()),
    })


@stage("keywords", command="curate keywords [--executor local|ray]", reads=("videos",), writes=("keyword_sets",),
       resources=Resources(cpus=1.0, memory_mb=1024),
       summary="a keyword set per video with each keyword's origin; on Ray, batches of videos are tasks")
def build_keyword_sets(run: StageRun, config: KeywordsConfig, executor: ExecutorConfig | None = None,
                       batch_size: int = KEYWORD_BATCH) -> dict[str, int]:
    """Recompute every video's keyword set; rows whose set is unchanged are kept as they were.
    On either executor the sets are merged in one transaction at the end."""
    catalog = run.db
    executor = executor or ExecutorConfig()
    run.params.update(as_dict(config), executor=executor.kind)
    videos = catalog.con.sql("SELECT video_id, title, description, hashtags, keywords "
                             "FROM videos ORDER BY video_id").to_arrow_table()
    batches = [videos.slice(at, batch_size) for at in range(0, len(videos), batch_size)]
    work = partial(keyword_batch, config.min_keywords, config.extract_top_k, config.min_token_chars,
                   tuple(config.stop_patterns))
    workers = config.workers or os.cpu_count() or 1
    processes = min(workers, len(batches)) if executor.kind == "local" and len(batches) > 1 else 1
    run.params.update(processes=processes)
    done = map_tables(work, batches, executor, worker_resources(STAGES["keywords"].resources, executor),
                      processes=processes)
    where = " on Ray" if executor.kind == "ray" else ""
    results = list(run.progress(done, f"keywords for {len(videos):,} videos{where}", len(batches)))
    incoming = pa.concat_tables(results) if results else work(videos)
    incoming = incoming.append_column("run_id", pa.array([run.run_id] * len(incoming), pa.string()))
    con = catalog.con
    with catalog.staged(incoming_keywords=incoming):
        con.execute("""
            CREATE TEMP TABLE changed_kw AS SELECT i.video_id FROM incoming_keywords i
            LEFT JOIN keyword_sets k USING (video_id)
            WHERE k.video_id IS NULL OR k.keywords IS DISTINCT FROM i.keywords
               OR k.origins IS DISTINCT FROM i.origins""")
        changed = catalog.scalar("SELECT count(*) FROM changed_kw")
        con.execute("DELETE FROM keyword_sets WHERE video_id IN (SELECT video_id FROM changed_kw)"
                    " OR video_id NOT IN (SELECT video_id FROM incoming_keywords)")
        catalog.insert_staged("keyword_sets", "incoming_keywords", incoming.column_names,
                              "WHERE video_id IN (SELECT video_id FROM changed_kw)")
        con.execute("DROP TABLE changed_kw")
    empty = int(pc.sum(pc.is_null(incoming["keywords"])).as_py() or 0)
    run.counts.update(videos=len(incoming), changed=int(changed), empty=empty)
    return run.counts
