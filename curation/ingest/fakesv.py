"""FakeSV (Qi et al., AAAI 2023): the public `data.json` and the gated `data_complete.json`.

Field names of the gated file are known from public code and differ between
releases; each catalog field lists the names it may come under, newest first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.ingest.readers import READERS, Warn, sniff_json, unheard
from curation.ingest.records import RecordError, SourceRecord
from curation.ingest.text import extract_hashtags, strip_html

SOURCE = "FakeSV"

ALIASES: dict[str, tuple[str, ...]] = {
    "native_id": ("video_id",),
    "label": ("annotation",),
    "title": ("title", "description"),
    "like_count": ("count_like",),
    "collect_count": ("count_star",),
    "comment_count": ("count_comment",),
    "share_count": ("count_share",),
    "author_verified": ("is_author_verified", "is_official"),
    "author_bio": ("author_intro", "poster_intro"),
    "author_name": ("author_name", "nickname"),
    "published_at": ("publish_time", "create_time"),
    "duration_s": ("duration",),
}
VERIFIED_INTRO = ("author_verified_intro", "content_verify")


def _first(obj: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if name in obj and obj[name] not in (None, ""):
            return name, obj[name]
    return None, None


def map_fakesv(obj: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    if not isinstance(obj, dict):
        raise RecordError(f"record is not a JSON object ({type(obj).__name__})")
    used: set[str] = set()
    fields: dict[str, Any] = {}
    for target, names in ALIASES.items():
        name, value = _first(obj, names)
        used.update(n for n in names if n in obj)
        if name is not None:
            fields[target] = value
    if isinstance(fields.get("title"), str):
        fields["title"] = strip_html(fields["title"])
        fields["hashtags"] = extract_hashtags(fields["title"]) or None
    claim = obj.get("keywords")
    used.add("keywords")
    if claim is not None and not isinstance(claim, str):
        raise RecordError(f"keywords must be text, got {type(claim).__name__}")
    if claim and claim.strip():
        fields["keywords"] = [claim.strip()]  # the news-event claim, kept whole
    name, verified_intro = _first(obj, VERIFIED_INTRO)
    used.update(VERIFIED_INTRO)
    if fields.get("author_bio") is None and verified_intro is not None:
        fields["author_bio"] = verified_intro
    comments = obj.get("comments") or []
    likes = obj.get("comments_like") or []
    used.update({"comments", "comments_like"})
    if not isinstance(comments, list) or not isinstance(likes, list):
        raise RecordError("comments and comments_like must be lists")
    thread = [{"text": text, "like_count": likes[i] if i < len(likes) else None}
              for i, text in enumerate(comments)]
    extra = {k: v for k, v in obj.items() if k not in used}
    if verified_intro is not None:
        extra["author_verified_intro"] = verified_intro
    if "author_verified" in fields and not isinstance(fields["author_verified"], bool):
        extra["author_verified_level"] = fields["author_verified"]
    return fields, thread, extra


def read_fakesv(path: Path, warn: Warn = unheard) -> Iterator[SourceRecord]:
    for ref, raw, obj, error in READERS[sniff_json(path)](path, warn):
        if error:
            yield SourceRecord(ref, raw, error=error)
            continue
        try:
            fields, comments, extra = map_fakesv(obj)
        except RecordError as exc:
            yield SourceRecord(ref, raw, error=str(exc))
            continue
        yield SourceRecord(ref, raw, fields=fields, comments=comments, extra=extra)
