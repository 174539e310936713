"""KuaiRec captions (Gao et al., CIKM 2022): `kuairec_caption_category.csv`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from curation.ingest.readers import read_csv
from curation.ingest.records import SourceRecord
from curation.ingest.text import extract_hashtags, missing_to_none, parse_list_string

SOURCE = "KuaiRec"
LEVELS = ("first", "second", "third")


def read_kuairec(path: Path) -> Iterator[SourceRecord]:
    for ref, raw, row, error in read_csv(path):
        if error:
            yield SourceRecord(ref, raw, error=error)
            continue
        if "video_id" not in row or "caption" not in row:
            yield SourceRecord(ref, raw, error="missing video_id or caption column")
            continue
        caption = missing_to_none(row["caption"])
        tags = extract_hashtags(caption)
        for tag in parse_list_string(missing_to_none(row.get("topic_tag"))):
            if tag not in tags:
                tags.append(tag)
        names = [missing_to_none(row.get(f"{level}_level_category_name")) for level in LEVELS]
        extra = {k: v for k in (f"{lv}_level_category_{part}" for lv in LEVELS
                                for part in ("id", "name"))
                 if (v := missing_to_none(row.get(k))) is not None}
        cover = missing_to_none(row.get("manual_cover_text"))
        if cover is not None:
            extra["manual_cover_text"] = cover
        fields = {
            "native_id": row["video_id"],
            "title": caption,
            "hashtags": tags or None,
            "category": "/".join(n for n in names if n) or None,
        }
        yield SourceRecord(ref, raw, fields=fields, extra=extra)
