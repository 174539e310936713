"""Feeds out of the catalog: JSON files, the ratio-drift report, the feeds report."""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.config import Config, SourceConfig
from curation.core.stage import StageRun, stage
from curation.corpus.feeds import Feed, latest_feeds
from curation.corpus.playable import playable_video_ids
from curation.reports import histogram_svg, page, write


@stage("feeds-export", command="curate feeds export DIR", reads=("feeds",), writes=("feed files",),
       summary="one JSON per feed (latest version) plus feeds.jsonl")
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


def format_ratio(ratio: float | None) -> str:
    return "no anchor video left" if ratio is None else f"{ratio:.2f}"


def ratio_drift(catalog: Catalog, lo: float, hi: float) -> dict[str, Any]:
    """Feeds whose latest version left the [lo, hi] design range after edits."""
    feeds = latest_feeds(catalog)
    outside = [{"feed_id": f.feed_id, "version": f.version, "ratio": f.ratio,
                "keyword_videos": len(f.keyword_videos), "other_videos": len(f.other_videos)}
               for f in feeds if f.ratio is None or not lo <= f.ratio <= hi]
    edited = sum(1 for f in feeds if f.version > 1)
    return {"feeds": len(feeds), "edited": edited, "outside": len(outside), "range": [lo, hi],
            "drifted": outside}


def feeds_report(catalog: Catalog, path: Path, lo: float, hi: float,
                 sources: dict[str, SourceConfig] | None = None) -> Path:
    feeds = latest_feeds(catalog)
    playable = playable_video_ids(catalog, Config().sources if sources is None else sources)
    unplayable = sum(any(v not in playable for v in f.video_feed) for f in feeds)
    mixed = sum(len({v.split("/")[0] for v in f.video_feed}) > 1 for f in feeds)
    drift = ratio_drift(catalog, lo, hi)
    sizes = [r[0] for r in catalog.con.execute(
        "SELECT size FROM clusters WHERE run_id IN (SELECT DISTINCT cluster_run FROM feeds)"
    ).fetchall()]
    esc = html.escape
    body = [
        f"<p>{len(feeds)} feeds (latest versions), {drift['edited']} edited, "
        f"{drift['outside']} outside the ratio range [{lo}, {hi}]; {mixed} mix sources; "
        f"{unplayable} hold a video the app cannot play</p>",
        histogram_svg(sizes, "cluster size (clusters behind these feeds)", log_y=True),
        histogram_svg([f.ratio for f in feeds if f.ratio is not None], "distractor ratio (other / keyword videos)",
                      bins=15),
        histogram_svg([len(f.video_feed) for f in feeds], "feed length (videos)", bins=19),
        histogram_svg([len(f.keyword_videos) for f in feeds], "anchor videos per feed", bins=5),
        "<h2>Feeds</h2><table><tr><th>feed</th><th>v</th><th>cluster</th><th>ratio</th><th>sources</th>"
        "<th>playable</th><th>videos (anchor videos in bold)</th></tr>",
    ]
    titles = dict(catalog.con.execute(
        "SELECT video_id, coalesce(title, array_to_string(keywords, ' ')) FROM videos "
        "WHERE video_id IN (SELECT unnest(video_feed) FROM feeds)").fetchall())
    for feed in feeds[:200]:
        anchors = set(feed.keyword_videos)
        cells = [(f"<b>{esc((titles.get(v) or v)[:40])}</b>" if v in anchors
                  else esc((titles.get(v) or v)[:40])) for v in feed.video_feed]
        mix = Counter(v.split("/")[0] for v in feed.video_feed)
        missing = sum(v not in playable for v in feed.video_feed)
        body.append(f"<tr><td>{esc(feed.feed_id)}</td><td>{feed.version}</td>"
                    f"<td>{feed.anchor_cluster}</td><td>{format_ratio(feed.ratio)}</td>"
                    f"<td>{esc(' · '.join(f'{s} {n}' for s, n in sorted(mix.items())))}</td>"
                    f"<td>{'yes' if not missing else f'{missing} not playable'}</td>"
                    f"<td>{' · '.join(cells)}</td></tr>")
    body.append("</table>")
    return write(path, page("Feeds", body))
