"""Feeds out of the catalog: JSON files, the list, the ratio-drift report (the feeds page is
`feeds_report.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import Feed, latest_feeds
from curation.corpus.feeds_report import drift_of
from curation.reports import write


@stage("feeds-export", command="curate feeds export DIR", reads=("feeds",), writes=(),
       summary="one JSON per feed (latest version) plus feeds.jsonl", files=("out: feed files",))
def export_feeds(run: StageRun, out_dir: Path) -> list[Feed]:
    """One `<feed_id>.json` per feed (latest version) plus `feeds.jsonl`, written atomically."""
    feeds = latest_feeds(run.db)
    run.params.update(out_dir=str(out_dir))
    run.counts.update(feeds=len(feeds))
    out_dir.mkdir(parents=True, exist_ok=True)
    for feed in feeds:
        write(out_dir / f"{feed.feed_id}.json", feed.to_json())
    lines = "".join(json.dumps(json.loads(f.to_json()), ensure_ascii=False, sort_keys=True) + "\n"
                    for f in feeds)
    write(out_dir / "feeds.jsonl", lines)
    current = {f"{feed.feed_id}.json" for feed in feeds}
    for stale in out_dir.glob("feed-*.json"):  # feeds rebuilt away since the last export
        if stale.name not in current:
            stale.unlink()
    return feeds


def list_feeds(catalog: Catalog, seed: int | None = None, edited: bool | None = None,
               sent: bool | None = None) -> list[dict[str, Any]]:
    """Latest feed versions with who they went to and the tasks written on them (each task once, at
    its latest version, not once per version); filters are None (any), True or False."""
    rows = catalog.rows("""
        SELECT f.feed_id, f.version, f.seed, len(f.video_feed) AS videos, f.ratio, f.version > 1 AS edited,
               (SELECT string_agg(DISTINCT t.annotator, ',' ORDER BY t.annotator) FROM ls_tasks t
                WHERE t.feed_id = f.feed_id) AS sent_to,
               (SELECT count(DISTINCT k.task_id) FROM latest_tasks k WHERE k.feed_id = f.feed_id) AS tasks
        FROM latest_feeds f WHERE ($seed IS NULL OR f.seed = $seed) ORDER BY f.feed_id""", {"seed": seed})
    return [r for r in rows if (edited is None or r["edited"] == edited)
            and (sent is None or (r["sent_to"] is not None) == sent)]


def ratio_drift(catalog: Catalog, lo: float, hi: float) -> dict[str, Any]:
    """Feeds whose latest version left the [lo, hi] design range after edits."""
    return drift_of(latest_feeds(catalog), lo, hi)
