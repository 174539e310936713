"""Tasks planted in a clustered test catalog, as the annotation import would store them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from curation.core.catalog import Catalog, now
from curation.core.config import load_config
from curation.corpus.feeds import build_feed_set, load_feed
from tests.conftest import ROOT


def plant_task(cat: Catalog, task_id: str, feed_id: str, *, tier: str, subcategory: str, eval_type: str,
               instruction: str, options: dict[str, str] | None, eval_config: list, status: str = "ok",
               version: int = 1, author: str = "alice") -> None:
    feed = load_feed(cat, feed_id)
    cat.insert("tasks", {
        "task_id": task_id, "version": version, "author": author, "feed_id": feed_id, "base_feed_version": feed.version,
        "feed_version": feed.version, "tier": tier, "subcategory": subcategory, "eval_type": eval_type,
        "instruction": instruction, "options": json.dumps(options, ensure_ascii=False) if options else None,
        "eval_config": json.dumps(eval_config, ensure_ascii=False), "annotation_sha256": "sha",
        "lead_time_s": 10.0, "annotated_at": now(), "run_id": "test", "created_at": now()})
    for seq, (before, after) in enumerate([(None, "authored"), ("authored", "needs_fix" if status == "needs_fix"
                                                                 else "valid")], start=1):
        cat.insert("task_transitions", {"task_id": task_id, "version": version, "seq": seq, "from_state": before,
                                        "to_state": after, "who": "test", "run_id": "test", "moved_at": now()})


def planted_catalog(cat: Catalog, n_feeds: int = 6, seed: int = 41) -> list[str]:
    """Feeds with known titles; returns the feed ids."""
    build_feed_set(cat, load_config().feeds, n_feeds, seed=seed)
    ids = [f"feed-{seed}-{i:04d}" for i in range(n_feeds)]
    for feed_id in ids:
        feed = load_feed(cat, feed_id)
        for position, video in enumerate(feed.video_feed):
            cat.con.execute("UPDATE videos SET title = ?, hashtags = NULL, author_bio = NULL WHERE video_id = ?",
                            [f"普通的日常视频{position}", video])
    return ids


def finish_qc(cat: Catalog, task_id: str, version: int = 1, end: str = "reviewed_ok") -> None:
    """Move a planted task on from `valid` as the filter and review would (or to `end`)."""
    path = {"reviewed_ok": ["shortcut_passed", "reviewed_ok"], "kept": ["shortcut_passed", "escalated", "kept"],
            "deleted": ["shortcut_passed", "escalated", "deleted"], "shortcut_discarded": ["shortcut_discarded"]}[end]
    seq = cat.scalar("SELECT max(seq) FROM task_transitions WHERE task_id = ? AND version = ?", [task_id, version])
    before = cat.scalar("SELECT to_state FROM task_transitions WHERE task_id = ? AND version = ? AND seq = ?",
                        [task_id, version, seq])
    for n, state in enumerate(path, start=seq + 1):
        cat.insert("task_transitions", {"task_id": task_id, "version": version, "seq": n, "from_state": before,
                                        "to_state": state, "reason": f"test: {state}", "who": "test",
                                        "run_id": "test", "moved_at": now()})
        before = state


def curate_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`curate ...` as a person runs it from `folder` (whose ./curation.toml, if any, is picked up), with
    `env` laid over an environment that has no CURATE* variables."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CURATE")}, **(env or {})}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's code, whatever the working directory
    return subprocess.run([sys.executable, "-m", "curation.cli", *args], cwd=folder, capture_output=True, text=True,
                          env=env, timeout=300)


CAT_COLOURS = {"A": "白色的猫", "B": "黑色的猫", "C": "橘色的猫", "D": "无法确定"}


def plant_giveaway_pair(cat: Catalog, feeds: list[str], first: int = 1, leak_at: int = 2,
                        second_author: str | None = None) -> str:
    """Two L2 tasks: feature_analysis_<first>'s answer (C, 橘色的猫) is the title of the video at `leak_at`
    of its feed, feature_analysis_<first + 1>'s answer is nowhere in the metadata. Returns the leaked video."""
    leaked = load_feed(cat, feeds[0]).video_feed[leak_at]
    cat.con.execute("UPDATE videos SET title = '橘色的猫第一次见到雪' WHERE video_id = ?", [leaked])
    plant_task(cat, f"feature_analysis_{first}", feeds[0], tier="L2", subcategory="feature_analysis",
               eval_type="label", instruction="视频里的猫是什么颜色？", options=CAT_COLOURS,
               eval_config=[{"answer": "C"}])
    plant_task(cat, f"feature_analysis_{first + 1}", feeds[1], tier="L2", subcategory="feature_analysis",
               eval_type="label", instruction="视频里一共有几只鸟？", options={"A": "三只", "B": "四只", "C": "五只"},
               eval_config=[{"answer": "B"}], **({"author": second_author} if second_author else {}))
    return leaked
