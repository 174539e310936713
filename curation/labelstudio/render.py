"""A feed as annotators see it: every video in order, all metadata escaped.

Real titles carry markup (`<em class="keyword">`, even `<script>`); everything
from the catalog goes through `html.escape`, so it shows as text and never runs.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from curation.core.catalog import Catalog
from curation.corpus.feeds import Feed
from curation.corpus.visible import VisibleVideo, load_visible

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


def _counts(video: VisibleVideo) -> str:
    known = [(label, n) for label, n in (("赞 likes", video.like_count), ("收藏 collects", video.collect_count),
                                         ("评论 comments", video.comment_count), ("分享 shares", video.share_count))
             if n is not None]
    parts = [f"{label} {n:,}" for label, n in known]
    if video.duration_s:
        parts.append(f"{video.duration_s:.1f}s")
    return " · ".join(parts)


def video_card(position: int, video: VisibleVideo, comments: list[dict[str, Any]],
               media: dict[str, Any] | None, media_root: Path, claim: str | None = None) -> str:
    """One video as the app shows it (the shared visible-metadata definition), plus its player. Without a
    caption, the text the catalog keeps about the video (a corpus's event claim) stands in, marked as such,
    so the annotator has something to write about; "no title" only when the catalog has nothing."""
    return _positioned(position, video.video_id, _card_body(video, comments, media, media_root, claim))


def _positioned(position: int, video_id: str, body: str) -> str:
    return (f'<div class="ls-video" data-position="{position}" data-video-id="{html.escape(video_id)}">'
            f'<div><span class="ls-pos">{position}</span>{body}')


def _card_body(video: VisibleVideo, comments: list[dict[str, Any]], media: dict[str, Any] | None,
               media_root: Path, claim: str | None) -> str:
    """A card after its position: the same for a video wherever it stands, so a video in many feeds is
    rendered once per export."""
    esc = html.escape
    title = esc(video.caption) if video.caption else (
        f'<span class="ls-meta">事件 / event (not shown in the app):</span> {esc(claim)}' if claim
        else "(no title / 无标题)")
    player = ""
    if media:
        src = local_file_url(media.get("output_path"), media_root)
        poster = local_file_url(media.get("poster_path"), media_root)
        if src:
            player = (f'<video controls preload="none" src="{esc(src)}"'
                      + (f' poster="{esc(poster)}"' if poster else "") + "></video>")
        elif poster:
            player = f'<img alt="poster" src="{esc(poster)}">'
    tags = " ".join(f"#{esc(t)}" for t in video.hashtags)
    author = " · ".join(esc(p) for p in (video.author_name, video.author_bio) if p)
    counts = _counts(video)
    thread = "".join(
        f"<li>{esc(c.get('text') or '')}"
        + (f" <span class='ls-meta'>赞 {c['like_count']:,}</span>" if c.get("like_count") else "")
        + (f" <span class='ls-meta'>@{c['time_s']:.1f}s</span>" if c.get("time_s") is not None else "")
        + "</li>" for c in comments[:MAX_COMMENTS])
    more = len(comments) - MAX_COMMENTS
    return (
        f'<b class="ls-title">{title}</b></div>'
        f"{player}"
        + (f'<div class="ls-meta">{tags}</div>' if tags else "")
        + (f'<div class="ls-meta">{author}</div>' if author else "")
        + (f'<div class="ls-meta">{counts}</div>' if counts else "")
        + (f"<ul>{thread}</ul>" if thread else "")
        + (f'<div class="ls-meta">… {more} more comments</div>' if more > 0 else "")
        + f'<div class="ls-meta">{esc(video.video_id)}</div></div>')


def render_feed(catalog: Catalog, feed: Feed, media_root: Path) -> str:
    return render_feeds(catalog, [feed], media_root)[0]


VideoCards = dict[str, tuple[str, bool]]  # video -> its card after the position, and whether it has a video file


def render_feeds(catalog: Catalog, feeds: list[Feed], media_root: Path, video_cards: VideoCards | None = None
                 ) -> list[str]:
    """The cards of many feeds, in order, from one read of the catalog for all their videos (an export of
    1,000 feeds spent 5 s in four queries per feed). `video_cards`: the video cards of earlier calls, kept by a
    caller rendering feeds in parts (the videos read here are added to it)."""
    video_cards = {} if video_cards is None else video_cards
    ids = sorted({v for feed in feeds for v in feed.video_feed} - video_cards.keys())
    with catalog.staged(wanted=pa.table({"video_id": ids}, schema=pa.schema([("video_id", pa.string())]))):
        visible = load_visible(catalog, ids, staged="wanted")
        comments: dict[str, list[dict[str, Any]]] = {}
        for c in catalog.rows("SELECT * FROM comments SEMI JOIN wanted USING (video_id) "
                              "ORDER BY video_id, coalesce(time_s, 0), comment_id"):
            comments.setdefault(c["video_id"], []).append(c)
        media = {m["video_id"]: m
                 for m in catalog.rows("SELECT * FROM media_outputs SEMI JOIN wanted USING (video_id)")}
        # what the catalog knows of a video beyond its screen: a corpus's event claim (FakeSV) or keywords
        claims = {r["video_id"]: " / ".join(r["keywords"]) for r in catalog.rows(
            "SELECT video_id, keywords FROM videos SEMI JOIN wanted USING (video_id) WHERE len(keywords) > 0")}
    video_cards.update((v, (_card_body(visible[v], comments.get(v, []), media.get(v), media_root, claims.get(v)),
                       v in media)) for v in ids)
    out = []
    for feed in feeds:
        cards = [_positioned(i + 1, v, video_cards[v][0]) for i, v in enumerate(feed.video_feed)]
        played = any(video_cards[v][1] for v in feed.video_feed)
        note = "" if played else ('<div class="ls-meta">No video files for this feed yet: metadata only. '
                                  "本信息流暂无视频文件，仅显示元数据。</div>")
        out.append(f'<div class="ls-feed">{note}{"".join(cards)}</div>')
    return out


# What a task's `state` column says in Label Studio's task list: the life-cycle state (curation.tasks.lifecycle)
# or where a task sent for work stands, with its Chinese name.
STATE_NAMES = {
    "to_write": "待编写", "to_review": "待互审", "to_decide": "待合议", "pilot": "试标",
    "authored": "已提交", "imported": "已导入", "needs_fix": "需要修改", "valid": "通过检查",
    "shortcut_discarded": "被捷径过滤淘汰", "shortcut_passed": "通过捷径过滤", "reviewed_ok": "互审通过",
    "escalated": "待合议", "kept": "保留", "deleted": "已删除", "revised": "已修改", "retired": "已改名",
}


def state_text(state: str) -> str:
    return f"{state} · {STATE_NAMES[state]}" if state in STATE_NAMES else state


def list_fields(feed: Feed, state: str) -> dict[str, Any]:
    """Plain-text task data for the data manager's columns (the HTML fields show as raw markup there):
    the feed and its version, how many videos it holds, and the task's state."""
    return {"feed": f"{feed.feed_id} v{feed.version}", "videos": len(feed.video_feed), "state": state_text(state)}


def feed_ref(feed: Feed, base_version: int | None = None) -> str:
    """The line above the feed: which version of which feed the card shows; for a feed the annotator's
    own edits made, that it is the edited one and which version the edit lines count in."""
    ref = f"{feed.feed_id} · v{feed.version} · {len(feed.video_feed)} videos"
    if base_version is None or base_version == feed.version:
        return ref
    return (f"{ref} · 这是你修改后的视频流，修改行仍按 v{base_version} 的编号 / "
            f"your edited feed; edit lines count positions in v{base_version}")
