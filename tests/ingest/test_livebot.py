from curation.ingest import ingest_path
from tests.conftest import FIXTURES


def test_tree_to_videos_and_danmaku(catalog):
    result = ingest_path(catalog, "livebot", FIXTURES / "livebot")
    assert (result.read, result.accepted, result.rejected) == (3, 3, 0)
    ids = [r[0] for r in catalog.con.execute("SELECT video_id FROM videos ORDER BY 1").fetchall()]
    assert ids == ["LiveBot/airplane/A380&#39;s first landing", "LiveBot/cat/no danmaku here",
                   "LiveBot/cat/猫咪第一次见到雪"]
    plane = catalog.rows("SELECT * FROM videos WHERE category = 'airplane'")[0]
    assert plane["title"] == "A380's first landing"
    assert plane["native_id"] == "airplane/A380&#39;s first landing"
    assert plane["media_path"].endswith(".flv")
    danmaku = catalog.rows("SELECT text, time_s FROM comments WHERE video_id = ? ORDER BY time_s",
                           [plane["video_id"]])
    assert danmaku == [{"text": "前排", "time_s": 1.5}, {"text": "起飞了起飞了", "time_s": 3.2},
                       {"text": "这个降落, 太稳了", "time_s": 62.0}]
