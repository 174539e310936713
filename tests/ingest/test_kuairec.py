from curation.ingest import ingest_path
from curation.ingest.readers import read_csv
from tests.conftest import KUAIREC_CSV


def test_bare_carriage_returns_split_no_record():
    raw = KUAIREC_CSV.read_bytes()
    assert raw.count(b"\r") - raw.count(b"\r\n") == 4  # the known quirk is in the shipped file
    ids = [row["video_id"] for _, _, row, err in read_csv(KUAIREC_CSV) if not err]
    assert len(ids) == 10_728 and sorted(map(int, ids)) == list(range(10_728))


def test_ingest_exact_count_hashtags_and_missing_values(catalog):
    result = ingest_path(catalog, "kuairec", KUAIREC_CSV)
    assert (result.read, result.accepted, result.rejected) == (10_728, 10_728, 0)
    with_tags = catalog.con.execute(
        "SELECT count(*) FROM videos WHERE hashtags IS NOT NULL").fetchone()[0]
    assert 5000 < with_tags < 10_728
    unknown = catalog.con.execute(
        "SELECT count(*) FROM videos WHERE category LIKE '%UNKNOWN%' OR category LIKE '%-124%' "
        "OR title = 'UNKNOWN'").fetchone()[0]
    assert unknown == 0
    row = catalog.rows("SELECT * FROM videos WHERE video_id = 'KuaiRec/3'")[0]
    assert row["category"] == "摄影/主题摄影/景物摄影"
    assert row["title"].startswith("我平淡无奇")
    empty = catalog.rows("SELECT * FROM videos WHERE video_id = 'KuaiRec/1'")[0]
    assert empty["title"] is None and empty["category"] == "高新数码"


def test_topic_tag_list_joins_hashtags(tmp_path, catalog):
    csv = tmp_path / "k.csv"
    header = KUAIREC_CSV.read_text(encoding="utf-8").splitlines()[0]
    csv.write_text(header + "\n7,UNKNOWN,今天 #做饭 好开心,\"[美食,做饭]\",1,美食,-124,UNKNOWN,-124,UNKNOWN\n",
                   encoding="utf-8")
    ingest_path(catalog, "kuairec", csv)
    row = catalog.rows("SELECT hashtags, category FROM videos")[0]
    assert row == {"hashtags": ["做饭", "美食"], "category": "美食"}
