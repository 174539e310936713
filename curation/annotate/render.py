"""A feed as annotators see it: every video in order, all metadata escaped.

Real titles carry markup (`<em class="keyword">`, even `<script>`); everything
from the catalog goes through `html.escape`, so it shows as text and never runs.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any
from urllib.parse import quote

from curation.core.catalog import Catalog
from curation.corpus.feeds import Feed

MAX_COMMENTS = 20


def local_file_url(path: str | None, media_root: Path) -> str | None:
    """Label Studio's local-files URL for a file under the served media root (the server's
    document root is the media root's parent; see `server.start_server`)."""
    if not path:
        return None
    try:
        rel = Path(path).resolve().relative_to(media_root.resolve().parent)
    except ValueError:
        return None
    return f"/data/local-files/?d={quote(str(rel))}"


def _count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def video_card(position: int, video: dict[str, Any], comments: list[dict[str, Any]],
               media: dict[str, Any] | None, media_root: Path) -> str:
    esc = html.escape
    title = video.get("title") or "; ".join(video.get("keywords") or []) or video["video_id"]
    player = ""
    if media:
        src = local_file_url(media.get("output_path"), media_root)
        poster = local_file_url(media.get("poster_path"), media_root)
        if src:
            player = (f'<video controls preload="none" src="{esc(src)}"'
                      + (f' poster="{esc(poster)}"' if poster else "") + "></video>")
        elif poster:
            player = f'<img alt="poster" src="{esc(poster)}">'
    if not player:
        player = '<div class="ls-meta">(no video file: metadata only / 无视频文件，仅元数据)</div>'
    tags = " ".join(f"#{esc(t)}" for t in video.get("hashtags") or [])
    thread = "".join(
        f"<li>{esc(c.get('text') or '')}"
        + (f" <span class='ls-meta'>赞 {_count(c.get('like_count'))}</span>" if c.get("like_count") else "")
        + (f" <span class='ls-meta'>@{c['time_s']:.1f}s</span>" if c.get("time_s") is not None else "")
        + "</li>" for c in comments[:MAX_COMMENTS])
    more = len(comments) - MAX_COMMENTS
    return (
        f'<div class="ls-video" data-position="{position}" data-video-id="{esc(video["video_id"])}">'
        f'<div><span class="ls-pos">{position}</span><b class="ls-title">{esc(title)}</b></div>'
        f"{player}"
        f'<div class="ls-meta">{tags}</div>'
        f'<div class="ls-meta">{esc(video.get("author_name") or "")} · {esc(video.get("author_bio") or "")}</div>'
        f'<div class="ls-meta">赞 {_count(video.get("like_count"))} · 收藏 {_count(video.get("collect_count"))}'
        f' · 评论 {_count(video.get("comment_count"))}'
        + (f' · {video["duration_s"]:.1f}s' if video.get("duration_s") else "") + "</div>"
        + (f"<ul>{thread}</ul>" if thread else "")
        + (f'<div class="ls-meta">… {more} more comments</div>' if more > 0 else "")
        + f'<div class="ls-meta">{esc(video["video_id"])}</div></div>')


def render_feed(catalog: Catalog, feed: Feed, media_root: Path) -> str:
    ids = feed.video_feed
    videos = {v["video_id"]: v for v in catalog.rows(
        "SELECT * FROM videos WHERE list_contains(?, video_id)", [ids])}
    comments: dict[str, list[dict[str, Any]]] = {}
    for c in catalog.rows("SELECT * FROM comments WHERE list_contains(?, video_id) "
                          "ORDER BY video_id, coalesce(time_s, 0), comment_id", [ids]):
        comments.setdefault(c["video_id"], []).append(c)
    media = {m["video_id"]: m for m in catalog.rows(
        "SELECT * FROM media_outputs WHERE list_contains(?, video_id)", [ids])}
    cards = [video_card(i + 1, videos.get(v, {"video_id": v}), comments.get(v, []), media.get(v),
                        media_root) for i, v in enumerate(ids)]
    return f'<div class="ls-feed">{"".join(cards)}</div>'
