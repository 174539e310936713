from curation.core.config import KeywordsConfig
from curation.corpus.keywords import build_keyword_set, build_keyword_sets, stop_patterns
from curation.ingest import ingest_path
from tests.conftest import KUAIREC_CSV, small_corpus


def test_kuairec_caption_hashtags_topic_tags_without_boilerplate(catalog):
    ingest_path(catalog, "kuairec", KUAIREC_CSV)
    video = catalog.rows("SELECT * FROM videos WHERE video_id = 'KuaiRec/4'")[0]
    # caption: "#搞笑 #感谢快手我要上热门 #五爱市场 这真是完美搭配啊！", cover text elsewhere
    kws = build_keyword_set(video)
    assert kws.keywords[:2] == ("搞笑", "五爱市场")
    assert kws.origins[:2] == ("hashtag", "hashtag")
    assert not any("热门" in k for k in kws.keywords)
    assert "extracted" in kws.origins  # two hashtags are fewer than three: title words top it up
    assert all(len(k) >= 2 for k in kws.keywords)


def test_platform_boilerplate_and_account_ids_are_dropped():
    video = {"video_id": "KuaiRec/1", "hashtags": ["快手创作者服务中心", "O40300089", "支持快手传播正能量", "vx123456",
                                                 "快手主播创作者中心", "猫咪", "高清视频", "宠物"], "title": None}
    assert build_keyword_set(video, min_keywords=1).keywords == ("猫咪", "宠物")
    pattern = stop_patterns(("^宠物$",))  # [keywords] stop_patterns adds to the packaged ones
    assert build_keyword_set(video, min_keywords=1, boilerplate=pattern).keywords == ("猫咪",)


def test_fakesv_claim_kept_whole_and_segmented():
    video = {"video_id": "FakeSV/1", "keywords": ["100多颗恒星“离奇消失”是被外星人操控了"],
             "hashtags": None, "title": None, "description": None}
    kws = build_keyword_set(video)
    assert kws.keywords[0] == "100多颗恒星“离奇消失”是被外星人操控了"
    assert kws.origins[0] == "source"
    assert {"恒星", "外星人", "操控"} <= set(kws.keywords)
    assert set(kws.origins[1:]) == {"source_segment"}
    assert "是" not in kws.keywords and "了" not in kws.keywords


def test_english_tokenizer_and_empty_input():
    video = {"video_id": "X/1", "title": "The cat meets snow for the first time",
             "hashtags": ["cats"], "keywords": None, "description": None}
    kws = build_keyword_set(video)
    assert kws.keywords[0] == "cats"
    assert {"cat", "meets", "snow"} <= set(kws.keywords) and "the" not in kws.keywords
    empty = build_keyword_set({"video_id": "X/2", "title": None, "description": None,
                               "hashtags": None, "keywords": None})
    assert empty.keywords == () and empty.text == ""


def test_run_stores_sets_and_is_idempotent(tmp_path, catalog):
    fakesv, kuairec = small_corpus(tmp_path / "raw")
    ingest_path(catalog, "fakesv", fakesv)
    ingest_path(catalog, "kuairec", kuairec)
    first = build_keyword_sets(catalog, KeywordsConfig(min_keywords=3, extract_top_k=5, min_token_chars=2))
    assert first["videos"] == 1400 and first["changed"] == 1400
    stored = catalog.rows("SELECT * FROM keyword_sets WHERE video_id = 'KuaiRec/4'")[0]
    assert stored["keywords"][:2] == ["搞笑", "五爱市场"] and stored["run_id"].startswith("keywords-")
    assert len(stored["origins"]) == len(stored["keywords"])
    second = build_keyword_sets(catalog, KeywordsConfig(min_keywords=3, extract_top_k=5, min_token_chars=2))
    assert second["changed"] == 0
    runs = catalog.con.execute("SELECT DISTINCT run_id FROM keyword_sets").fetchall()
    assert len(runs) == 1  # rows of the first run were left alone


def test_on_ray_batches_of_videos_give_the_local_keyword_sets(tmp_path):
    import signal

    from curation.core.catalog import Catalog
    from curation.core.config import ExecutorConfig

    def stuck(*_):
        raise TimeoutError("the Ray job did not finish within 300 s")

    fakesv, kuairec = small_corpus(tmp_path / "raw")
    config = KeywordsConfig(min_keywords=3, extract_top_k=5, min_token_chars=2, stop_patterns=["^搞笑$"])
    stored = {}
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(300)
    try:
        for kind in ("local", "ray"):
            with Catalog(tmp_path / f"{kind}.duckdb") as cat:
                ingest_path(cat, "fakesv", fakesv)
                ingest_path(cat, "kuairec", kuairec)
                executor = ExecutorConfig(kind=kind, shard_dir=str(tmp_path / "shards"))
                # 1,400 videos in batches of 500: the Ray job reads three shards
                counts = build_keyword_sets(cat, config, executor=executor, batch_size=500)
                assert counts["videos"] == counts["changed"] == 1400
                stored[kind] = cat.con.execute("SELECT video_id, keywords, origins, text, text_sha256 "
                                               "FROM keyword_sets ORDER BY video_id").fetchall()
                params = cat.scalar("SELECT params FROM runs WHERE stage = 'keywords'")
                assert f'"executor": "{kind}"' in params and "^搞笑$" in params
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        import ray

        ray.shutdown()
    assert not any((tmp_path / "shards").rglob("*.parquet"))
    assert len(stored["local"]) == 1400 and stored["ray"] == stored["local"]
    # the configured stop pattern reached the Ray workers: no set holds the word
    assert not any("搞笑" in (keywords or []) for _, keywords, *_ in stored["ray"])


def test_local_worker_processes_give_the_sets_of_one_process(tmp_path):
    from dataclasses import replace

    from curation.core.catalog import Catalog

    fakesv, kuairec = small_corpus(tmp_path / "raw")
    config = KeywordsConfig(min_keywords=3, extract_top_k=5, min_token_chars=2, stop_patterns=["^搞笑$"])
    stored = {}
    for workers in (1, 2):
        with Catalog(tmp_path / f"{workers}.duckdb") as cat:
            ingest_path(cat, "fakesv", fakesv)
            ingest_path(cat, "kuairec", kuairec)
            # three batches of 500 videos: with two workers, two processes share them
            counts = build_keyword_sets(cat, replace(config, workers=workers), batch_size=500)
            assert counts["videos"] == counts["changed"] == 1400
            stored[workers] = cat.con.execute("SELECT video_id, keywords, origins, text, text_sha256 "
                                              "FROM keyword_sets ORDER BY video_id").fetchall()
            assert f'"processes": {workers}' in cat.scalar("SELECT params FROM runs WHERE stage = 'keywords'")
    assert len(stored[1]) == 1400 and stored[2] == stored[1]
    assert not any("搞笑" in (keywords or []) for _, keywords, *_ in stored[2])
