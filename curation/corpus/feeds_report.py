"""`build/reports/feeds.html`: the latest feed versions as pictures (cluster sizes, distractor
ratios, lengths, anchors) and a table, written by `curate feeds build --report` inside its run.
The feeds come in as arguments (`corpus.feeds.Feed`), since the stage that builds them imports
this module."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curation.core.catalog import Catalog
from curation.core.config import Config, SourceConfig
from curation.corpus.coherence import AnchorCoherence, coherence_line, coherence_of, summary
from curation.corpus.playable import playable_video_ids
from curation.reports import histogram_svg, page, write


def format_ratio(ratio: float | None) -> str:
    return "no anchor video left" if ratio is None else f"{ratio:.2f}"


def drift_of(feeds: Sequence[Any], lo: float, hi: float) -> dict[str, Any]:
    """Of these feeds (latest versions), the ones whose ratio left the [lo, hi] design range after edits."""
    outside = [{"feed_id": f.feed_id, "version": f.version, "ratio": f.ratio,
                "keyword_videos": len(f.keyword_videos), "other_videos": len(f.other_videos)}
               for f in feeds if f.ratio is None or not lo <= f.ratio <= hi]
    edited = sum(1 for f in feeds if f.version > 1)
    return {"feeds": len(feeds), "edited": edited, "outside": len(outside), "range": [lo, hi],
            "drifted": outside}


def _coherence_cells(found: AnchorCoherence | None) -> str:
    if found is None:
        return "<td colspan='3' class='muted'>not measured (an edited or imported version)</td>"
    def cell(x: float | None) -> str:
        return f"<td>{'-' if x is None else f'{x:.3f}'}</td>"
    share = "-" if found.label_share is None else f"{found.label_share:.0%} ({html.escape(found.label or '')})"
    return cell(found.anchor_similarity) + cell(found.distractor_similarity) + f"<td>{share}</td>"


def feeds_report(catalog: Catalog, path: Path, feeds: Sequence[Any], lo: float, hi: float,
                 sources: dict[str, SourceConfig] | None = None,
                 last_summary: dict[str, Any] | None = None) -> Path:
    """The page over `feeds`, the latest feed versions; `last_summary` is the coherence the building run
    recorded (with its chance baseline), else the recorded figures' means are shown without one."""
    playable = playable_video_ids(catalog, Config().sources if sources is None else sources)
    unplayable = sum(any(v not in playable for v in f.video_feed) for f in feeds)
    mixed = sum(len({v.split("/")[0] for v in f.video_feed}) > 1 for f in feeds)
    drift = drift_of(feeds, lo, hi)
    sizes = [r[0] for r in catalog.con.execute(
        "SELECT size FROM clusters WHERE run_id IN (SELECT DISTINCT cluster_run FROM feeds)"
    ).fetchall()]
    esc = html.escape
    coherence = coherence_of(catalog)
    measured = [coherence[(f.feed_id, f.version)] for f in feeds if (f.feed_id, f.version) in coherence]
    body = [
        f"<p>{len(feeds)} feeds (latest versions), {drift['edited']} edited, "
        f"{drift['outside']} outside the ratio range [{lo}, {hi}]; {mixed} mix sources; "
        f"{unplayable} hold a video the app cannot play</p>",
        histogram_svg(sizes, "cluster size (clusters behind these feeds)", log_y=True),
        histogram_svg([f.ratio for f in feeds if f.ratio is not None], "distractor ratio (other / keyword videos)",
                      bins=15),
        histogram_svg([len(f.video_feed) for f in feeds], "feed length (videos)", bins=19),
        histogram_svg([len(f.keyword_videos) for f in feeds], "anchor videos per feed", bins=5),
        "<h2>Anchor coherence</h2>",
        f"<p>{esc(coherence_line(last_summary or summary(measured, [])))}</p>",
        "<p class='muted'>The line above is the building run's own feeds (its seed) when it has them, else the "
        "means of every measured feed shown here. Cosines are between centred keyword-set vectors, where "
        "unrelated texts score near 0. Edited and imported feed versions are not measured.</p>",
        histogram_svg([c.anchor_similarity for c in measured if c.anchor_similarity is not None],
                      "mean cosine between a feed's anchor videos", bins=15),
        "<h2>Feeds</h2><table><tr><th>feed</th><th>v</th><th>cluster</th><th>ratio</th><th>sources</th>"
        "<th>playable</th><th>anchor cosine</th><th>to distractors</th><th>label share</th>"
        "<th>videos (anchor videos in bold)</th></tr>",
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
                    f"{_coherence_cells(coherence.get((feed.feed_id, feed.version)))}"
                    f"<td>{' · '.join(cells)}</td></tr>")
    body.append("</table>")
    return write(path, page("Feeds", body))
