import jsonschema
import pytest

from curation.ingest import ingest_path
from tests.conftest import FAKESV_PUBLIC, FIXTURES, load_schema


def _rows_as_json(catalog, table):
    import json
    rows = catalog.rows(f"SELECT * FROM {table}")
    for row in rows:
        for key, value in list(row.items()):
            if hasattr(value, "isoformat"):
                row[key] = value.isoformat() + "Z"
        if table == "videos":
            row.pop("extra") if row.get("extra") is None else row.update(extra=json.loads(row["extra"]))
    return rows


def test_public_data_json_exact_count_and_labels(catalog):
    result = ingest_path(catalog, "fakesv", FAKESV_PUBLIC)
    assert (result.read, result.accepted, result.rejected) == (5495, 5495, 0)
    labels = dict(catalog.con.execute(
        "SELECT label, count(*) FROM videos GROUP BY 1").fetchall())
    assert labels == {"真": 1814, "假": 1810, "辟谣": 1871}
    events = catalog.con.execute(
        "SELECT count(DISTINCT keywords[1]) FROM videos WHERE source = 'FakeSV'").fetchone()[0]
    assert events == 738
    row = catalog.rows("SELECT * FROM videos WHERE video_id = 'FakeSV/3x4zj7hyemptkvm'")[0]
    assert row["keywords"] == ["100多颗恒星“离奇消失”是被外星人操控了"]
    assert row["title"] is None and row["like_count"] is None


def test_public_rows_match_video_schema(catalog):
    ingest_path(catalog, "fakesv", FAKESV_PUBLIC)
    validator = jsonschema.Draft202012Validator(load_schema("video.schema.json"))
    for row in _rows_as_json(catalog, "videos")[:500]:
        validator.validate(row)


def test_gated_format_new_and_old_field_names(catalog):
    result = ingest_path(catalog, "fakesv", FIXTURES / "fakesv_complete.jsonl")
    assert (result.accepted, result.rejected) == (3, 0)
    new = catalog.rows("SELECT * FROM videos WHERE native_id = '7031859613460925736'")[0]
    assert new["video_id"] == "FakeSV/7031859613460925736"
    assert new["title"] == "台风登陆现场画面曝光 #台风 #天气预警"  # highlight markup stripped
    assert new["hashtags"] == ["台风", "天气预警"]
    assert (new["like_count"], new["collect_count"], new["comment_count"], new["share_count"]) == (
        35_000, 1204, 2311, 11_000)
    assert new["author_verified"] is True and new["author_bio"] == "省气象台官方账号"
    assert new["duration_s"] == pytest.approx(31.5)
    assert new["published_at"].year == 2021
    old = catalog.rows("SELECT * FROM videos WHERE native_id = '3x4zj7hyemptkvm'")[0]
    assert old["title"].startswith("专家辟谣") and old["hashtags"] == ["科普"]
    assert (old["like_count"], old["collect_count"]) == (200_000_000, 1234)
    assert old["author_verified"] is True and old["author_bio"].startswith("天文爱好者")
    comments = catalog.rows("SELECT * FROM comments WHERE video_id = "
                            "'FakeSV/7031859613460925736' ORDER BY comment_id")
    assert [c["text"] for c in comments] == ["注意安全", "家里停电了", "这是哪一年的视频？"]
    assert [c["like_count"] for c in comments] == [12_000, 356, 12]
    validator = jsonschema.Draft202012Validator(load_schema("comment.schema.json"))
    for row in _rows_as_json(catalog, "comments"):
        validator.validate(row)
    unverified = catalog.rows("SELECT * FROM videos WHERE native_id = '6853696307836488973'")[0]
    assert unverified["author_verified"] is False and unverified["author_bio"] is None
    assert "<script>" in unverified["title"]  # kept as text; escaping is the renderer's job
