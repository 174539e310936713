"""What a video shows on the app's screen, and nothing else: its caption (title, else
description), hashtags, author name and bio, and counts. Never the corpus's labels or
annotations (FakeSV's 真/假/辟谣 verdict, its news-event claim, KuaiRec's categories).

The Label Studio card, the shortcut filter's degraded view and the runner's feed export
all read videos through this one definition, so a task cannot hide its answer in text
that annotators saw and the filter did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curation.core.catalog import Catalog
from curation.core.video_columns import names

VISIBLE_COLUMNS = names(visible=True)  # curation/core/video_columns.py


@dataclass(frozen=True)
class VisibleVideo:
    video_id: str
    caption: str | None = None
    hashtags: tuple[str, ...] = ()
    author_name: str | None = None
    author_bio: str | None = None
    like_count: int | None = None
    collect_count: int | None = None
    comment_count: int | None = None
    share_count: int | None = None
    duration_s: float | None = None


def visible_video(row: dict[str, Any]) -> VisibleVideo:
    """A catalog row (any superset of VISIBLE_COLUMNS) as the app shows it."""
    def text(name: str) -> str | None:
        value = row.get(name)
        return value.strip() or None if isinstance(value, str) else None

    return VisibleVideo(
        video_id=row["video_id"], caption=text("title") or text("description"),
        hashtags=tuple(t for t in row.get("hashtags") or () if t), author_name=text("author_name"),
        author_bio=text("author_bio"), like_count=row.get("like_count"), collect_count=row.get("collect_count"),
        comment_count=row.get("comment_count"), share_count=row.get("share_count"),
        duration_s=row.get("duration_s"))


def video_durations(catalog: Catalog, video_ids: list[str]) -> dict[str, float | None]:
    """Each video's duration in seconds (None where unknown)."""
    return dict(catalog.con.execute("SELECT video_id, duration_s FROM videos WHERE list_contains(?, video_id)",
                                    [list(video_ids)]).fetchall())


def load_visible(catalog: Catalog, video_ids: list[str], staged: str | None = None) -> dict[str, VisibleVideo]:
    """The visible metadata of `video_ids`; an id the catalog does not know shows nothing. `staged`: a
    staged table of the same ids (`video_id`), read by a join, for long lists."""
    columns = ", ".join(VISIBLE_COLUMNS)
    rows = catalog.rows(f"SELECT {columns} FROM videos SEMI JOIN {staged} USING (video_id)") if staged else \
        catalog.rows(f"SELECT {columns} FROM videos WHERE list_contains(?, video_id)", [list(video_ids)])
    found = {r["video_id"]: visible_video(r) for r in rows}
    return {v: found.get(v, VisibleVideo(v)) for v in video_ids}
