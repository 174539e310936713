import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from curation.ingest import ingest_path
from curation.ingest.generic import Mapping, MappingError

RECORDS = {
    "a1": {"title": "<em class=\"keyword\">猫</em>咪 #萌宠", "desc": "第一次 #下雪", "likes": "1.2w",
           "author": {"name": "小明", "bio": "爱猫人士"}, "tags": "[萌宠,日常]",
           "comments": [{"text": "好可爱", "like_count": 3}, {"text": "同意", "parent_id": "a1#c0"}],
           "views": 99},
    "b2": {"title": "dog", "desc": "walk", "likes": 5, "author": {"name": "Li", "bio": None},
           "tags": "[]", "comments": [], "views": 1},
}
MAPPING = """
source = "MyCorpus"
format = "{fmt}"
[fields]
native_id = "{id_field}"
title = "title"
description = "desc"
hashtags = {{ from = "title", extract = "hashtags" }}
keywords = {{ from = "tags", extract = "list" }}
like_count = "likes"
author_name = "author.name"
author_bio = "author.bio"
comments = "comments"
[clean]
strip_html = ["title"]
"""


def _write(tmp_path, fmt):
    path = tmp_path / f"corpus.{fmt}"
    if fmt == "json-object":
        path.write_text(json.dumps(RECORDS, ensure_ascii=False), encoding="utf-8")
    else:
        rows = [{"id": k, **v} for k, v in RECORDS.items()]
        if fmt == "jsonl":
            path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
        elif fmt == "json-array":
            path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
        elif fmt == "parquet":
            pq.write_table(pa.Table.from_pylist(
                [{**r, "likes": str(r["likes"]), "author": json.dumps(r["author"]),
                  "comments": json.dumps(r["comments"])}
                 for r in rows]), path)
    mapping = tmp_path / f"{fmt}.toml"
    mapping.write_text(MAPPING.format(fmt=fmt, id_field="$key" if fmt == "json-object" else "id"),
                       encoding="utf-8")
    return path, mapping


@pytest.mark.parametrize("fmt", ["jsonl", "json-array", "json-object"])
def test_formats_give_the_same_rows(tmp_path, catalog, fmt):
    path, mapping = _write(tmp_path, fmt)
    result = ingest_path(catalog, "generic", path, mapping=mapping)
    assert (result.accepted, result.rejected) == (2, 0)
    cat = catalog.rows("SELECT * FROM videos WHERE video_id = 'MyCorpus/a1'")[0]
    assert cat["title"] == "猫咪 #萌宠" and cat["hashtags"] == ["萌宠"]
    assert cat["keywords"] == ["萌宠", "日常"] and cat["like_count"] == 12_000
    assert (cat["author_name"], cat["author_bio"]) == ("小明", "爱猫人士")
    assert json.loads(cat["extra"]) == {"views": 99}  # unmapped fields are kept, not lost
    threads = catalog.rows("SELECT comment_id, parent_id, text FROM comments ORDER BY 1")
    assert threads == [{"comment_id": "MyCorpus/a1#c0", "parent_id": None, "text": "好可爱"},
                       {"comment_id": "MyCorpus/a1#c1", "parent_id": "a1#c0", "text": "同意"}]
    dog = catalog.rows("SELECT keywords, author_bio FROM videos WHERE native_id = 'b2'")[0]
    assert dog == {"keywords": None, "author_bio": None}


def test_csv_and_parquet(tmp_path, catalog):
    csv = tmp_path / "c.csv"
    csv.write_text("vid,caption,likes\n1,hello #x,3\n2,,-124\n", encoding="utf-8")
    mapping = tmp_path / "c.toml"
    mapping.write_text('source = "C"\nformat = "csv"\n[fields]\nnative_id = "vid"\n'
                       'title = "caption"\nhashtags = { from = "caption", extract = "hashtags" }\n'
                       'like_count = "likes"\n[clean]\nmissing = ["", "-124"]\n', encoding="utf-8")
    result = ingest_path(catalog, "generic", csv, mapping=mapping)
    assert (result.accepted, result.rejected) == (2, 0)
    rows = catalog.rows("SELECT native_id, title, hashtags, like_count FROM videos ORDER BY 1")
    assert rows == [{"native_id": "1", "title": "hello #x", "hashtags": ["x"], "like_count": 3},
                    {"native_id": "2", "title": None, "hashtags": None, "like_count": None}]
    path, pmap = _write(tmp_path, "parquet")
    result = ingest_path(catalog, "generic", path, mapping=pmap)
    # author and comments arrive as JSON text in this file: a dotted path cannot reach
    # into text, and text where a list belongs rejects the record with the reason.
    assert result.rejected == 2
    reasons = [r[0] for r in catalog.con.execute("SELECT reason FROM rejects").fetchall()]
    assert all("comments must be a list" in r for r in reasons)


@pytest.mark.parametrize(("spec", "message"), [
    ({"format": "jsonl", "fields": {"native_id": "id"}}, "source"),
    ({"source": "X", "format": "xml", "fields": {"native_id": "id"}}, "format"),
    ({"source": "X", "format": "jsonl", "fields": {"titel": "t", "native_id": "id"}}, "titel"),
    ({"source": "X", "format": "jsonl", "fields": {"title": "t"}}, "native_id"),
])
def test_bad_mapping_is_a_clear_error(spec, message):
    with pytest.raises(MappingError, match=message):
        Mapping.from_dict(spec)
