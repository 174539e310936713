import pytest

from curation.ingest.records import RecordError, SourceRecord, normalise_record, parse_count
from curation.ingest.text import extract_hashtags, parse_list_string, strip_html


@pytest.mark.parametrize(("text", "expected"), [
    ("1.2w", 12_000), ("3.5万", 35_000), ("2亿", 200_000_000), ("1,234", 1234),
    ("1.2w 赞", 12_000), ("356 赞", 356), (42, 42), ("0", 0), (" 7 ", 7), ("1.5k", 1500),
])
def test_parse_count_units(text, expected):
    assert parse_count(text) == expected


@pytest.mark.parametrize("bad", ["-3", -1, "abc", "1.2x", True, [1]])
def test_parse_count_rejects(bad):
    with pytest.raises(RecordError):
        parse_count(bad)


def test_parse_count_empty_is_unknown():
    assert parse_count(None) is None
    assert parse_count("") is None


def test_hashtags_inline_and_weibo_style():
    assert extract_hashtags("晚饭后 #运动 #健身# 打卡") == ["运动", "健身"]
    assert extract_hashtags("#科普#专家辟谣") == ["科普"]
    assert extract_hashtags(None) == []


def test_strip_html_and_list_string():
    assert strip_html('<em class="keyword">台风</em>来了 &amp; 走了') == "台风来了 & 走了"
    assert parse_list_string("[搞笑,美食]") == ["搞笑", "美食"]
    assert parse_list_string("[]") == []


def test_unknown_values_are_null_never_zero_or_empty():
    record = SourceRecord("f:1", b"", fields={"native_id": "9", "title": "  ", "hashtags": []})
    row, comments = normalise_record("S", record, 1 << 20)
    assert row["video_id"] == "S/9"
    assert row["title"] is None and row["hashtags"] is None and row["like_count"] is None
    assert row["synthetic"] is False and comments == []
